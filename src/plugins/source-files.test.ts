import { it, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSourceJson, readSourceFile, readSourceHead, resolveInsideRoot, SourceFileError } from './source-files.ts';

const HOST_SECRET = 'root:$6$not-a-real-hash$host-only-content:19000:0:99999:7:::';

describe('plugin source files', () => {
  let root: string;
  let host: string;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'quiver-source-'));
    host = mkdtempSync(join(tmpdir(), 'quiver-host-'));
    writeFileSync(join(host, 'shadow'), `${HOST_SECRET}\n`);
    writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'host', description: 'host file', version: '9.9.9' }));
    mkdirSync(join(root, 'sub/deeper'), { recursive: true });
    writeFileSync(join(root, 'package.json'), '{"name":"plugin"}');
    writeFileSync(join(root, 'sub/deeper/file.txt'), 'inside');
    symlinkSync('sub/deeper/file.txt', join(root, 'inner-link'));
    symlinkSync(join(root, 'sub'), join(root, 'absolute-inner'));
    symlinkSync(join(host, 'shadow'), join(root, 'quiver.json'));
    symlinkSync('../../../../../../../../..' + join(host, 'package.json'), join(root, 'relative-out.json'));
    symlinkSync(host, join(root, 'hostdir'));
    symlinkSync(join(host, 'no-such-file'), join(root, 'dangling-out'));
    symlinkSync('loop-b', join(root, 'loop-a'));
    symlinkSync('loop-a', join(root, 'loop-b'));
    execFileSync('mkfifo', [join(root, 'fifo')]);
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(host, { recursive: true, force: true });
  });

  /** Expects a SourceFileError for `reason` whose message never carries the host file's content. */
  async function refused(work: Promise<unknown>, reason: string): Promise<void> {
    await assert.rejects(work, (error: unknown) => {
      assert.ok(error instanceof SourceFileError, String(error));
      assert.equal(error.code, 'invalid_input');
      assert.equal((error.details as { reason: string }).reason, reason);
      assert.ok(!error.message.includes('root:$6$') && !error.message.includes('9.9.9'), error.message);
      return true;
    });
  }

  it('reads files and links that stay inside the root; a missing file is undefined', async () => {
    assert.equal(await readSourceFile(root, 'package.json'), '{"name":"plugin"}');
    assert.equal(await readSourceFile(root, './sub/deeper/../deeper/file.txt'), 'inside');
    assert.equal(await readSourceFile(root, 'inner-link'), 'inside');
    assert.equal(await readSourceFile(root, 'absolute-inner/deeper/file.txt'), 'inside');
    assert.equal(await readSourceFile(root, 'nothing.json'), undefined);
    assert.equal(await readSourceFile(root, 'package.json/below'), undefined);
    assert.equal(await readSourceHead(root, 'sub/deeper/file.txt', 3), 'ins');
  });

  it('works when the root itself is reached through a link', async () => {
    const alias = join(host, 'alias-of-root');
    symlinkSync(root, alias);
    try {
      assert.equal(await readSourceFile(alias, 'inner-link'), 'inside');
      await refused(readSourceFile(alias, 'quiver.json'), 'outside');
    } finally {
      rmSync(alias);
    }
  });

  it('refuses links out of the root, absolute and relative, to files and folders, existing or not', async () => {
    await refused(readSourceFile(root, 'quiver.json'), 'outside');
    await refused(readSourceFile(root, 'relative-out.json'), 'outside');
    await refused(readSourceFile(root, 'hostdir/package.json'), 'outside');
    // A dangling link out is refused the same way: no oracle about which host files exist.
    await refused(readSourceFile(root, 'dangling-out'), 'outside');
    await refused(readSourceHead(root, 'quiver.json', 200), 'outside');
  });

  it('refuses paths that are not relative paths inside the root', async () => {
    await refused(readSourceFile(root, '../outside.json'), 'outside');
    await refused(readSourceFile(root, 'sub/../../x'), 'outside');
    await refused(readSourceFile(root, join(host, 'shadow')), 'outside');
    await refused(readSourceFile(root, 'package.json\0.txt'), 'invalid-path');
    await refused(resolveInsideRoot(root, 'loop-a'), 'link-loop');
  });

  it('refuses a FIFO without blocking and a file over the size cap', async () => {
    await refused(readSourceFile(root, 'fifo'), 'not-a-file');
    await refused(readSourceFile(root, 'sub'), 'not-a-file');
    await refused(readSourceFile(root, 'package.json', { maxBytes: 5 }), 'too-large');
  });

  it('reports bad JSON by file and position, never by quoting it', () => {
    const result = parseSourceJson(HOST_SECRET, 'quiver.json');
    assert.ok('error' in result);
    assert.match(result.error, /^quiver\.json is not valid JSON/);
    assert.ok(!result.error.includes('root'), result.error);
    assert.deepEqual(parseSourceJson('{"a":1}', 'x.json'), { value: { a: 1 } });
  });
});
