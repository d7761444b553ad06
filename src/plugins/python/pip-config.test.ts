/**
 * The machine's pip configuration carried into the install sandbox (issue #26): which lines of
 * `pip config list` count and which wins, and what the carried options become — PIP_* variables,
 * read-only host paths for local indexes and wheel folders, the only hosts the install may reach,
 * and index locations for messages without their credentials.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parsePipConfigList, sandboxSettingsFor } from './pip-config.ts';

const folder = mkdtempSync(join(tmpdir(), 'quiver-pip-config-'));
after(() => rmSync(folder, { recursive: true, force: true }));

describe('parsePipConfigList', () => {
  it('keeps the carried options of global, install and :env: lines, later sections winning', () => {
    const text = [
      "global.index-url='https://mirror.example/simple'",
      "install.index-url='https://install.example/simple'",
      "global.timeout='30'",
      ":env:.retries='0'",
      "global.retries='5'",
      'global.trusted-host="mirror.example"',
      "global.find-links='/srv/wheels /srv/more'",
    ].join('\n');
    assert.deepEqual(Object.fromEntries(parsePipConfigList(text)), {
      'index-url': 'https://install.example/simple',
      timeout: '30',
      retries: '0',
      'trusted-host': 'mirror.example',
      'find-links': '/srv/wheels /srv/more',
    });
  });

  it('drops options that move the install or run code, other sections, and lines that are not config', () => {
    const text = [
      "global.target='/etc'", "install.prefix='/usr'", "global.user='true'", "install.src='/tmp'", "global.require-virtualenv='false'",
      "download.index-url='https://other.example/simple'", "freeze.index-url='https://other.example/simple'",
      'WARNING: some pip warning', '', "global.index-url=https://unquoted.example/simple", "global.index-url='mismatched\"",
    ].join('\n');
    assert.deepEqual([...parsePipConfigList(text)], []);
  });
});

describe('sandboxSettingsFor', () => {
  it('without configuration: the default index and its file host are the only network, no paths', () => {
    const settings = sandboxSettingsFor(new Map());
    assert.deepEqual(settings.env, { PIP_CONFIG_FILE: '/dev/null' });
    assert.deepEqual(settings.egress, [{ host: 'pypi.org', port: 443 }, { host: 'files.pythonhosted.org', port: 443 }]);
    assert.deepEqual(settings.readOnlyPaths, []);
    assert.deepEqual(settings.sources, ['https://pypi.org/simple']);
  });

  it('a mirror with credentials: PIP_* variables carry them, messages do not, its host and port are the egress', () => {
    const settings = sandboxSettingsFor(new Map([
      ['index-url', 'https://user:s3cret@mirror.example:8443/simple'],
      ['extra-index-url', 'http://extra.example/simple'],
      ['trusted-host', 'extra.example'],
    ]));
    assert.equal(settings.env['PIP_INDEX_URL'], 'https://user:s3cret@mirror.example:8443/simple');
    assert.equal(settings.env['PIP_EXTRA_INDEX_URL'], 'http://extra.example/simple');
    assert.equal(settings.env['PIP_TRUSTED_HOST'], 'extra.example');
    assert.equal(settings.env['PIP_CONFIG_FILE'], '/dev/null', "the sandboxed pip reads no config file of its own");
    assert.deepEqual(settings.egress, [{ host: 'mirror.example', port: 8443 }, { host: 'extra.example', port: 80 }]);
    assert.deepEqual(settings.sources, ['https://***@mirror.example:8443/simple', 'http://extra.example/simple']);
    assert.ok(!settings.sources.join(' ').includes('s3cret'));
  });

  it('local indexes only: no network at all; a simple/ mirror binds its parent, find-links folders and a constraints file are bound', () => {
    const mirror = join(folder, 'mirror');
    mkdirSync(join(mirror, 'simple'), { recursive: true });
    const wheels = join(folder, 'wheels');
    mkdirSync(wheels);
    const constraints = join(folder, 'constraints.txt');
    writeFileSync(constraints, 'mcp<3\n');
    const settings = sandboxSettingsFor(new Map([
      ['index-url', pathToFileURL(join(mirror, 'simple')).href],
      ['find-links', `${wheels} ${join(folder, 'missing')} relative/wheels`],
      ['constraint', constraints],
    ]));
    assert.deepEqual(settings.egress, []);
    assert.deepEqual(settings.readOnlyPaths.sort(), [constraints, mirror, wheels].sort(), 'missing and relative paths are not bound');
    assert.equal(settings.env['PIP_FIND_LINKS'], `${wheels} ${join(folder, 'missing')} relative/wheels`);
  });

  it('no-index: the configured index is ignored, only find-links count', () => {
    const wheels = join(folder, 'wheels-no-index');
    mkdirSync(wheels);
    const settings = sandboxSettingsFor(new Map([['no-index', '1'], ['index-url', 'https://mirror.example/simple'], ['find-links', wheels]]));
    assert.deepEqual(settings.egress, []);
    assert.deepEqual(settings.sources, [wheels]);
    assert.deepEqual(settings.readOnlyPaths, [wheels]);
    assert.equal(settings.env['PIP_NO_INDEX'], '1');
  });
});
