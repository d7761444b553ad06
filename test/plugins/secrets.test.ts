/**
 * Plugin credentials: sealed with AES-256-GCM at rest (the plaintext is in no database file
 * and no table), delivered to the plugin process at start, never in logs or errors, and a
 * missing required credential stops the plugin with an error naming the key.
 */
import { it, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describeEachBackend } from '../helpers/backends.ts';
import { openStore } from '../../src/store/open.ts';
import type { Database } from '../../src/store/database.ts';
import { isQuiverError } from '../../src/core/errors.ts';
import { createCapturingLogger, createHarness, createPluginFolder, openTempDir, type PluginsHarness } from './helpers.ts';

// Distinctive values, so a hit anywhere in a file or a log line is unambiguous.
const TOKEN = `tok-${randomBytes(9).toString('hex')}`;
const OTHER = `other-${randomBytes(9).toString('hex')}`;

const requiredToken = (name: string) =>
  JSON.stringify({
    name,
    manifest: { title: 'Calc', summary: 'Adds numbers.', whenToUse: ['Adding numbers.'] },
    launch: { command: 'node', args: ['server.mjs'], env: ['FIXTURE_TOKEN'] },
    credentials: [{ name: 'FIXTURE_TOKEN', description: 'Service token', required: true }],
  });

describeEachBackend('plugin secrets', (backend) => {
  let db: Database;
  let harness: PluginsHarness;
  let root: string;
  const logger = createCapturingLogger();

  before(async () => {
    db = await backend.open();
    harness = await createHarness(db, { logger });
    root = await openTempDir('secrets');
  });
  after(async () => {
    await harness.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('refuses to install without a required credential, naming it, and leaves nothing', async () => {
    const folder = await createPluginFolder(root, 'calc', 'needs-token', { 'quiver.json': requiredToken('needs-token') });
    await assert.rejects(harness.plugins.add(folder), (error: Error) => {
      assert.ok(isQuiverError(error, 'install_failed'));
      assert.equal((error.details as { step: string }).step, 'launch');
      assert.match(error.message, /missing required credential 'FIXTURE_TOKEN'/);
      return true;
    });
    assert.equal((await db.query("SELECT 1 FROM plugins WHERE name = 'needs-token'")).rows.length, 0);
  });

  it('stores the credential sealed, hands it to the plugin process, and never shows it', async () => {
    const folder = await createPluginFolder(root, 'calc', 'tokened', { 'quiver.json': requiredToken('tokened') });
    const report = await harness.plugins.add(folder, { secrets: { FIXTURE_TOKEN: TOKEN } });
    assert.deepEqual(report.plugin.credentials.map((c) => [c.name, c.set]), [['FIXTURE_TOKEN', true]]);
    assert.ok(!JSON.stringify(report).includes(TOKEN));

    const { rows } = await db.query<Record<string, unknown>>('SELECT * FROM plugin_secrets');
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(TOKEN), 'the table holds no plaintext');
    const row = rows[0]!;
    assert.equal(Buffer.from(String(row['iv']), 'base64').length, 12);
    assert.equal(Buffer.from(String(row['auth_tag']), 'base64').length, 16);
    assert.equal(row['algorithm'], 'aes-256-gcm');
    assert.match(String(row['key_id']), /^[0-9a-f]{16}$/);

    // The plugin receives it in its environment (the fixture reports its length, not its value).
    const spec = await harness.plugins.upstreamSpec('tokened');
    const result = await harness.supervisor.callTool(spec, 'add', { a: 1, b: 2 });
    assert.deepEqual(result.content, [{ type: 'text', text: `3 (token length ${TOKEN.length})` }]);

    // Each value gets its own IV: setting the same value twice gives different ciphertexts.
    await harness.plugins.setSecret('tokened', 'EXTRA_SETTING', OTHER);
    await harness.plugins.setSecret('tokened', 'EXTRA_SETTING', OTHER);
    const sealed = await db.query<{ ciphertext: string; iv: string }>("SELECT ciphertext, iv FROM plugin_secrets WHERE key = 'EXTRA_SETTING'");
    assert.ok(!JSON.stringify(sealed.rows).includes(OTHER));
    assert.deepEqual(await harness.plugins.resolveLaunchEnv('tokened'), { env: { FIXTURE_TOKEN: TOKEN, EXTRA_SETTING: OTHER }, headers: {} });

    const shown = await harness.plugins.show('tokened');
    assert.deepEqual(shown.secrets.map((s) => [s.key, s.declared]), [['EXTRA_SETTING', false], ['FIXTURE_TOKEN', true]]);
    assert.ok(!JSON.stringify(shown).includes(TOKEN) && !JSON.stringify(await harness.plugins.list()).includes(TOKEN));
    const logs = logger.lines.join('\n');
    assert.ok(logs.includes('plugin secret set'), 'the service does log secret changes');
    assert.ok(!logs.includes(TOKEN) && !logs.includes(OTHER), 'no value in any log line');
  });

  it('stops the plugin from starting once a required credential is gone, naming the key', async () => {
    assert.equal(await harness.plugins.deleteSecret('tokened', 'FIXTURE_TOKEN'), true);
    await assert.rejects(harness.plugins.upstreamSpec('tokened'), (error: Error) => {
      assert.ok(isQuiverError(error, 'missing_credential'));
      assert.match(error.message, /'FIXTURE_TOKEN'/);
      assert.deepEqual((error.details as { missing: string[] }).missing, ['FIXTURE_TOKEN']);
      return true;
    });
    await harness.plugins.setSecret('tokened', 'FIXTURE_TOKEN', TOKEN);
  });

  it('detects a tampered or transplanted value instead of decrypting it', async () => {
    const other = await createPluginFolder(root, 'calc', 'second', { 'quiver.json': requiredToken('second') });
    await harness.plugins.add(other, { secrets: { FIXTURE_TOKEN: OTHER } });
    // Copy tokened's sealed value onto 'second': the plugin id is bound as additional data.
    await db.query(
      `UPDATE plugin_secrets SET ciphertext = s.ciphertext, iv = s.iv, auth_tag = s.auth_tag
         FROM (SELECT ps.ciphertext, ps.iv, ps.auth_tag FROM plugin_secrets ps JOIN plugins p ON p.id = ps.plugin_id
                WHERE p.name = 'tokened' AND ps.key = 'FIXTURE_TOKEN') s
        WHERE plugin_secrets.key = 'FIXTURE_TOKEN' AND plugin_secrets.plugin_id = (SELECT id FROM plugins WHERE name = 'second')`,
    );
    await assert.rejects(harness.plugins.resolveLaunchEnv('second'), (error: Error) => isQuiverError(error, 'secret_unreadable') && !error.message.includes(TOKEN));
  });

  it('rejects bad keys and empty values without echoing them', async () => {
    await assert.rejects(harness.plugins.setSecret('tokened', 'bad key', 'x'), (error: Error) => isQuiverError(error, 'invalid_input'));
    await assert.rejects(harness.plugins.setSecret('tokened', 'EMPTY', ''), (error: Error) => isQuiverError(error, 'invalid_input'));
    await assert.rejects(harness.plugins.setSecret('nope', 'KEY', TOKEN), (error: Error) => isQuiverError(error, 'not_found') && !error.message.includes(TOKEN));
  });
});

describe('plugin secrets in a PGlite data folder', () => {
  it('never writes the plaintext to any file of the data folder', async () => {
    const root = await openTempDir('secrets-folder');
    const dataDir = join(root, 'data');
    const { db } = await openStore({ kind: 'folder', path: dataDir });
    const harness = await createHarness(db);
    try {
      const folder = await createPluginFolder(root, 'calc', 'sealed', { 'quiver.json': requiredToken('sealed') });
      await harness.plugins.add(folder, { secrets: { FIXTURE_TOKEN: TOKEN } });
      await harness.plugins.setSecret('sealed', 'SECOND', OTHER);
      assert.equal((await harness.plugins.resolveLaunchEnv('sealed')).env['FIXTURE_TOKEN'], TOKEN);
    } finally {
      await harness.close();
      await db.close();
    }
    // Every byte PGlite wrote (heap files, WAL, ...) is read back and searched.
    let files = 0;
    let bytes = 0;
    for (const entry of await readdir(dataDir, { recursive: true })) {
      const path = join(dataDir, entry);
      if (!(await stat(path)).isFile()) continue;
      const content = await readFile(path);
      files += 1;
      bytes += content.length;
      assert.equal(content.indexOf(TOKEN), -1, `plaintext found in ${entry}`);
      assert.equal(content.indexOf(OTHER), -1, `plaintext found in ${entry}`);
    }
    assert.ok(files > 10 && bytes > 1_000_000, `read ${files} files, ${bytes} bytes`);
    // The same search does find a value stored in clear, so it is able to fail.
    const control = await openStore({ kind: 'folder', path: dataDir });
    await control.db.query("UPDATE plugins SET description = $1 WHERE name = 'sealed'", [TOKEN]);
    await control.db.query('CHECKPOINT');
    await control.db.close();
    let found = false;
    for (const entry of await readdir(dataDir, { recursive: true })) {
      const path = join(dataDir, entry);
      if ((await stat(path)).isFile() && (await readFile(path)).indexOf(TOKEN) !== -1) found = true;
    }
    assert.ok(found, 'a clear-text value is findable in the data folder');
    await rm(root, { recursive: true, force: true });
  });
});
