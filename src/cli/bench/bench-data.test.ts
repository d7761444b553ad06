import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { QuiverError } from '../../core/errors.ts';
import { benchDataFile } from './bench-data.ts';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const lines = (url: URL) => readFileSync(url, 'utf8').split('\n').filter((line) => line.trim() !== '');

describe('benchDataFile', () => {
  it('finds every bench file inside the repository, with its licence beside it', () => {
    const expected: Array<[Parameters<typeof benchDataFile>[0], string, number]> = [
      ['seal-tools', 'tools.jsonl', 4076],
      ['seal-tools', 'dev.jsonl', 700],
      ['metatool', 'tools.jsonl', 199],
      ['metatool', 'dev.jsonl', 1734],
      ['metatool', 'examples.jsonl', 2940],
    ];
    for (const [set, file, count] of expected) {
      const url = benchDataFile(set, file);
      assert.ok(fileURLToPath(url).startsWith(join(repositoryRoot, 'bench', 'data')), `${fileURLToPath(url)} is outside the repository`);
      assert.equal(lines(url).length, count, `${set}/${file}`);
      assert.match(readFileSync(benchDataFile(set, 'LICENSE'), 'utf8'), set === 'metatool' ? /MIT License/ : /Apache License/);
      assert.match(readFileSync(benchDataFile(set, 'README.md'), 'utf8'), /\*\*Source:\*\*[\s\S]*\*\*Licence:\*\*[\s\S]*\*\*What was changed\*\*/);
    }
  });

  it('reads from another root when given one', () => {
    const root = mkdtempSync(join(tmpdir(), 'quiver-bench-data-'));
    try {
      mkdirSync(join(root, 'seal-tools'));
      writeFileSync(join(root, 'seal-tools', 'tools.jsonl'), '{"name":"a","description":"b"}\n');
      const url = benchDataFile('seal-tools', 'tools.jsonl', pathToFileURL(`${root}/`));
      assert.equal(fileURLToPath(url), join(root, 'seal-tools', 'tools.jsonl'));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a missing file is not_found, naming the file and where the data comes from', () => {
    const root = mkdtempSync(join(tmpdir(), 'quiver-bench-data-'));
    try {
      assert.throws(
        () => benchDataFile('metatool', 'dev.jsonl', pathToFileURL(`${root}/`)),
        (error: unknown) =>
          error instanceof QuiverError &&
          error.code === 'not_found' &&
          error.message.includes(join(root, 'metatool', 'dev.jsonl')) &&
          error.message.includes('bench/data/metatool/') &&
          error.message.includes('clone'),
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
