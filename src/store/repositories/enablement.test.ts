import { it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { describeEachBackend } from '../../../test/helpers/backends.ts';
import type { Database } from '../database.ts';
import { effectivePluginIds, setEnablement, clearEnablement } from './enablement.ts';

describeEachBackend('plugin enablement', (backend) => {
  let db: Database;
  let workspace: string;
  let other: string;
  let alpha: string;
  let beta: string;
  const plugin = async (name: string) =>
    (await db.query<{ id: string }>('INSERT INTO plugins (name) VALUES ($1) RETURNING id', [name])).rows[0]!.id;
  const project = async (name: string, ws: string) =>
    (await db.query<{ id: string }>('INSERT INTO projects (workspace_id, name) VALUES ($1, $2) RETURNING id', [ws, name])).rows[0]!.id;

  before(async () => {
    db = await backend.open();
    workspace = (await db.query<{ id: string }>("SELECT id FROM workspaces WHERE name = 'default'")).rows[0]!.id;
    other = (await db.query<{ id: string }>("INSERT INTO workspaces (name) VALUES ('other') RETURNING id")).rows[0]!.id;
    alpha = await plugin('alpha');
    beta = await plugin('beta');
  });
  after(async () => db.close());

  it('follows the workspace / project / opt-out matrix', async () => {
    const p1 = await project('p1', workspace);
    const p2 = await project('p2', workspace);
    assert.deepEqual(await effectivePluginIds(db, { workspaceId: workspace }), []);

    await setEnablement(db, { pluginId: alpha, workspaceId: workspace, enabled: true });
    await setEnablement(db, { pluginId: beta, workspaceId: workspace, projectId: p1, enabled: true });
    assert.deepEqual(await effectivePluginIds(db, { workspaceId: workspace }), [alpha]);
    assert.deepEqual(await effectivePluginIds(db, { workspaceId: workspace, projectId: p1 }), [alpha, beta]);
    assert.deepEqual(await effectivePluginIds(db, { workspaceId: workspace, projectId: p2 }), [alpha]);
    assert.deepEqual(await effectivePluginIds(db, { workspaceId: other }), []);

    // p2 opts out of the workspace-wide alpha.
    await setEnablement(db, { pluginId: alpha, workspaceId: workspace, projectId: p2, enabled: false });
    assert.deepEqual(await effectivePluginIds(db, { workspaceId: workspace, projectId: p2 }), []);
    assert.deepEqual(await effectivePluginIds(db, { workspaceId: workspace, projectId: p1 }), [alpha, beta]);

    // Clearing the opt-out restores inheritance; a disabled plugin is never effective.
    assert.equal(await clearEnablement(db, { pluginId: alpha, workspaceId: workspace, projectId: p2 }), true);
    assert.deepEqual(await effectivePluginIds(db, { workspaceId: workspace, projectId: p2 }), [alpha]);
    await db.query("UPDATE plugins SET status = 'disabled' WHERE id = $1", [alpha]);
    assert.deepEqual(await effectivePluginIds(db, { workspaceId: workspace, projectId: p2 }), []);
  });
});
