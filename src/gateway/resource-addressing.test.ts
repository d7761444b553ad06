import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import type { Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { formatResourceUri, parseResourceUri } from './meta-tools.ts';
import { addressingFrom, formatTemplateUri } from './resource-addressing.ts';

const list = <T>(items: Array<[string, T]>) => ({ items: items.map(([pluginName, item]) => ({ pluginName, item })), warnings: [] });
const resource = (uri: string): Resource => ({ uri, name: uri });
const template = (uriTemplate: string): ResourceTemplate => ({ uriTemplate, name: uriTemplate });

test("a URI expanded from a template in Quiver's form names the resource the plugin's own template makes", () => {
  for (const [plugin, uriTemplate, variables] of [
    ['files', 'file:///home/{user}/notes', { user: 'ada' }],
    ['db', 'postgres://{host}/{table}?limit=10', { host: 'db1', table: 'users' }],
    ['wiki', 'wiki://{+path}', { path: 'a/b/c' }],
    ['q', 'search://items{?q,page}', { q: 'red', page: '2' }],
  ] as const) {
    const quiverForm = formatTemplateUri(plugin, uriTemplate);
    const expanded = new UriTemplate(quiverForm).expand(variables);
    const own = new UriTemplate(uriTemplate).expand(variables);
    assert.deepEqual(parseResourceUri(expanded), { pluginName: plugin, uri: own }, uriTemplate);
    // Reserved characters an operator expansion (`{+…}`, `{?…}`) leaves raw are encoded in Quiver's URI of the resource.
    if (!/\{[+#./;?&]/.test(uriTemplate)) assert.equal(expanded, formatResourceUri(plugin, own), uriTemplate);
  }
});

test('native addressing: listed resources and unambiguous templates by their own URIs, collisions prefixed', () => {
  const addressing = addressingFrom(
    list([
      ['a', resource('shared://doc')],
      ['b', resource('shared://doc')],
      ['a', resource('a://memo')],
    ]),
    list([
      ['a', template('a://notes/{id}')],
      ['b', template('b://notes/{id}')],
      ['a', template('both://{x}')],
      ['b', template('both://{x}')],
    ]),
  );
  assert.equal(addressing.show('a', 'a://memo'), 'a://memo');
  assert.equal(addressing.show('a', 'shared://doc'), formatResourceUri('a', 'shared://doc'));
  assert.equal(addressing.show('b', 'b://notes/4'), 'b://notes/4');
  // Another plugin's native template does not make `b` the owner, and a shared template is nobody's.
  assert.equal(addressing.show('a', 'b://notes/4'), formatResourceUri('a', 'b://notes/4'));
  assert.equal(addressing.show('a', 'both://1'), formatResourceUri('a', 'both://1'));
  assert.deepEqual(addressing.resolve('a://notes/9'), { pluginName: 'a', uri: 'a://notes/9' });
  assert.deepEqual(addressing.resolve('a://memo'), { pluginName: 'a', uri: 'a://memo' });
  assert.equal(addressing.resolve('shared://doc'), undefined);
  assert.equal(addressing.resolve('both://1'), undefined);
  assert.deepEqual(addressing.resolve(formatResourceUri('b', 'shared://doc')), { pluginName: 'b', uri: 'shared://doc' });
});
