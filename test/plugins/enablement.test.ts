/**
 * Enablement through the plugins service (seed 003): workspace-global and project-scoped
 * plugins, project opt-out, plugin status, and the tools in effect for each scope.
 */
import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { describeEachBackend } from '../helpers/backends.ts';
import type { Database } from '../../src/store/database.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import { createHarness, createPluginFolder, openTempDir, type PluginsHarness } from './helpers.ts';

describeEachBackend('plugin enablement by workspace and project', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let root: string;
  const pluginsOf = async (scope: { workspace?: string; project?: string }) =>
    [...new Set((await harness.plugins.effectiveTools(scope)).map((tool) => tool.pluginName))].sort();

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db);
    root = await openTempDir('enablement');
    await harness.plugins.createWorkspace({ name: 'acme', displayName: 'Acme' });
    await harness.plugins.createProject('default', { name: 'p1' });
    await harness.plugins.createProject('default', { name: 'p2' });
    await harness.plugins.createProject('acme', { name: 'p1' });
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('lists workspaces and projects, refusing duplicates and bad names', async () => {
    assert.deepEqual((await harness.plugins.listWorkspaces()).map((w) => w.name), ['acme', 'default']);
    assert.deepEqual((await harness.plugins.listProjects('default')).map((p) => p.name), ['p1', 'p2']);
    await assert.rejects(harness.plugins.createWorkspace({ name: 'acme' }), (error: Error) => isQuiverError(error, 'conflict'));
    await assert.rejects(harness.plugins.createProject('default', { name: 'P1!' }), (error: Error) => isQuiverError(error, 'invalid_input'));
    await assert.rejects(harness.plugins.listProjects('nowhere'), (error: Error) => isQuiverError(error, 'not_found'));
  });

  it('enables at install in the default workspace, or in the workspace and project asked for', async () => {
    await harness.plugins.add(await createPluginFolder(root, 'calc', 'alpha'), { name: 'alpha' });
    await harness.plugins.add(await createPluginFolder(root, 'bare', 'beta'), { name: 'beta', project: 'p1' });
    await harness.plugins.add(await createPluginFolder(root, 'calc', 'gamma'), { name: 'gamma', workspace: 'acme' });
    assert.deepEqual(await pluginsOf({}), ['alpha']);
    assert.deepEqual(await pluginsOf({ project: 'p1' }), ['alpha', 'beta']);
    assert.deepEqual(await pluginsOf({ project: 'p2' }), ['alpha']);
    assert.deepEqual(await pluginsOf({ workspace: 'acme' }), ['gamma']);
    assert.deepEqual(await pluginsOf({ workspace: 'acme', project: 'p1' }), ['gamma']);
    const tools = await harness.plugins.effectiveTools({ project: 'p1' });
    assert.deepEqual(tools.map((tool) => tool.qualifiedName).sort(), [
      'alpha__add', 'alpha__echo', 'beta__alpha', 'beta__beta', 'beta__delta', 'beta__epsilon', 'beta__gamma',
    ]);
  });

  it('follows enable, project opt-out, workspace disable and plugin status', async () => {
    // p2 opts out of the workspace-wide alpha; p1 keeps it.
    await harness.plugins.disable('alpha', { project: 'p2' });
    assert.deepEqual(await pluginsOf({ project: 'p2' }), []);
    assert.deepEqual(await pluginsOf({ project: 'p1' }), ['alpha', 'beta']);
    // Enabling for p2 again replaces the opt-out.
    await harness.plugins.enable('alpha', { project: 'p2' });
    assert.deepEqual(await pluginsOf({ project: 'p2' }), ['alpha']);
    // Workspace-wide beta, then off again: p1's own enablement stays.
    await harness.plugins.enable('beta');
    assert.deepEqual(await pluginsOf({}), ['alpha', 'beta']);
    await harness.plugins.disable('beta');
    assert.deepEqual(await pluginsOf({}), ['alpha']);
    assert.deepEqual(await pluginsOf({ project: 'p1' }), ['alpha', 'beta']);
    // A disabled plugin is in effect nowhere, whatever its enablement.
    await harness.plugins.setStatus('alpha', 'disabled');
    assert.deepEqual(await pluginsOf({ project: 'p2' }), []);
    await harness.plugins.setStatus('alpha', 'active');
    assert.deepEqual(await pluginsOf({ project: 'p2' }), ['alpha']);
    const shown = await harness.plugins.show('alpha');
    assert.deepEqual(shown.enablements, [
      { workspace: 'default', project: null, enabled: true },
      { workspace: 'default', project: 'p2', enabled: true },
    ]);
  });

  it('refuses unknown plugins, workspaces and projects', async () => {
    await assert.rejects(harness.plugins.enable('nope'), (error: Error) => isQuiverError(error, 'not_found'));
    await assert.rejects(harness.plugins.enable('alpha', { workspace: 'nowhere' }), (error: Error) => isQuiverError(error, 'not_found'));
    await assert.rejects(harness.plugins.enable('alpha', { project: 'p9' }), (error: Error) => isQuiverError(error, 'not_found'));
    await assert.rejects(harness.plugins.effectiveTools({ workspace: 'nowhere' }), (error: Error) => isQuiverError(error, 'not_found'));
  });

  it('removes a plugin from every scope and can install it again under the same name', async () => {
    await harness.plugins.remove('gamma');
    assert.deepEqual(await pluginsOf({ workspace: 'acme' }), []);
    const again = await harness.plugins.add(await createPluginFolder(root, 'calc', 'gamma'), { name: 'gamma', workspace: 'acme' });
    assert.deepEqual(again.tools.revived.sort(), ['add', 'echo']);
    assert.deepEqual(await pluginsOf({ workspace: 'acme' }), ['gamma']);
  });
});
