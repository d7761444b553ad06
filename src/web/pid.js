// Quiver admin UI, Documents view (issue #14): a plugin's generated intelligence document for
// review — when and from which sources it was generated, whether its sources changed since
// (stale), every field with the source it came from (provenance), the diff against the
// plugin's current document, a Generate button (MCP discovery, zod, TypeScript, OpenAPI;
// LLM enrichment only from the CLI or API, since it costs money), and Accept / Reject buttons
// (each confirmed) with which generation the current document was accepted from. Same conventions as app.js:
// data goes into the page as text only (createElement / textContent), no inline scripts or
// styles (CSP); the helpers come from app.js.

/** Renders the Documents view into `root`; `ui` holds app.js's helpers. */
export async function renderPid(root, ui) {
  const { h } = ui;
  const detail = h('section', { className: 'pid-plugin', 'aria-labelledby': 'pid-plugin-title' });
  const plugins = await pluginNames(ui);
  const chooser = h('select', { id: 'pid-plugin-select' }, plugins.map((name) => h('option', { value: name }, name)));
  chooser.addEventListener('change', () => void loadPlugin(detail, chooser.value, ui));
  root.append(
    h('h2', {}, 'Generated documents'),
    h('p', { className: 'muted' }, 'Intelligence documents generated from MCP discovery, zod schemas, TypeScript JSDoc, OpenAPI and LLM enrichment, with the source of every field.'),
    plugins.length === 0
      ? h('p', { className: 'muted' }, 'No plugins installed.')
      : h('div', { className: 'filters' }, h('label', { for: 'pid-plugin-select' }, 'Plugin'), chooser),
    detail,
  );
  if (chooser.value) await loadPlugin(detail, chooser.value, ui);
}

async function pluginNames(ui) {
  try {
    const { plugins } = await ui.api('GET', '/api/v1/plugins');
    return plugins.map((plugin) => plugin.name).sort();
  } catch {
    return [];
  }
}

const base = (name) => `/api/v1/plugins/${encodeURIComponent(name)}/intelligence`;

async function loadPlugin(target, name, ui) {
  const { h } = ui;
  target.replaceChildren(ui.loading());
  const generate = h('button', { type: 'button', id: 'pid-generate' }, 'Generate');
  generate.addEventListener('click', async () => {
    generate.disabled = true;
    try {
      const report = await ui.api('POST', `${base(name)}/generate`, {});
      ui.toast(`Generated ${report.toolCount} tool(s) in ${ui.formatNumber(report.durationMs, 1)} ms`);
      await loadPlugin(target, name, ui);
    } catch (error) {
      target.prepend(ui.errorBox(error));
      generate.disabled = false;
    }
  });
  let record;
  let status;
  try {
    // The status first: it says whether there is a document without a 404 to log.
    status = await ui.api('GET', `${base(name)}/generated/status`);
    if (!status.generated) {
      target.replaceChildren(h('h3', { id: 'pid-plugin-title' }, name), h('p', { className: 'muted' }, 'No generated document yet.'), ui.isAdmin() ? generate : '');
      return;
    }
    record = { ...(await ui.api('GET', `${base(name)}/generated`)), stale: status.stale };
  } catch (error) {
    target.replaceChildren(h('h3', { id: 'pid-plugin-title' }, name), ui.errorBox(error));
    return;
  }
  const diff = await ui.api('GET', `${base(name)}/generated/diff`).catch(() => null);
  target.replaceChildren(
    h('h3', { id: 'pid-plugin-title' }, name),
    summary(record, status, ui),
    // replaceChildren takes nodes, not arrays: the buttons go in a row of their own.
    ui.isAdmin() ? h('div', { className: 'pid-actions' }, generate, reviewButtons(target, name, record, ui)) : '',
    provenanceTable(record, ui),
    diffTable(diff, ui),
  );
}

/** Accept and Reject for the shown generation (by id, so a newer one is never taken by mistake); each asks first. */
function reviewButtons(target, name, record, ui) {
  const { h } = ui;
  const action = (verb, question, body) => {
    const button = h('button', { type: 'button', id: `pid-${verb}` }, verb === 'accept' ? 'Accept' : 'Reject');
    button.disabled = record.review !== 'candidate';
    button.addEventListener('click', async () => {
      if (!window.confirm(question)) return;
      button.disabled = true;
      try {
        await ui.api('POST', `${base(name)}/generated/${verb}`, body);
        ui.toast(verb === 'accept' ? `Accepted as the current document of ${name}` : `Rejected the generated document of ${name}`);
        await loadPlugin(target, name, ui);
      } catch (error) {
        target.prepend(ui.errorBox(error));
        button.disabled = false;
      }
    });
    return button;
  };
  const stale = 'This generation is stale: its sources changed since. ';
  return [
    action('accept', `${record.stale ? stale : ''}Make this generated document the current intelligence document of ${name}?`, { generationId: record.id, force: record.stale === true }),
    action('reject', `Reject this generated document of ${name}?`, { generationId: record.id }),
  ];
}

/** Which generation the current document came from, as a line of text. */
function acceptanceText(status) {
  const accepted = status?.accepted;
  if (!accepted?.currentIsAccepted || !accepted.acceptance) return 'not accepted from a generation';
  const { generationId, acceptedBy, acceptedAt } = accepted.acceptance;
  return `generation ${generationId}, accepted by ${acceptedBy} at ${acceptedAt}${accepted.newestIsAccepted ? ' (this one)' : ' (an earlier one)'}`;
}

function summary(record, status, ui) {
  const { h } = ui;
  const stale = status === null ? null : status.stale ? ui.badge(`stale: ${status.staleSources.join(', ') || 'changed'}`, 'warning') : ui.badge('up to date', 'ok');
  const usage = record.llmUsage;
  return h(
    'dl',
    { className: 'pid-summary' },
    h('dt', {}, 'Generated'), h('dd', {}, ui.formatDate(record.generatedAt), ' ', stale),
    h('dt', {}, 'Generation'), h('dd', { className: 'mono' }, `${record.id} (${record.review})`),
    h('dt', {}, 'Current document'), h('dd', { id: 'pid-current' }, acceptanceText(status)),
    h('dt', {}, 'Sources'), h('dd', {}, Object.keys(record.inputHashes).join(', ')),
    h('dt', {}, 'Content hash'), h('dd', { className: 'mono' }, record.contentHash),
    h('dt', {}, 'Time'), h('dd', {}, `${ui.formatNumber(record.durationMs, 1)} ms`),
    usage ? [h('dt', {}, 'LLM'), h('dd', {}, `${usage.calls} call(s), ${usage.cacheHits} cached, ${usage.promptTokens + usage.completionTokens} tokens${usage.costUsd === null ? '' : `, $${usage.costUsd.toFixed(4)}`}`)] : null,
    record.warnings.length > 0 ? [h('dt', {}, 'Warnings'), h('dd', {}, h('ul', {}, record.warnings.map((warning) => h('li', {}, warning))))] : null,
  );
}

/** Each field of the document with its value and source. */
function provenanceTable(record, ui) {
  const { h } = ui;
  const rows = Object.entries(record.provenance)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([path, source]) => h('tr', {}, h('td', { className: 'mono' }, path), h('td', {}, ui.badge(source, `source-${source}`)), h('td', {}, preview(valueAt(record.document, path)))));
  return ui.table(['Field', 'Source', 'Value'], rows, 'Provenance');
}

function diffTable(diff, ui) {
  const { h } = ui;
  if (diff === null) return null;
  if (diff.changes.length === 0) return h('p', { className: 'muted' }, 'The generated document equals the current one.');
  const rows = diff.changes.map((change) =>
    h('tr', {}, h('td', {}, change.kind), h('td', { className: 'mono' }, change.path), h('td', {}, change.source ?? ''), h('td', {}, preview(change.before)), h('td', {}, preview(change.after))),
  );
  return ui.table(['Change', 'Field', 'Source', 'Current', 'Generated'], rows, diff.against === 'none' ? 'Diff (no current document: everything is new)' : 'Diff against the current document');
}

/** The value at a provenance path (`tools.<name>.…` looks tools up by name). */
function valueAt(document, path) {
  const parts = path.split('.');
  let value = document;
  for (let index = 0; index < parts.length && value !== undefined && value !== null; index++) {
    const part = parts[index];
    if (index === 1 && parts[0] === 'tools' && Array.isArray(value)) value = value.find((tool) => tool.name === part);
    else value = value[part];
  }
  return value;
}

function preview(value) {
  if (value === undefined) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}
