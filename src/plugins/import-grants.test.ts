import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { egressStep, proposedEgress } from './import-egress.ts';
import { importedGrants, isFilesystemServer } from './import-grants.ts';

describe('host paths and egress of an imported entry (issue #26)', () => {
  it("grants a filesystem server's folder arguments read-write, another server's existing folders read-only with the command to widen", () => {
    const folder = mkdtempSync(join(tmpdir(), 'quiver-grants-'));
    try {
      assert.ok(isFilesystemServer('@modelcontextprotocol/server-filesystem@2026.8.31'));
      assert.equal(isFilesystemServer('@modelcontextprotocol/server-memory'), false);
      const fs = importedGrants('@modelcontextprotocol/server-filesystem', [folder, `${folder}/`, '/not/there'], 'files');
      assert.deepEqual(fs.mounts, [{ path: folder, mode: 'rw' }, { path: '/not/there', mode: 'rw' }]);
      assert.deepEqual(fs.warnings, []);
      const other = importedGrants('some-server', ['--root', folder, `--db=${folder}`, 'relative', '/not/there'], 'other');
      assert.deepEqual(other.mounts, [{ path: folder, mode: 'ro' }]);
      assert.match(other.warnings.join('\n'), new RegExp(`quiver plugin mount other ${folder}:rw`));
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('proposes the allow-list a config names (known server, or a URL in env or args); none for local servers; a step for open-ended ones', () => {
    assert.deepEqual(proposedEgress('@modelcontextprotocol/server-github', [], { GITHUB_PERSONAL_ACCESS_TOKEN: 'x' }), { hosts: ['api.github.com'], why: 'the API server-github calls' });
    assert.deepEqual(proposedEgress('@modelcontextprotocol/server-brave-search@0.6.2', [], {}), { hosts: ['api.search.brave.com'], why: 'the API server-brave-search calls' });
    assert.deepEqual(proposedEgress('@modelcontextprotocol/server-gitlab', [], { GITLAB_API_URL: 'https://gitlab.example.com:8443/api/v4' }), { hosts: ['gitlab.example.com:8443'], why: 'the URL in its configuration' });
    assert.equal(proposedEgress('@modelcontextprotocol/server-memory', [], {}), undefined);
    assert.equal(proposedEgress('x', ['http://localhost:3000'], {}), undefined);
    assert.deepEqual(proposedEgress('@modelcontextprotocol/server-puppeteer', [], {}), { open: true });
    assert.match(egressStep('github', { hosts: ['api.github.com'], why: 'w' }), /'quiver plugin allow github api\.github\.com', or import with --allow-egress/);
    assert.match(egressStep('web', { open: true }), /'quiver plugin allow web HOST'/);
  });
});
