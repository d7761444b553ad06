// Quiver admin UI, accuracy over time (issue #13): one line per measure of the daily accuracy
// trend (GET …/analytics/accuracy): hit rate (a called tool was offered), top-1 rate (the
// first ranked tool was the one called) and MRR of the called tool in the ranked offer, so an
// admin sees the ranking improve as Quiver learns from use. Built with createElementNS, every
// value set as text or attribute (never parsed as markup); no inline styles (CSP): the series
// colours are classes in styles.css.

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The measures drawn, in legend order: trend field, label, series class. */
const SERIES = [
  ['hitRate', 'Hit rate', 'series-hit'],
  ['top1Rate', 'Top-1 rate', 'series-top1'],
  ['mrr', 'MRR', 'series-mrr'],
];

/** An SVG element with attributes and children (strings become text nodes). */
function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

const percent = (value) => `${(value * 100).toFixed(1)} %`;

/**
 * The chart of a trend (days with at least one outcome that called a tool), or a note when
 * there is none. Days come from the API already in order.
 */
export function accuracyChart(trend) {
  const days = trend.filter((day) => day.hitRate !== null && day.hitRate !== undefined);
  if (days.length === 0) {
    const note = document.createElement('p');
    note.className = 'muted';
    note.textContent = 'No reported outcomes with tool calls in this window.';
    return note;
  }
  const width = 420;
  const height = 220;
  const pad = { left: 44, right: 12, top: 12, bottom: 46 };
  const plotWidth = width - pad.left - pad.right;
  const x = (index) => pad.left + (days.length === 1 ? plotWidth / 2 : (index * plotWidth) / (days.length - 1));
  const y = (rate) => pad.top + (1 - rate) * (height - pad.top - pad.bottom);
  const grid = [0, 0.5, 1].map((rate) => [
    svg('line', { x1: pad.left, x2: width - pad.right, y1: y(rate), y2: y(rate), class: 'grid' }),
    svg('text', { x: pad.left - 6, y: y(rate) + 4, 'text-anchor': 'end', class: 'axis' }, `${rate * 100}%`),
  ]);
  const labelEvery = Math.max(1, Math.ceil(days.length / 6));
  const dayLabels = days.map((day, index) =>
    index % labelEvery === 0 || index === days.length - 1 ? svg('text', { x: x(index), y: height - 28, 'text-anchor': 'middle', class: 'axis' }, day.day.slice(5)) : null,
  );
  const series = SERIES.map(([field, label, className]) => {
    const points = days.map((day, index) => [index, day[field]]).filter(([, value]) => typeof value === 'number');
    if (points.length === 0) return null;
    const path = points.map(([index, value], i) => `${i === 0 ? 'M' : 'L'}${x(index).toFixed(1)},${y(value).toFixed(1)}`).join(' ');
    return svg('g', { class: className },
      svg('path', { d: path, class: 'line' }),
      points.map(([index, value]) => svg('circle', { cx: x(index), cy: y(value), r: 3, class: 'dot' },
        svg('title', {}, `${days[index].day} ${label}: ${percent(value)} (${days[index].withCalls} outcomes with calls)`))),
    );
  });
  const legend = SERIES.map(([, label, className], index) => {
    const left = pad.left + index * 120;
    return svg('g', { class: className },
      svg('line', { x1: left, x2: left + 18, y1: height - 8, y2: height - 8, class: 'line' }),
      svg('text', { x: left + 24, y: height - 4, class: 'axis' }, label));
  });
  return svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-label': 'Daily accuracy: hit rate, top-1 rate and MRR' },
    svg('title', {}, 'Daily accuracy: hit rate (a called tool was offered), top-1 rate (the first ranked tool was called) and MRR of the called tool'),
    grid, dayLabels, series, legend);
}
