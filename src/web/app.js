// Quiver admin UI (DESIGN §3.9): catalog, plugins, rules, a selection playground and
// analytics, over the HTTP API. A plain ES module with no dependencies and no build step.
// Every piece of data goes into the page through textContent / createElement (never
// parsed as markup), and the page's Content-Security-Policy forbids inline scripts and styles.

import { renderTrust } from './trust.js';
import { renderRollouts } from './rollouts.js';
import { renderPid } from './pid.js';
import { renderUsers } from './users.js';
import { accuracyChart } from './accuracy.js';
import { learningPanel } from './learning.js';
import { oauthCell, oauthReturnNotice } from './oauth.js';

const KEY_STORAGE = 'quiver.apiKey';
const REGISTRY = '/internal/tool-registry';
const TOOL_STATUSES = ['draft', 'active', 'deprecated', 'retired'];
const RULE_TYPES = ['org', 'user', 'page', 'role', 'tier', 'composite'];
const PROVIDERS = ['openai', 'anthropic', 'gemini', 'mcp'];
const TIERS = ['open_source', 'shared_access', 'teams', 'dedicated_vps', 'government'];
const CONDITION_EXAMPLES = {
  org: '{"orgIds": ["acme"]}',
  user: '{"userIds": ["alice"]}',
  page: '{"pages": ["deals*"]}',
  role: '{"roles": ["admin"], "rolesMatch": "any"}',
  tier: '{"tier": {"gte": "teams"}}',
  composite: '{"orgId": "acme", "tier": {"gte": "teams"}}',
};

/** What the page knows: the key (this tab only), who it belongs to, and per-view settings. */
const state = {
  key: null,
  principal: null,
  view: 'catalog',
  catalog: { search: '', pluginName: '', status: '', offset: 0, limit: 25, selectedId: null },
  workspace: 'default',
  analyticsDays: 7,
};

// ---------------------------------------------------------------- DOM helpers

/** Creates an element; strings among `children` become text nodes, never markup. */
function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  setProps(node, props);
  appendAll(node, children);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Creates an SVG element with attributes; strings among `children` become text nodes. */
function s(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  appendAll(node, children);
  return node;
}

function setProps(node, props) {
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else if (name === 'className') node.className = value;
    else if (name === 'value') node.value = String(value);
    else if (name === 'checked' || name === 'selected' || name === 'disabled') node[name] = true;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
}

function appendAll(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces a node's content; null, undefined and false children are left out. */
function fill(target, ...children) {
  target.replaceChildren();
  appendAll(target, children);
}

/** A labelled form field: the label is tied to the control by id. */
function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 10)}`;
  control.id = id;
  return h('div', { className: 'field' }, h('label', { for: id }, label), control, hint ? h('small', { className: 'muted' }, hint) : null);
}

function select(name, options, current) {
  return h(
    'select',
    { name },
    options.map((option) => {
      const [value, label] = Array.isArray(option) ? option : [option, option];
      return h('option', { value, selected: value === current }, label);
    }),
  );
}

function table(headers, rows, caption) {
  // In its own box: a table wider than the screen scrolls there, never the page (400 px phones).
  return h('div', { className: 'table-box' },
    h(
      'table',
      {},
      caption ? h('caption', {}, caption) : null,
      h('thead', {}, h('tr', {}, headers.map((header) => h('th', { scope: 'col' }, header)))),
      h('tbody', {}, rows),
    ),
  );
}

function badge(text, kind = text) {
  return h('span', { className: `badge badge-${String(kind).replace(/[^a-z_-]/gi, '')}` }, text);
}

function json(value) {
  return h('pre', { className: 'json' }, JSON.stringify(value, null, 2));
}

function formatNumber(value, digits = 0) {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  return Number(value).toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

function formatPercent(fraction) {
  return fraction === null || fraction === undefined ? '–' : `${formatNumber(fraction * 100, 1)} %`;
}

function formatDate(text) {
  if (!text) return '–';
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? String(text) : date.toLocaleString();
}

function loading() {
  return h('p', { className: 'muted', 'aria-busy': 'true' }, 'Loading…');
}

/** A short message in the status line (screen readers announce it). */
function toast(message) {
  const node = document.getElementById('toast');
  node.textContent = message;
  node.classList.add('shown');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => node.classList.remove('shown'), 4000);
}

function isAdmin() {
  return Boolean(state.principal?.scopes?.includes('admin'));
}

// ---------------------------------------------------------------- API

/** An error answer of the API (`{error: {code, message, details}}`) or a network failure. */
class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** Calls the API with the key; resolves to the JSON body (null for 204), throws ApiError. */
async function api(method, path, body) {
  const headers = { authorization: `Bearer ${state.key}`, accept: 'application/json' };
  const init = { method, headers };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    throw new ApiError(0, 'network_error', `cannot reach Quiver: ${error.message}`);
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = data && typeof data === 'object' ? data.error : undefined;
    throw new ApiError(
      response.status,
      error?.code ?? `http_${response.status}`,
      error?.message ?? `${response.status} ${response.statusText}`,
      error?.details,
    );
  }
  return data;
}

/** A visible error: code, message, and the useful parts of details (step, errors, issues). */
function errorBox(error) {
  const box = h('div', { className: 'error', role: 'alert' });
  const code = error instanceof ApiError ? error.code : 'error';
  box.append(h('strong', {}, code), ' ', error.message ?? String(error));
  const details = error instanceof ApiError ? error.details : undefined;
  if (details && typeof details === 'object') {
    if (details.step) box.append(h('p', {}, 'Failed step: ', h('code', {}, String(details.step))));
    if (details.reason && !String(error.message).includes(String(details.reason))) box.append(h('p', {}, 'Reason: ', String(details.reason)));
    const lists = [['Errors', details.errors], ['Warnings', details.warnings]];
    for (const [title, items] of lists) {
      if (Array.isArray(items) && items.length > 0) box.append(h('p', {}, `${title}:`), h('ul', {}, items.map((item) => h('li', {}, String(item)))));
    }
    if (Array.isArray(details.issues) && details.issues.length > 0) {
      box.append(h('ul', {}, details.issues.map((issue) => h('li', {}, h('code', {}, String(issue.path || '(body)')), ': ', String(issue.message)))));
    }
    if (details.requestId) box.append(h('p', { className: 'muted' }, `request id ${details.requestId}`));
  }
  if (error instanceof ApiError && error.status === 401 && state.principal) {
    box.append(h('p', {}, h('button', { type: 'button', className: 'secondary', onclick: forgetKey }, 'Sign in with another key')));
  }
  return box;
}

/** Runs `work`, rendering a failure into `target` instead of throwing. */
async function guarded(target, work) {
  try {
    await work();
  } catch (error) {
    target.replaceChildren(errorBox(error));
  }
}

// ---------------------------------------------------------------- sign-in

async function signIn(key) {
  state.key = key;
  const { principal } = await api('GET', '/api/v1/whoami');
  state.principal = principal;
  sessionStorage.setItem(KEY_STORAGE, key);
  document.getElementById('who').textContent = `${principal.name} · ${principal.scopes.join(', ')}`;
  document.getElementById('identity').hidden = false;
  document.getElementById('login').hidden = true;
  document.getElementById('app').hidden = false;
  const fromHash = location.hash.slice(1);
  showView(VIEWS[fromHash] ? fromHash : state.view);
}

function forgetKey() {
  sessionStorage.removeItem(KEY_STORAGE);
  state.key = null;
  state.principal = null;
  document.getElementById('view').replaceChildren();
  document.getElementById('identity').hidden = true;
  document.getElementById('app').hidden = true;
  document.getElementById('login').hidden = false;
  document.getElementById('api-key').value = '';
  document.getElementById('api-key').focus();
}

async function onLoginSubmit(event) {
  event.preventDefault();
  const input = document.getElementById('api-key');
  const errorTarget = document.getElementById('login-error');
  errorTarget.replaceChildren();
  const key = input.value.trim();
  if (!key) return;
  try {
    await signIn(key);
    input.value = '';
  } catch (error) {
    state.key = null;
    sessionStorage.removeItem(KEY_STORAGE);
    errorTarget.replaceChildren(errorBox(error));
  }
}

// ---------------------------------------------------------------- tabs

const VIEWS = {
  catalog: renderCatalog,
  plugins: renderPlugins,
  rules: renderRules,
  playground: renderPlayground,
  analytics: renderAnalytics,
  // Trust view (issue #10) lives in trust.js; it gets this module's helpers.
  trust: (root) => renderTrust(root, { api, h, table, badge, formatDate, formatNumber, loading, errorBox, toast, isAdmin, ApiError }),
  // Blue-green rollouts (issue #11) live in rollouts.js.
  rollouts: (root) => renderRollouts(root, { api, h, table, badge, formatDate, formatNumber, loading, errorBox, toast, isAdmin, ApiError }),
  // Generated intelligence documents (issue #14) live in pid.js.
  documents: (root) => renderPid(root, { api, h, table, badge, formatDate, formatNumber, loading, errorBox, toast, isAdmin, ApiError }),
  // Accounts of the built-in authorization server (issue #27) live in users.js.
  users: (root) => renderUsers(root, { api, h, table, badge, field, formatDate, loading, errorBox, toast, isAdmin, ApiError }),
};

function tabs() {
  return [...document.querySelectorAll('[role="tab"]')];
}

function showView(name) {
  state.view = name;
  for (const tab of tabs()) {
    const active = tab.dataset.view === name;
    tab.setAttribute('aria-selected', String(active));
    tab.tabIndex = active ? 0 : -1;
  }
  const panel = document.getElementById('view');
  panel.setAttribute('aria-labelledby', `tab-${name}`);
  if (location.hash !== `#${name}`) history.replaceState(null, '', `#${name}`);
  const root = h('div', { className: `view view-${name}` });
  panel.replaceChildren(root);
  void guarded(root, () => VIEWS[name](root));
}

/** Arrow keys, Home and End move between tabs (WAI-ARIA tabs pattern). */
function onTabKey(event) {
  const list = tabs();
  const index = list.indexOf(event.target);
  if (index < 0) return;
  const moves = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: list.length - 1 };
  if (!(event.key in moves)) return;
  event.preventDefault();
  const next = list[(moves[event.key] + list.length) % list.length];
  next.focus();
  showView(next.dataset.view);
}

// ---------------------------------------------------------------- catalog

async function pluginNames() {
  try {
    const { plugins } = await api('GET', '/api/v1/plugins');
    return plugins.map((plugin) => plugin.name).sort();
  } catch {
    return [];
  }
}

async function renderCatalog(root) {
  const filters = state.catalog;
  const names = await pluginNames();
  const search = h('input', { type: 'search', name: 'search', value: filters.search, placeholder: 'name or description' });
  const plugin = select('pluginName', [['', 'All plugins'], ...names], filters.pluginName);
  const status = select('status', [['', 'Any status'], ...TOOL_STATUSES], filters.status);
  const listTarget = h('div', { className: 'tool-list' });
  const detailTarget = h('div', { className: 'tool-detail', 'aria-live': 'polite' });
  const apply = () => {
    Object.assign(filters, { search: search.value.trim(), pluginName: plugin.value, status: status.value, offset: 0 });
    void loadTools(listTarget, detailTarget);
  };
  const form = h(
    'form',
    { className: 'filters', role: 'search', onsubmit: (event) => (event.preventDefault(), apply()) },
    field('Search', search),
    field('Plugin', plugin),
    field('Status', status),
    h('button', { type: 'submit' }, 'Filter'),
  );
  plugin.addEventListener('change', apply);
  status.addEventListener('change', apply);
  root.append(h('h2', {}, 'Catalog'), form, h('div', { className: 'split' }, listTarget, detailTarget));
  await loadTools(listTarget, detailTarget);
  if (filters.selectedId) void showToolDetail(detailTarget, filters.selectedId, () => loadTools(listTarget, detailTarget));
}

function toolQuery(filters) {
  const params = new URLSearchParams({ limit: String(filters.limit), offset: String(filters.offset) });
  if (filters.search) params.set('search', filters.search);
  if (filters.pluginName) params.set('pluginName', filters.pluginName);
  if (filters.status) params.set('status', filters.status);
  return params;
}

async function loadTools(target, detailTarget) {
  const filters = state.catalog;
  target.replaceChildren(loading());
  await guarded(target, async () => {
    const page = await api('GET', `${REGISTRY}/tools?${toolQuery(filters)}`);
    const reload = () => loadTools(target, detailTarget);
    const rows = page.tools.map((tool) =>
      h(
        'tr',
        { className: tool.id === filters.selectedId ? 'selected' : '' },
        h('td', {}, h('button', {
          type: 'button',
          className: 'link',
          onclick: () => {
            filters.selectedId = tool.id;
            for (const row of target.querySelectorAll('tr.selected')) row.classList.remove('selected');
            markSelectedRow(target, tool.id);
            void showToolDetail(detailTarget, tool.id, reload);
          },
          'data-tool-id': tool.id,
        }, tool.qualifiedName)),
        h('td', {}, badge(tool.status)),
        h('td', { className: 'num' }, `v${tool.version}`),
        h('td', {}, tool.categoryName ?? '–'),
        h('td', {}, badge(tool.embeddingStatus)),
      ),
    );
    const empty = page.tools.length === 0 ? h('p', { className: 'muted' }, 'No tools match these filters.') : null;
    fill(
      target,
      table(['Qualified name', 'Status', 'Version', 'Category', 'Embedding'], rows, `${formatNumber(page.total)} tools`),
      empty,
      pager(page, (offset) => {
        filters.offset = offset;
        void reload();
      }),
    );
  });
}

function markSelectedRow(target, toolId) {
  const button = target.querySelector(`button[data-tool-id="${CSS.escape(toolId)}"]`);
  button?.closest('tr')?.classList.add('selected');
}

function pager(page, go) {
  const first = page.total === 0 ? 0 : page.offset + 1;
  const last = Math.min(page.offset + page.limit, page.total);
  return h(
    'div',
    { className: 'pager' },
    h('button', { type: 'button', className: 'secondary', disabled: page.offset === 0, onclick: () => go(Math.max(0, page.offset - page.limit)) }, '‹ Previous'),
    h('span', {}, `${first}–${last} of ${page.total}`),
    h('button', { type: 'button', className: 'secondary', disabled: last >= page.total, onclick: () => go(page.offset + page.limit) }, 'Next ›'),
  );
}

async function showToolDetail(target, toolId, afterChange) {
  target.replaceChildren(loading());
  await guarded(target, async () => {
    const [{ tool }, { versions }] = await Promise.all([
      api('GET', `${REGISTRY}/tools/${encodeURIComponent(toolId)}`),
      api('GET', `${REGISTRY}/tools/${encodeURIComponent(toolId)}/versions`),
    ]);
    target.replaceChildren(
      h('article', { className: 'card', 'aria-labelledby': 'tool-title' },
        h('h3', { id: 'tool-title' }, tool.qualifiedName),
        h('p', {}, badge(tool.status), ' ', badge(`v${tool.version}`, 'version'), ' ', badge(`embedding ${tool.embeddingStatus}`, tool.embeddingStatus),
          tool.needsReview ? [' ', badge('needs review', 'warn')] : null),
        h('p', { className: 'description' }, tool.description || '(no description)'),
        h('dl', { className: 'facts' },
          h('dt', {}, 'Plugin'), h('dd', {}, tool.pluginName ?? '–'),
          h('dt', {}, 'Category'), h('dd', {}, tool.categoryName ?? '–'),
          h('dt', {}, 'Schema version'), h('dd', {}, tool.schemaVersion),
          h('dt', {}, 'Updated'), h('dd', {}, formatDate(tool.updatedAt)),
        ),
        h('h4', {}, 'Parameters'),
        json(tool.parameters),
        h('h4', {}, 'Version history'),
        versionTable(versions),
        rollbackForm(tool, versions, async () => {
          await showToolDetail(target, toolId, afterChange);
          await afterChange();
        }),
      ),
      learningPanel(tool, { api, h, table, badge, formatDate, loading, errorBox, toast, isAdmin }),
    );
  });
}

function versionTable(versions) {
  const rows = versions.map((version) =>
    h('tr', {},
      h('td', { className: 'num' }, `v${version.version}`),
      h('td', {}, formatDate(version.createdAt)),
      h('td', {}, version.createdBy ?? '–'),
      h('td', {}, version.changedFields.length ? version.changedFields.map((name) => h('code', { className: 'chip' }, name)) : 'created'),
      h('td', {}, version.changeReason ?? ''),
    ),
  );
  return table(['Version', 'When', 'By', 'Changed fields', 'Reason'], rows);
}

function rollbackForm(tool, versions, done) {
  const targets = versions.filter((version) => version.version !== tool.version);
  const result = h('div');
  if (targets.length === 0) return h('p', { className: 'muted' }, 'Only one version: nothing to roll back to.');
  const choice = select('version', targets.map((version) => [String(version.version), `v${version.version} (${formatDate(version.createdAt)})`]));
  const reason = h('input', { type: 'text', name: 'reason', maxlength: '1000', placeholder: 'optional' });
  const submit = h('button', { type: 'submit', disabled: !isAdmin(), title: isAdmin() ? null : 'needs an admin key' }, 'Roll back');
  const form = h('form', {
    className: 'inline',
    onsubmit: async (event) => {
      event.preventDefault();
      if (!window.confirm(`Roll ${tool.qualifiedName} back to version ${choice.value}? This writes a new version.`)) return;
      submit.disabled = true;
      try {
        const body = { version: Number(choice.value), ...(reason.value.trim() ? { changeReason: reason.value.trim() } : {}) };
        const { tool: restored } = await api('POST', `${REGISTRY}/tools/${encodeURIComponent(tool.id)}/rollback`, body);
        toast(`${restored.qualifiedName} restored to v${choice.value} (now v${restored.version})`);
        await done();
      } catch (error) {
        result.replaceChildren(errorBox(error));
        submit.disabled = false;
      }
    },
  }, field('Roll back to', choice), field('Reason', reason), submit);
  return h('div', {}, h('h4', {}, 'Rollback'), form, result);
}

// ---------------------------------------------------------------- plugins

function sourceText(plugin) {
  const source = plugin.source ?? {};
  const where = source.url ?? source.spec ?? source.path ?? '';
  const ref = source.ref ? `#${source.ref}` : '';
  return `${plugin.sourceType}${where ? `: ${where}${ref}` : ''}`;
}

async function workspaceNames() {
  try {
    const { workspaces } = await api('GET', '/api/v1/workspaces');
    const names = workspaces.map((workspace) => workspace.name);
    return names.length > 0 ? names : ['default'];
  } catch {
    return ['default'];
  }
}

async function renderPlugins(root) {
  const workspaces = await workspaceNames();
  if (!workspaces.includes(state.workspace)) state.workspace = workspaces[0];
  const workspace = select('workspace', workspaces, state.workspace);
  const listTarget = h('div');
  workspace.addEventListener('change', () => {
    state.workspace = workspace.value;
    void loadPlugins(listTarget);
  });
  root.append(
    h('h2', {}, 'Plugins'),
    // Back from a remote plugin's sign-in (Connect, issue #27): say how it went.
    oauthReturnNotice({ h }) ?? '',
    h('div', { className: 'filters' }, field('Workspace', workspace, 'enable / disable applies to this workspace')),
    listTarget,
    addPluginForm(() => loadPlugins(listTarget)),
  );
  await loadPlugins(listTarget);
}

async function loadPlugins(target) {
  target.replaceChildren(loading());
  await guarded(target, async () => {
    const { plugins } = await api('GET', '/api/v1/plugins');
    const details = await Promise.all(
      plugins.map((plugin) => api('GET', `/api/v1/plugins/${encodeURIComponent(plugin.name)}`).catch(() => null)),
    );
    const rows = plugins.map((plugin, index) => pluginRow(plugin, details[index], () => loadPlugins(target)));
    target.replaceChildren(
      plugins.length === 0
        ? h('p', { className: 'muted' }, 'No plugins installed yet. Add one below, or sync a catalog with quiver sync.')
        : table(['Name', 'Version', 'Source', 'Status', 'Tools', `In ${state.workspace}`, 'Actions'], rows),
    );
  });
}

/** The host folders granted to a plugin (issue #26), with who granted them; none, nothing. */
function hostPaths(detail) {
  const mounts = detail?.mounts ?? [];
  if (mounts.length === 0) return null;
  const text = mounts.map((mount) => `${mount.path} (${mount.mode === 'rw' ? 'read-write' : 'read-only'}, by ${mount.actor})`).join('; ');
  return h('div', { className: 'muted small', title: 'quiver plugin mount / unmount' }, `Host paths: ${text}`);
}

function pluginRow(plugin, detail, reload) {
  const enablement = detail?.enablements?.find((entry) => entry.workspace === state.workspace && entry.project === null);
  const enabled = enablement?.enabled === true;
  const feedback = h('div');
  const change = async (action) => {
    try {
      await api('POST', `/api/v1/plugins/${encodeURIComponent(plugin.name)}/${action}`, { workspace: state.workspace });
      toast(`${plugin.name} ${action}d in ${state.workspace}`);
      await reload();
    } catch (error) {
      feedback.replaceChildren(errorBox(error));
    }
  };
  const adminOnly = isAdmin() ? {} : { disabled: true, title: 'needs an admin key' };
  return h('tr', {},
    h('th', { scope: 'row' }, plugin.name, plugin.description ? h('div', { className: 'muted small' }, plugin.description) : null, hostPaths(detail)),
    h('td', {}, plugin.version ?? '–'),
    h('td', { className: 'wrap' }, sourceText(plugin)),
    h('td', {}, badge(plugin.status)),
    h('td', { className: 'num' }, detail ? formatNumber(detail.toolCount) : '–'),
    h('td', {}, enablement ? badge(enabled ? 'enabled' : 'disabled') : h('span', { className: 'muted' }, 'not set')),
    h('td', {},
      enabled
        ? h('button', { type: 'button', className: 'secondary', onclick: () => change('disable'), ...adminOnly }, 'Disable')
        : h('button', { type: 'button', onclick: () => change('enable'), ...adminOnly }, 'Enable'),
      feedback,
      oauthCell(plugin, { api, h, badge, formatDate, errorBox, toast, reload }),
    ),
  );
}

function addPluginForm(afterInstall) {
  const source = h('input', { type: 'text', name: 'source', required: true, placeholder: 'https://github.com/org/repo.git, npm:pkg, /path, market:name' });
  const name = h('input', { type: 'text', name: 'name', maxlength: '64', placeholder: 'optional' });
  const ref = h('input', { type: 'text', name: 'ref', maxlength: '255', placeholder: 'optional (git branch, tag or commit)' });
  const submit = h('button', { type: 'submit', disabled: !isAdmin(), title: isAdmin() ? null : 'needs an admin key' }, 'Install');
  const result = h('div', { 'aria-live': 'polite' });
  const form = h('form', {
    className: 'card',
    onsubmit: async (event) => {
      event.preventDefault();
      const body = { source: source.value.trim(), workspace: state.workspace };
      if (name.value.trim()) body.name = name.value.trim();
      if (ref.value.trim()) body.ref = ref.value.trim();
      submit.disabled = true;
      result.replaceChildren(h('p', { className: 'muted', 'aria-busy': 'true' }, 'Installing… (fetching, discovering tools, syncing the catalog)'));
      try {
        const report = await api('POST', '/api/v1/plugins', body);
        result.replaceChildren(installReport(report));
        await afterInstall();
      } catch (error) {
        result.replaceChildren(errorBox(error));
      } finally {
        submit.disabled = !isAdmin();
      }
    },
  },
  h('h3', {}, 'Add plugin'),
  h('div', { className: 'grid' }, field('Source', source), field('Name', name), field('Ref', ref)),
  submit,
  result);
  return form;
}

function installReport(report) {
  const tools = report.tools ?? {};
  const lines = [
    ['Inserted', tools.inserted], ['Updated', tools.updated], ['Revived', tools.revived], ['Deleted', tools.deleted],
  ].filter(([, list]) => Array.isArray(list) && list.length > 0);
  return h('div', { className: 'success', role: 'status' },
    h('p', {}, h('strong', {}, `Installed ${report.plugin.name}`), ` ${report.plugin.version ?? ''}`,
      report.enabledIn ? ` — enabled in ${report.enabledIn.workspace}${report.enabledIn.project ? `/${report.enabledIn.project}` : ''}` : ''),
    h('p', {}, `${formatNumber(tools.total)} tools (${formatNumber(tools.unchanged)} unchanged)`),
    lines.map(([label, list]) => h('p', {}, `${label}: `, list.map((toolName) => h('code', { className: 'chip' }, toolName)))),
    Array.isArray(report.warnings) && report.warnings.length > 0
      ? [h('p', {}, 'Warnings:'), h('ul', {}, report.warnings.map((warning) => h('li', {}, warning)))]
      : null,
  );
}

// ---------------------------------------------------------------- rules

function ruleTarget(rule) {
  if (rule.toolId) return `tool ${rule.toolId}`;
  if (rule.categoryId) return `category ${rule.categoryId}`;
  if (rule.pluginId) return `plugin ${rule.pluginId}`;
  return 'every tool';
}

async function renderRules(root) {
  const rulesTarget = h('div');
  const mappingsTarget = h('div');
  root.append(
    h('h2', {}, 'Visibility rules'),
    rulesTarget,
    ruleForm(() => loadRules(rulesTarget)),
    h('h2', {}, 'Page mappings'),
    mappingsTarget,
  );
  await Promise.all([loadRules(rulesTarget), loadMappings(mappingsTarget)]);
}

async function loadRules(target) {
  target.replaceChildren(loading());
  await guarded(target, async () => {
    const { rules } = await api('GET', `${REGISTRY}/visibility-rules?includeInactive=true`);
    if (rules.length === 0) {
      target.replaceChildren(h('p', { className: 'muted' }, 'No visibility rules: every enabled tool is visible.'));
      return;
    }
    const rows = rules.map((rule) => {
      const feedback = h('div');
      const remove = async () => {
        if (!window.confirm(`Delete this ${rule.ruleType} ${rule.effect} rule?`)) return;
        try {
          await api('DELETE', `${REGISTRY}/visibility-rules/${encodeURIComponent(rule.id)}`);
          toast('Rule deleted');
          await loadRules(target);
        } catch (error) {
          feedback.replaceChildren(errorBox(error));
        }
      };
      return h('tr', { className: rule.isActive ? '' : 'inactive' },
        h('td', {}, rule.ruleType),
        h('td', {}, badge(rule.effect)),
        h('td', { className: 'wrap' }, ruleTarget(rule)),
        h('td', {}, h('code', { className: 'wrap' }, JSON.stringify(rule.conditions))),
        h('td', { className: 'num' }, String(rule.priority)),
        h('td', {}, rule.isActive ? 'yes' : 'no'),
        h('td', {}, rule.description),
        h('td', {}, h('button', { type: 'button', className: 'danger', onclick: remove, disabled: !isAdmin(), 'aria-label': `Delete ${rule.ruleType} rule ${rule.id}` }, 'Delete'), feedback),
      );
    });
    target.replaceChildren(table(['Type', 'Effect', 'Target', 'Conditions', 'Priority', 'Active', 'Description', ''], rows));
  });
}

function ruleForm(afterCreate) {
  const ruleType = select('ruleType', RULE_TYPES, 'org');
  const effect = select('effect', ['allow', 'deny'], 'deny');
  const targetKind = select('targetKind', [['', 'Every tool'], ['toolId', 'Tool id'], ['categoryId', 'Category id'], ['pluginId', 'Plugin id']], '');
  const targetId = h('input', { type: 'text', name: 'targetId', placeholder: 'UUID', spellcheck: 'false' });
  const conditions = h('textarea', { name: 'conditions', rows: '3', spellcheck: 'false' });
  conditions.value = CONDITION_EXAMPLES.org;
  const priority = h('input', { type: 'number', name: 'priority', value: '0', step: '1' });
  const description = h('input', { type: 'text', name: 'description', maxlength: '2000' });
  const result = h('div', { 'aria-live': 'polite' });
  ruleType.addEventListener('change', () => {
    if (Object.values(CONDITION_EXAMPLES).includes(conditions.value)) conditions.value = CONDITION_EXAMPLES[ruleType.value];
  });
  return h('form', {
    className: 'card',
    onsubmit: async (event) => {
      event.preventDefault();
      let parsed;
      try {
        parsed = JSON.parse(conditions.value);
      } catch (error) {
        result.replaceChildren(errorBox(new ApiError(0, 'invalid_json', `Conditions are not valid JSON: ${error.message}`)));
        return;
      }
      const body = { ruleType: ruleType.value, effect: effect.value, conditions: parsed, priority: Number(priority.value || 0) };
      if (targetKind.value) body[targetKind.value] = targetId.value.trim();
      if (description.value.trim()) body.description = description.value.trim();
      try {
        await api('POST', `${REGISTRY}/visibility-rules`, body);
        result.replaceChildren();
        toast('Rule created');
        await afterCreate();
      } catch (error) {
        result.replaceChildren(errorBox(error));
      }
    },
  },
  h('h3', {}, 'New rule'),
  h('div', { className: 'grid' },
    field('Rule type', ruleType), field('Effect', effect), field('Target', targetKind), field('Target id', targetId),
    field('Priority', priority, 'higher is evaluated first'), field('Description', description)),
  field('Conditions (JSON)', conditions, 'e.g. {"tier": {"gte": "teams"}} or {"pages": ["deals*"]}'),
  h('button', { type: 'submit', disabled: !isAdmin(), title: isAdmin() ? null : 'needs an admin key' }, 'Create rule'),
  result);
}

async function loadMappings(target) {
  target.replaceChildren(loading());
  await guarded(target, async () => {
    const { mappings } = await api('GET', `${REGISTRY}/page-mappings`);
    target.replaceChildren(
      mappings.length === 0
        ? h('p', { className: 'muted' }, 'No page mappings.')
        : table(['Page pattern', 'Category', 'Plugin', 'Priority'], mappings.map((mapping) =>
          h('tr', {},
            h('td', {}, h('code', {}, mapping.pagePattern)),
            h('td', {}, mapping.categoryName),
            h('td', {}, mapping.pluginName ?? '–'),
            h('td', { className: 'num' }, String(mapping.priority)),
          ))),
    );
  });
}

// ---------------------------------------------------------------- playground

function renderPlayground(root) {
  const query = h('textarea', { name: 'query', rows: '2', required: true, placeholder: 'What the user asked, e.g. "what is the weather in Paris tomorrow"' });
  const k = h('input', { type: 'number', name: 'k', value: '7', min: '1', max: '50' });
  const page = h('input', { type: 'text', name: 'page', placeholder: 'optional, e.g. deals/pipeline' });
  const org = h('input', { type: 'text', name: 'org', placeholder: 'optional' });
  const tier = select('tier', [['', '(none)'], ...TIERS], '');
  const provider = select('provider', PROVIDERS, 'openai');
  const result = h('div', { className: 'playground-result', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', disabled: !isAdmin(), title: isAdmin() ? null : 'needs an admin key' }, 'Select tools');
  const form = h('form', {
    className: 'card',
    onsubmit: async (event) => {
      event.preventDefault();
      const context = {};
      if (page.value.trim()) context.page = page.value.trim();
      if (org.value.trim()) context.orgId = org.value.trim();
      if (tier.value) context.tier = tier.value;
      const body = { query: query.value, k: Number(k.value || 7), provider: provider.value, context };
      result.replaceChildren(loading());
      try {
        result.replaceChildren(selectionResult(await api('POST', `${REGISTRY}/test-selection`, body)));
      } catch (error) {
        result.replaceChildren(errorBox(error));
      }
    },
  },
  field('Query', query),
  h('div', { className: 'grid' }, field('k', k), field('Page', page), field('Organisation', org), field('Tier', tier), field('Provider', provider)),
  submit);
  root.append(h('h2', {}, 'Selection playground'), h('p', { className: 'muted' }, 'Runs the selection pipeline without logging an event.'), form, result);
  query.focus();
}

function selectionResult(selection) {
  const meta = selection.metadata;
  const rows = selection.tools.map((tool, index) =>
    h('tr', {},
      h('td', { className: 'num' }, String(index + 1)),
      h('th', { scope: 'row' }, tool.qualifiedName, h('div', { className: 'muted small' }, tool.description)),
      h('td', {}, badge(tool.reason)),
      h('td', { className: 'num' }, formatNumber(tool.score, 3)),
      h('td', { className: 'num' }, formatNumber(tool.tokens)),
    ),
  );
  const timings = Object.entries(meta.stageTimingsMs).filter(([name]) => name !== 'total');
  return h('div', {},
    h('div', { className: 'kpis' },
      kpi('Tokens saved', `${formatNumber(meta.tokens.saved)} (${formatNumber(meta.tokens.savedPercent, 1)} %)`, 'tokens-saved'),
      kpi('Tokens sent', `${formatNumber(meta.tokens.sent)} of ${formatNumber(meta.tokens.catalog)}`),
      kpi('Candidates', formatNumber(meta.candidateCount)),
      kpi('Method', shortMethod(meta.method), 'method', meta.method),
      kpi('Total time', `${formatNumber(meta.stageTimingsMs.total, 1)} ms`),
    ),
    meta.warnings.length > 0
      ? h('div', { className: 'warning', role: 'status' }, h('strong', {}, 'Warnings'), h('ul', {}, meta.warnings.map((warning) => h('li', {}, warning))))
      : null,
    selection.tools.length === 0
      ? h('p', { className: 'muted' }, 'No tool was selected.')
      : table(['#', 'Tool', 'Reason', 'Score', 'Tokens'], rows, `${selection.tools.length} selected tools`),
    h('h3', {}, 'Stage timings'),
    barChart(timings.map(([name, ms]) => ({ label: name, value: ms })), { unit: 'ms', digits: 2, title: 'Stage timings in milliseconds' }),
    h('p', { className: 'muted small' }, `tokenizer ${meta.tokens.tokenizer} · provider ${meta.provider} · context ${meta.contextKey}`),
  );
}

function kpi(label, value, id, title) {
  return h('div', { className: 'kpi', 'data-kpi': id, title }, h('div', { className: 'kpi-value' }, value), h('div', { className: 'kpi-label' }, label));
}

// ---------------------------------------------------------------- analytics

async function renderAnalytics(root) {
  const days = select('days', [['1', 'Last day'], ['7', 'Last 7 days'], ['30', 'Last 30 days'], ['90', 'Last 90 days']], String(state.analyticsDays));
  const target = h('div');
  days.addEventListener('change', () => {
    state.analyticsDays = Number(days.value);
    void loadAnalytics(target);
  });
  root.append(h('h2', {}, 'Analytics'), h('div', { className: 'filters' }, field('Window', days)), target);
  await loadAnalytics(target);
}

async function loadAnalytics(target) {
  target.replaceChildren(loading());
  await guarded(target, async () => {
    const query = `days=${state.analyticsDays}`;
    const [metrics, heatmap, accuracy, drift] = await Promise.all(
      ['metrics', 'heatmap', 'accuracy', 'drift'].map((name) => api('GET', `${REGISTRY}/analytics/${name}?${query}${name === 'heatmap' ? '&limit=200' : ''}`)),
    );
    target.replaceChildren(
      h('div', { className: 'kpis' },
        kpi('Selections', formatNumber(metrics.total), 'selections'),
        kpi('Latency p50', metrics.latencyP50Ms === null ? '–' : `${formatNumber(metrics.latencyP50Ms, 1)} ms`),
        kpi('Latency p95', metrics.latencyP95Ms === null ? '–' : `${formatNumber(metrics.latencyP95Ms, 1)} ms`),
        kpi('Avg tokens saved', formatNumber(metrics.averageTokensSaved)),
        kpi('Avg saved', formatPercent(metrics.averageSavedFraction)),
      ),
      h('div', { className: 'charts' },
        h('section', { className: 'card' }, h('h3', {}, 'Accuracy over time'), accuracyChart(accuracy.trend)),
        h('section', { className: 'card' }, h('h3', {}, 'Selection methods'),
          metrics.methods.length === 0 ? h('p', { className: 'muted' }, 'No selections in this window.')
            : barChart(metrics.methods.map((m) => ({ label: shortMethod(m.method), value: m.count, title: m.method })), { title: 'Selections by method' })),
        h('section', { className: 'card' }, h('h3', {}, 'Outcomes'),
          metrics.outcomes.length === 0 ? h('p', { className: 'muted' }, 'No outcomes in this window.')
            : barChart(metrics.outcomes.map((o) => ({ label: o.outcome ?? 'none', value: o.count })), { title: 'Selections by outcome' })),
      ),
      h('section', { className: 'card' }, h('h3', {}, 'Heatmap: tool × page'), heatmapTable(heatmap.cells)),
      h('section', { className: 'card' }, h('h3', {}, `Embedding drift (older than ${drift.maxAgeDays} days, missing or stale)`), driftTable(drift.tools)),
    );
  });
}

/** `policy+page+hybrid:<model details>+thompson` → `policy+page+hybrid+thompson`. */
function shortMethod(method) {
  return String(method).split('+').map((stage) => stage.split(':')[0]).join('+');
}

function barChart(items, { unit = '', digits = 0, title = 'Bar chart' } = {}) {
  const width = 420;
  const rowHeight = 24;
  // Room for the longest label (about 6.5 px a character at 11 px), within reason.
  const labelWidth = Math.min(200, Math.max(60, 12 + 6.5 * Math.max(0, ...items.map((item) => item.label.length))));
  const valueWidth = 70;
  const height = Math.max(rowHeight, items.length * rowHeight);
  const max = Math.max(...items.map((item) => item.value), 0);
  const scale = (value) => (max > 0 ? (value / max) * (width - labelWidth - valueWidth) : 0);
  return s('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart bars', role: 'img', 'aria-label': title },
    s('title', {}, title),
    items.map((item, index) => {
      const top = index * rowHeight;
      const text = `${formatNumber(item.value, digits)}${unit ? ` ${unit}` : ''}`;
      return s('g', {},
        s('text', { x: labelWidth - 8, y: top + 16, 'text-anchor': 'end', class: 'axis' }, item.label),
        s('rect', { x: labelWidth, y: top + 4, width: Math.max(1, scale(item.value)).toFixed(1), height: rowHeight - 8, rx: 3, class: 'bar' },
          s('title', {}, `${item.title ?? item.label}: ${text}`)),
        s('text', { x: labelWidth + scale(item.value) + 6, y: top + 16, class: 'value' }, text),
      );
    }),
  );
}

function heatmapTable(cells) {
  if (cells.length === 0) return h('p', { className: 'muted' }, 'No selections in this window.');
  const pageOf = (cell) => cell.page ?? '(no page)';
  const pages = [...new Set(cells.map(pageOf))].sort();
  const tools = new Map();
  for (const cell of cells) {
    const name = cell.qualifiedName ?? cell.toolId;
    if (!tools.has(name)) tools.set(name, new Map());
    tools.get(name).set(pageOf(cell), cell);
  }
  const max = Math.max(...cells.map((cell) => cell.selected));
  const rows = [...tools].map(([name, byPage]) =>
    h('tr', {},
      h('th', { scope: 'row' }, name),
      pages.map((page) => {
        const cell = byPage.get(page);
        if (!cell) return h('td', { className: 'heat heat-0' }, '');
        const level = Math.max(1, Math.ceil((cell.selected / max) * 4));
        return h('td', { className: `heat heat-${level}`, title: `${name} on ${page}: offered ${cell.selected}, called ${cell.called}` },
          `${cell.selected}`, cell.called > 0 ? h('span', { className: 'called' }, ` / ${cell.called}`) : null);
      }),
    ),
  );
  return table(['Tool', ...pages], rows, 'Times offered / times called, per page');
}

function driftTable(tools) {
  if (tools.length === 0) return h('p', { className: 'muted' }, 'No drift: every active tool has a current embedding.');
  return table(['Tool', 'Embedding', 'Last embedded', 'Days since'], tools.map((tool) =>
    h('tr', {},
      h('td', {}, tool.qualifiedName),
      h('td', {}, badge(tool.embeddingStatus)),
      h('td', {}, formatDate(tool.lastEmbeddedAt)),
      h('td', { className: 'num' }, tool.lastEmbeddedAt ? formatNumber(tool.daysSinceEmbed, 1) : 'never'),
    )));
}

// ---------------------------------------------------------------- start

function start() {
  document.getElementById('login-form').addEventListener('submit', onLoginSubmit);
  document.getElementById('forget-key').addEventListener('click', forgetKey);
  for (const tab of tabs()) {
    tab.addEventListener('click', () => showView(tab.dataset.view));
    tab.addEventListener('keydown', onTabKey);
  }
  window.addEventListener('hashchange', () => {
    const name = location.hash.slice(1);
    if (state.key && VIEWS[name] && name !== state.view) showView(name);
  });
  const stored = sessionStorage.getItem(KEY_STORAGE);
  if (stored) {
    signIn(stored).catch((error) => {
      forgetKey();
      document.getElementById('login-error').replaceChildren(errorBox(error));
    });
  } else {
    document.getElementById('api-key').focus();
  }
}

start();
