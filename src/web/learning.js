// Quiver admin UI, learned example queries of a tool (issue #13): a panel in the tool detail
// view listing the requests that led to a successful call of the tool (per organisation; a
// tenant key sees only its own), with Delete (one or all) and Disable / Enable learning for
// admin keys. Same conventions as app.js: data goes into the page as text only, no inline
// scripts or styles (CSP); the helpers come from app.js.

const REGISTRY = '/internal/tool-registry';

/** A panel for `tool` that loads its learned examples; `ui` holds app.js's helpers. */
export function learningPanel(tool, ui) {
  const { h } = ui;
  const body = h('div', {}, ui.loading());
  // Its own card beside the tool's article, so the article's tables stay the tool's own.
  const panel = h('section', { className: 'card learning', 'aria-labelledby': 'learning-title' }, h('h4', { id: 'learning-title' }, 'Learned example queries'), body);
  const path = `${REGISTRY}/tools/${encodeURIComponent(tool.id)}/learned-examples`;
  const reload = async () => {
    try {
      const result = await ui.api('GET', path);
      body.replaceChildren(...render(result, tool, path, ui, reload));
    } catch (error) {
      body.replaceChildren(ui.errorBox(error));
    }
  };
  void reload();
  return panel;
}

function render(result, tool, path, ui, reload) {
  const { h } = ui;
  const admin = ui.isAdmin();
  const disabledIn = result.learning.disabledIn;
  const everywhere = disabledIn.includes('*');
  const status = !result.learning.enabled
    ? h('p', { className: 'muted' }, 'Learning is switched off on this server (QUIVER_LEARNING_ENABLED).')
    : disabledIn.length > 0
      ? h('p', {}, ui.badge('learning disabled', 'warn'), ' in ', disabledIn.map((scope) => (scope === '*' ? 'every organisation' : scope ?? '(no organisation)')).join(', '))
      : h('p', { className: 'muted' }, 'Requests that led to a successful call of this tool, redacted, per organisation.');
  const act = async (method, url, body, message) => {
    try {
      await ui.api(method, url, body);
      ui.toast(message);
      await reload();
    } catch (error) {
      ui.toast(error.message ?? String(error));
    }
  };
  const button = (label, onclick, title) => h('button', { type: 'button', className: 'secondary', disabled: !admin, title: admin ? title : 'needs an admin key', onclick }, label);
  const rows = result.examples.map((example) =>
    h('tr', {},
      h('td', {}, example.text),
      h('td', {}, example.orgId ?? '–'),
      h('td', { className: 'num' }, String(example.hits)),
      h('td', {}, ui.formatDate(example.lastSeenAt)),
      h('td', {}, button('Delete', () => act('DELETE', `${path}?id=${encodeURIComponent(example.id)}`, undefined, 'Example deleted'), 'delete this example')),
    ),
  );
  const actions = h('div', { className: 'inline' },
    button('Delete all', () => {
      if (window.confirm(`Delete every learned example query of ${tool.qualifiedName}?`)) void act('DELETE', path, undefined, 'Learned examples deleted');
    }, 'delete every learned example of this tool'),
    everywhere
      ? button('Enable learning', () => act('PUT', `${path}/enabled`, { enabled: true }, 'Learning enabled'), 'let this tool learn again')
      : button('Disable learning', () => act('PUT', `${path}/enabled`, { enabled: false }, 'Learning disabled'), 'stop learning and hide learned examples from ranking'),
  );
  return [
    status,
    rows.length === 0 ? h('p', { className: 'muted' }, 'No learned example queries yet.') : ui.table(['Request', 'Organisation', 'Hits', 'Last seen', ''], rows),
    actions,
  ];
}
