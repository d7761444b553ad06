// Quiver admin UI, Rollouts view (issue #11): per plugin with blue-green slots, both slots with
// their version, status, traffic share and health score, the open or latest rollout with the
// current step's health (calls, errors, p50 / p95 of each slot), the history with every
// rollback's reason, and Promote / Roll back / Pause / Resume for admins. Same conventions as
// app.js: data goes into the page as text, never parsed as markup; no inline scripts or
// styles (CSP). The helpers come from app.js.

/** Renders the Rollouts view into `root`; `ui` holds app.js's helpers. */
export async function renderRollouts(root, ui) {
  const { h } = ui;
  const list = h('div', { className: 'rollouts' }, ui.loading());
  root.append(
    h('h2', {}, 'Rollouts'),
    h('p', { className: 'muted' }, 'Start one with quiver plugin upgrade NAME --ref R: the new version takes 10 %, 50 %, then all calls while its health holds.'),
    list,
  );
  const reload = async () => {
    try {
      const { rollouts } = await ui.api('GET', '/api/v1/rollouts');
      list.replaceChildren(...(rollouts.length === 0 ? [h('p', { className: 'muted' }, 'No plugin has been upgraded through a rollout yet.')] : rollouts.map((view) => pluginCard(view, ui, reload))));
    } catch (error) {
      list.replaceChildren(ui.errorBox(error));
    }
  };
  await reload();
}

const percent = (stats) => (stats.calls === 0 ? '–' : `${((stats.failures / stats.calls) * 100).toFixed(1)} %`);
const ms = (value) => (value === null || value === undefined ? '–' : `${Math.round(value)} ms`);

function pluginCard(view, ui, reload) {
  const { h } = ui;
  const rollout = view.rollout;
  const open = rollout && (rollout.status === 'running' || rollout.status === 'paused');
  const heading = h('h3', {}, view.plugin, ' ', rollout ? ui.badge(rollout.status.replace('_', ' '), rollout.status) : '');
  const parts = [heading];
  if (rollout) {
    const step = `step ${rollout.step + 1} of ${rollout.steps.length} (${rollout.steps[rollout.step]} %)`;
    const verifying = rollout.status === 'verifying';
    const where = verifying
      ? `the new version is being verified since ${ui.formatDate(rollout.createdAt)}; it takes no traffic until it passes`
      : open
        ? `${step}, canary traffic ${view.trafficPercent} %, step started ${ui.formatDate(rollout.stepStartedAt)}`
        : `finished ${ui.formatDate(rollout.finishedAt)}`;
    parts.push(h('p', {}, where));
    if (rollout.reason) parts.push(h('p', { className: 'rollout-reason', role: 'note' }, `Why: ${rollout.reason}`));
  }
  parts.push(
    ui.table(
      ['slot', 'version', 'status', 'traffic', 'health'],
      view.slots.map((slot) => h('tr', {}, h('td', {}, slot.slot), h('td', {}, slot.version), h('td', {}, ui.badge(slot.status)), h('td', {}, `${slot.trafficPercent} %`), h('td', {}, slot.healthScore === null ? '–' : `${slot.healthScore}/100`))),
      'Slots',
    ),
  );
  if (view.health) {
    const row = (name, stats) => h('tr', {}, h('td', {}, name), h('td', {}, String(stats.calls)), h('td', {}, percent(stats)), h('td', {}, ms(stats.p50Ms)), h('td', {}, ms(stats.p95Ms)), h('td', {}, String(stats.breakerOpen)));
    parts.push(ui.table(['slot', 'calls', 'errors', 'p50', 'p95', 'breaker refusals'], [row('stable', view.health.stable), row('canary', view.health.canary)], 'This step'));
  }
  if (open && ui.isAdmin()) parts.push(actions(view, ui, reload));
  else if (rollout?.status === 'verifying' && ui.isAdmin()) parts.push(actions(view, ui, reload, { verifying: true }));
  if (view.history.length > 0) {
    parts.push(
      ui.table(
        ['when', 'event', 'what'],
        view.history.slice(0, 20).map((event) => h('tr', {}, h('td', {}, ui.formatDate(event.createdAt)), h('td', {}, ui.badge(event.kind.replace('_', ' '), event.kind)), h('td', {}, event.message))),
        'History',
      ),
    );
  }
  return h('section', { className: 'card rollout', 'aria-label': `Rollout of ${view.plugin}` }, parts);
}

function actions(view, ui, reload, { verifying = false } = {}) {
  const { h } = ui;
  const paused = view.rollout.status === 'paused';
  const button = (label, verb, body) => {
    const node = h('button', { type: 'button' }, label);
    node.addEventListener('click', async () => {
      node.disabled = true;
      try {
        await ui.api('POST', `/api/v1/plugins/${encodeURIComponent(view.plugin)}/rollout/${verb}`, body);
        ui.toast(`${view.plugin}: ${label.toLowerCase()} done`);
        await reload();
      } catch (error) {
        node.disabled = false;
        ui.toast(error.message ?? String(error));
      }
    });
    return node;
  };
  // A version still being verified can only be abandoned.
  if (verifying) return h('div', { className: 'actions' }, button('Roll back', 'rollback', { reason: 'rolled back from the admin UI while verifying' }));
  return h(
    'div',
    { className: 'actions' },
    button('Promote', 'promote'),
    button('Roll back', 'rollback', { reason: 'rolled back from the admin UI' }),
    paused ? button('Resume', 'resume') : button('Pause', 'pause'),
  );
}
