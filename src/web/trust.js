// Quiver admin UI, Trust view (issue #10): pending tool approvals (quarantined tools with the
// diff of their approved and served definitions, and an Approve button), and per plugin its
// verification report (score, grade, stages, issues) and its trust (effective level, grants,
// isolation, egress allow-list). Same conventions as app.js: every piece of data goes into the
// page as text (textContent / createElement), never parsed as markup; no inline scripts or
// styles (CSP). The helpers come from app.js, so there is one api() and one h().

/** Renders the Trust view into `root`; `ui` holds app.js's helpers. */
export async function renderTrust(root, ui) {
  const { h } = ui;
  const pending = h('section', { className: 'trust-pending', 'aria-labelledby': 'trust-pending-title' });
  const detail = h('section', { className: 'trust-plugin', 'aria-labelledby': 'trust-plugin-title' });
  const plugins = await pluginNames(ui);
  const chooser = h('select', { id: 'trust-plugin-select' }, plugins.map((name) => h('option', { value: name }, name)));
  chooser.addEventListener('change', () => void loadPlugin(detail, chooser.value, ui));
  root.append(
    h('h2', {}, 'Trust'),
    pending,
    h('h3', { id: 'trust-plugin-title' }, 'Plugin trust'),
    plugins.length === 0
      ? h('p', { className: 'muted' }, 'No plugins installed.')
      : h('div', { className: 'filters' }, h('label', { for: 'trust-plugin-select' }, 'Plugin'), chooser),
    detail,
  );
  const reload = async () => {
    await loadPending(pending, ui, reload);
    if (chooser.value) await loadPlugin(detail, chooser.value, ui);
  };
  await reload();
}

async function pluginNames(ui) {
  try {
    const { plugins } = await ui.api('GET', '/api/v1/plugins');
    return plugins.map((plugin) => plugin.name).sort();
  } catch {
    return [];
  }
}

/** A part that could not be read: "not available on this hub" for 404/503, else the error. */
function unavailable(ui, error, what) {
  if (error instanceof ui.ApiError && (error.status === 404 || error.status === 503)) {
    return ui.h('p', { className: 'muted' }, `${what}: ${error.status === 404 ? 'none yet' : 'not available on this hub'} (${error.message})`);
  }
  return ui.errorBox(error);
}

// ---------------------------------------------------------------- pending approvals

async function loadPending(target, ui, reload) {
  const { h } = ui;
  let tools;
  try {
    ({ tools } = await ui.api('GET', '/api/v1/plugins/quarantine'));
  } catch (error) {
    target.replaceChildren(h('h3', { id: 'trust-pending-title' }, 'Pending approvals'), unavailable(ui, error, 'Pending approvals'));
    return;
  }
  target.replaceChildren(
    h('h3', { id: 'trust-pending-title' }, `Pending approvals (${tools.length})`),
    tools.length === 0
      ? h('p', { className: 'muted' }, 'No quarantined tools: every plugin serves the definitions that were approved.')
      : h('div', { className: 'quarantine-list' }, tools.map((tool) => quarantineCard(tool, ui, reload))),
  );
}

function quarantineCard(tool, ui, reload) {
  const { h } = ui;
  const qualified = `${tool.plugin}__${tool.tool}`;
  const feedback = h('div');
  const approve = h('button', { type: 'button', ...(ui.isAdmin() ? {} : { disabled: true, title: 'needs an admin key' }) }, `Approve ${qualified}`);
  approve.addEventListener('click', async () => {
    approve.disabled = true;
    try {
      const result = await ui.api('POST', `/api/v1/plugins/${encodeURIComponent(tool.plugin)}/approvals`, { tools: [tool.tool] });
      ui.toast(`approved ${result.approved.join(', ')} of ${result.plugin}`);
      await reload();
    } catch (error) {
      approve.disabled = false;
      feedback.replaceChildren(ui.errorBox(error));
    }
  });
  const approvedBy = tool.approved
    ? `approved by ${tool.approved.by ?? 'unknown'} (${tool.approved.source ?? 'unknown'}) ${ui.formatDate(tool.approved.at)}`
    : 'never approved';
  return h('article', { className: 'card quarantine', 'data-tool': qualified },
    h('h4', {}, qualified, ' ', ui.badge(tool.kind === 'new' ? 'new tool' : 'changed', 'warn')),
    h('p', {}, tool.reason),
    h('p', { className: 'muted small' }, `${approvedBy}; quarantined ${ui.formatDate(tool.quarantinedAt)}`),
    tool.diff.map((part) => partDiff(part, ui)),
    h('div', { className: 'actions' }, approve),
    feedback,
  );
}

/** One changed part: text as a word diff (removed struck through, added marked), JSON as path rows. */
function partDiff(part, ui) {
  const { h } = ui;
  if (part.kind === 'text') {
    return h('div', { className: 'diff-part', 'data-part': part.part },
      h('h5', {}, part.part),
      h('p', { className: 'diff-text' }, part.changes.map((change) =>
        change.op === 'removed' ? h('del', {}, change.text) : change.op === 'added' ? h('ins', {}, change.text) : change.text)),
    );
  }
  const shown = (value) => (value === undefined ? '–' : JSON.stringify(value));
  return h('div', { className: 'diff-part', 'data-part': part.part },
    h('h5', {}, part.part),
    ui.table(['Path', 'Change', 'Approved', 'Served'], part.changes.map((change) => h('tr', {},
      h('td', {}, h('code', {}, change.path)),
      h('td', {}, ui.badge(change.op, change.op === 'changed' ? 'warn' : change.op)),
      h('td', { className: 'wrap' }, h('code', {}, shown(change.approved))),
      h('td', { className: 'wrap' }, h('code', {}, shown(change.served))),
    ))),
  );
}

// ---------------------------------------------------------------- one plugin

async function loadPlugin(target, name, ui) {
  const { h } = ui;
  target.replaceChildren(ui.loading());
  const path = `/api/v1/plugins/${encodeURIComponent(name)}`;
  const get = (url) => ui.api('GET', url).then((value) => ({ value }), (error) => ({ error }));
  const [trust, egress] = await Promise.all([get(`${path}/trust`), get(`${path}/egress`)]);
  // A plugin never verified has no report: asking for it would only log a 404 in the console.
  const neverVerified = trust.value !== undefined && trust.value.verified?.score == null;
  const report = neverVerified ? { none: true } : await get(`${path}/verification`);
  target.replaceChildren(
    h('div', { className: 'trust-verification' }, h('h4', {}, 'Verification'), report.none ? h('p', { className: 'muted' }, 'Verification report: none yet (not verified)') : report.error ? unavailable(ui, report.error, 'Verification report') : verificationView(report.value, ui)),
    h('div', { className: 'trust-level' }, h('h4', {}, 'Trust'), trust.error ? unavailable(ui, trust.error, 'Trust') : trustView(trust.value, ui)),
    h('div', { className: 'trust-egress' }, h('h4', {}, 'Egress allow-list'), egress.error ? unavailable(ui, egress.error, 'Egress') : egressView(egress.value, ui)),
  );
}

function verificationView(report, ui) {
  const { h } = ui;
  const stages = Object.entries(report.stages ?? {});
  return h('div', {},
    h('dl', { className: 'facts' },
      h('dt', {}, 'Score'), h('dd', { 'data-fact': 'score' }, ui.formatNumber(report.overallScore, 1)),
      h('dt', {}, 'Grade'), h('dd', { 'data-fact': 'grade' }, String(report.grade ?? '–')),
      h('dt', {}, 'Recommended trust'), h('dd', {}, String(report.recommendation?.trustLevel ?? '–')),
      h('dt', {}, 'Version'), h('dd', {}, String(report.version ?? '–')),
      h('dt', {}, 'Verified'), h('dd', {}, ui.formatDate(report.createdAt)),
    ),
    ui.table(['Stage', 'Status', 'Score', 'Issues'], stages.map(([stage, outcome]) => h('tr', {},
      h('th', { scope: 'row' }, stage),
      h('td', {}, ui.badge(String(outcome.status ?? '–'))),
      h('td', { className: 'num' }, ui.formatNumber(outcome.score)),
      h('td', { className: 'wrap' }, (outcome.issues ?? []).length === 0
        ? '–'
        : h('ul', {}, outcome.issues.map((issue) => h('li', {}, ui.badge(String(issue.severity)), ' ', String(issue.message), issue.location ? ` (${issue.location})` : '')))),
    )), 'Stages'),
  );
}

function trustView(view, ui) {
  const { h } = ui;
  return h('dl', { className: 'facts' },
    h('dt', {}, 'Effective level'), h('dd', { 'data-fact': 'level' }, String(view.effective?.level ?? '–')),
    h('dt', {}, 'How'), h('dd', {}, (view.effective?.steps ?? []).join(' → ') || '–'),
    h('dt', {}, 'Verified'), h('dd', {}, view.verified?.level ? `${view.verified.level} (score ${ui.formatNumber(view.verified.score, 1)})` : 'not verified'),
    h('dt', {}, 'Admin grant'), h('dd', {}, view.grant ? `${view.grant.kind} ${view.grant.level ?? ''} by ${view.grant.actor}: ${view.grant.reason}` : 'none'),
    h('dt', {}, 'Isolation'), h('dd', {}, view.isolation ? `${view.isolation.sandbox ? 'sandboxed' : 'not sandboxed'}, network ${view.isolation.network}` : '–'),
    h('dt', {}, 'Runtime score'), h('dd', {}, view.runtime ? ui.formatNumber(view.runtime.score, 1) : '–'),
  );
}

function egressView(egress, ui) {
  const { h } = ui;
  const rules = egress.rules ?? [];
  return h('div', {},
    h('p', { className: 'muted' }, egress.enforced ? 'Enforced by the sandbox.' : 'No allow-list applies at this trust level.'),
    rules.length === 0
      ? h('p', { className: 'muted' }, 'No hosts allowed.')
      : ui.table(['Host', 'Port', 'Reason', 'By'], rules.map((rule) => h('tr', {}, h('td', {}, rule.host), h('td', { className: 'num' }, String(rule.port)), h('td', {}, rule.reason), h('td', {}, rule.actor)))),
  );
}
