import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planClientServer, runClientImport, type ImportPlan } from './client-import.ts';

const installed = (name: string) => ({ plugin: { name }, tools: { total: 3 }, warnings: [] });

describe('the egress step of an imported server (issue #26)', () => {
  it('is a table step naming the allow command, or allowed at once with --allow-egress; a dry run shows the proposal', async () => {
    const github = await planClientServer('github', { command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'], env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_x' } });
    const memory = await planClientServer('memory', { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] });
    const plans: ImportPlan[] = [github, memory];
    const plugins = { add: async (_source: string, options?: { name?: string | undefined }) => installed(options!.name!) } as never;

    const dry = await runClientImport(plugins, plans, { dryRun: true });
    assert.equal(dry[0]!.detail, 'egress: proposed api.github.com');
    assert.equal(dry[1]!.detail, undefined);

    const stepped = await runClientImport(plugins, plans);
    assert.deepEqual(stepped[0]!.egress, { proposed: ['api.github.com'], allowed: false });
    assert.match(stepped[0]!.warnings.join('\n'), /'quiver plugin allow github api\.github\.com', or import with --allow-egress/);
    assert.equal(stepped[1]!.egress, undefined);
    assert.deepEqual(stepped[1]!.warnings, [], 'a local server needs no egress step');

    const allowed: Array<[string, readonly string[]]> = [];
    const confirmed = await runClientImport(plugins, plans, { allowEgress: async (plugin, hosts) => (allowed.push([plugin, hosts]), ['note']) });
    assert.deepEqual(allowed, [['github', ['api.github.com']]]);
    assert.deepEqual(confirmed[0]!.egress, { proposed: ['api.github.com'], allowed: true });
    assert.deepEqual(confirmed[0]!.warnings, ['note']);
  });
});
