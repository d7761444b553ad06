/** The subject's launch is the strictest sandbox whatever the plugin has now; its code folder is the package folder. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { codeDirOf, strictestLaunch } from './subject.ts';

it('forces UNVERIFIED and drops any egress allow-list (no network at all)', () => {
  const launch = strictestLaunch({
    pluginId: 'p',
    pluginName: 'p',
    version: '1',
    trustLevel: 'ENTERPRISE',
    transport: 'stdio',
    command: 'node',
    egress: [{ host: '127.0.0.1', port: 5432 }],
  });
  assert.equal(launch.trustLevel, 'UNVERIFIED');
  assert.equal('egress' in launch, false);
  // Issue #26: granted host folders stay visible, read-only, so generated calls never write to them.
  const granted = strictestLaunch({ pluginId: 'p', pluginName: 'p', version: '1', trustLevel: 'COMMUNITY', transport: 'stdio', command: 'node', mounts: [{ path: '/srv/notes', mode: 'rw' }] });
  assert.deepEqual(granted.transport === 'stdio' ? granted.mounts : undefined, [{ path: '/srv/notes', mode: 'ro' }]);
  const remote = strictestLaunch({ pluginId: 'p', pluginName: 'p', version: '1', trustLevel: 'OFFICIAL', transport: 'http', url: 'https://example.org/mcp' });
  assert.equal(remote.trustLevel, 'UNVERIFIED');
});

it('the code folder is the package inside the install root, or the folder of a path install', () => {
  assert.equal(codeDirOf({ cachePath: '/c/npm/x@1', packageFolder: 'node_modules/x' }), '/c/npm/x@1/node_modules/x');
  assert.equal(codeDirOf({ cachePath: '/c/git/abc' }), '/c/git/abc');
  assert.equal(codeDirOf({ path: '/home/me/plugin' }), '/home/me/plugin');
  assert.equal(codeDirOf({ url: 'https://example.org' }), null);
});
