import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { PublicPlugin } from '../../plugins/service.ts';
import type { SelectionCandidate } from '../../store/repositories/candidates.ts';
import { capabilityOf, createCapabilityMethods, type CapabilityMethodsDeps } from './capabilities.ts';

const tools = [{}, {}] as SelectionCandidate[];

describe('capabilityOf (seed 002)', () => {
  test('manifest fields win, with only the strings of lists and known stabilities kept', () => {
    const plugin = {
      displayName: 'Mail display',
      description: 'Mail description',
      visibility: 'always',
      manifest: { title: 'Mail', summary: 'Send mail', whenToUse: ['email', 3], whenNotToUse: 'not a list', tags: ['io'], category: 'comms', stability: 'beta' },
    } as unknown as PublicPlugin;
    assert.deepEqual(capabilityOf(plugin, 'mail', tools), {
      name: 'mail',
      title: 'Mail',
      summary: 'Send mail',
      whenToUse: ['email'],
      whenNotToUse: [],
      tags: ['io'],
      category: 'comms',
      stability: 'beta',
      visibility: 'always',
      toolCount: 2,
    });
  });

  test('without a manifest the catalog fields fill in; an unknown stability and blank text are dropped', () => {
    const plugin = { displayName: 'Mail display', description: 'Mail description', visibility: 'on-demand', manifest: { title: '  ', stability: 'alpha' } } as unknown as PublicPlugin;
    const capability = capabilityOf(plugin, 'mail', tools);
    assert.equal(capability.title, 'Mail display');
    assert.equal(capability.summary, 'Mail description');
    assert.equal('stability' in capability, false);
    assert.equal('category' in capability, false);
  });

  test('an unknown plugin is described by its name, on demand', () => {
    const capability = capabilityOf(undefined, 'ghost', []);
    assert.equal(capability.title, 'ghost');
    assert.equal(capability.summary, '');
    assert.equal(capability.visibility, 'on-demand');
    assert.equal(capability.toolCount, 0);
  });
});

describe('catalogOverview (issue #26)', () => {
  test('names each plugin by its plugin name, not the title its server gives itself', async () => {
    const twin = (name: string) => [name, { name, displayName: 'Everything Reference Server', description: 'd', visibility: 'on-demand', manifest: {} }] as const;
    const known = new Map([twin('everything'), twin('everything-2')]) as unknown as Map<string, PublicPlugin>;
    const deps = {
      plugins: { searchMarketplace: async () => [] },
      caches: { plugins: async () => known },
      visibility: {
        visiblePlugins: async () => new Map([['everything', tools], ['everything-2', tools]]),
        visible: async () => [],
      },
    } as unknown as CapabilityMethodsDeps;
    const overview = await createCapabilityMethods(deps).catalogOverview({} as never);
    assert.deepEqual(overview.plugins.map((plugin) => plugin.title), ['everything', 'everything-2']);
    assert.equal(overview.toolCount, 4);
  });
});
