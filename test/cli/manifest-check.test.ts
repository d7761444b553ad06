import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInProcess, runBinary } from '../helpers/cli.ts';

const fixtures = fileURLToPath(new URL('../fixtures/manifests/', import.meta.url));

describe('quiver manifest check', () => {
  it('accepts the seed 002 worked example when its tools are registered', async () => {
    const result = await runInProcess([
      'manifest', 'check', join(fixtures, 'weather-manifest.json'), '--plugin', 'weather',
      '--tools', 'get_current_weather,get_weather_forecast', '--json',
    ]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const body = JSON.parse(result.stdout) as { kind: string; valid: boolean; errors: string[] };
    assert.equal(body.kind, 'manifest');
    assert.deepEqual(body.errors, []);
  });

  it('exits 2 listing every hard error: unknown example tool, missing whenToUse, empty summary', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quiver-manifest-'));
    try {
      const file = join(dir, 'weather.json');
      writeFileSync(file, JSON.stringify({
        title: 'Weather', summary: '', whenToUse: [], tags: ['Weather'],
        examples: [{ user: 'rain?', tool: 'foo' }],
      }));
      const result = await runBinary(['manifest', 'check', file, '--tools', 'get_current_weather']);
      assert.equal(result.code, 2);
      assert.match(result.stdout, /example references unknown tool 'foo'/);
      assert.match(result.stdout, /summary/);
      assert.match(result.stdout, /whenToUse/);
      assert.match(result.stdout, /warning: .*uppercase/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('validates the seed 000 Appendix A intelligence document', async () => {
    const result = await runInProcess(['manifest', 'check', join(fixtures, 'pid-appendix-a.json'), '--json']);
    assert.equal(result.code, 0, result.stdout);
    assert.equal((JSON.parse(result.stdout) as { kind: string }).kind, 'pid');
  });

  it('says clearly when the file is missing or not JSON', async () => {
    const missing = await runInProcess(['manifest', 'check', '/nonexistent/quiver.json']);
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /cannot read/);
    const dir = mkdtempSync(join(tmpdir(), 'quiver-manifest-'));
    try {
      const file = join(dir, 'bad.json');
      writeFileSync(file, '{ not json');
      const bad = await runInProcess(['manifest', 'check', file]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /not valid JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
