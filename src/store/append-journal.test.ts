import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAppendJournal } from './append-journal.ts';

interface Note {
  n: number;
}

const parse = (value: unknown): Note | undefined =>
  typeof value === 'object' && value !== null && typeof (value as { n?: unknown }).n === 'number' ? { n: (value as { n: number }).n } : undefined;

describe('append journal', () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'quiver-journal-'));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  const open = (maxSegmentBytes?: number) => openAppendJournal<Note>({ directory, parse, ...(maxSegmentBytes === undefined ? {} : { maxSegmentBytes }) });
  const files = () => readdirSync(directory).sort();
  const bytesOnDisk = () => files().reduce((sum, name) => sum + statSync(join(directory, name)).size, 0);

  it('an appended record is on disk at once and read back by the next open when never settled (a killed process)', () => {
    const first = open();
    first.append({ n: 1 });
    first.append({ n: 2 });
    // No close: the process was killed. What is on disk is what the next run sees.
    const second = open();
    assert.deepEqual(second.recovered, [{ n: 1 }, { n: 2 }]);
    second.discardRecovered();
    assert.deepEqual(open().recovered, []);
  });

  it('a settled segment is emptied, so the next open has nothing to replay', () => {
    const journal = open();
    const a = journal.append({ n: 1 });
    const b = journal.append({ n: 2 });
    journal.settle(a);
    assert.ok(bytesOnDisk() > 0, 'one record still pending');
    journal.settle(b);
    assert.equal(bytesOnDisk(), 0);
    assert.deepEqual(open().recovered, []);
  });

  it('a retained record survives settling its neighbours and is replayed', () => {
    const journal = open();
    const a = journal.append({ n: 1 });
    const b = journal.append({ n: 2 });
    journal.retain(a);
    journal.settle(b);
    // New records go to a fresh segment; the retained one stays as it is.
    journal.settle(journal.append({ n: 3 }));
    assert.deepEqual(open().recovered, [{ n: 1 }, { n: 2 }]);
  });

  it('rotates full segments and deletes them once their records settle', () => {
    const journal = open(64);
    const tickets = Array.from({ length: 10 }, (_, n) => journal.append({ n }));
    assert.ok(files().length > 1, `rotated: ${files().join(', ')}`);
    for (const ticket of tickets.slice(0, 9)) journal.settle(ticket);
    // The full segments are gone; the active one still holds its settled neighbours of 9 (replay skips stored ids).
    const recovered = open(64).recovered.map((note) => note.n);
    assert.ok(recovered.includes(9) && recovered.every((n) => n >= 8), `recovered ${recovered.join(', ')}`);
    journal.settle(tickets[9]!);
    assert.equal(files().length, 1, 'only the active segment is left');
    assert.equal(bytesOnDisk(), 0);
  });

  it('skips a torn last line (killed mid-write) and counts it', () => {
    const journal = open();
    journal.append({ n: 1 });
    const [segment] = files();
    appendFileSync(join(directory, segment!), '{"n":');
    const next = open();
    assert.deepEqual(next.recovered, [{ n: 1 }]);
    assert.equal(next.unreadable, 1);
    assert.match(readFileSync(join(directory, segment!), 'utf8'), /^\{"n":1\}\n/);
  });

  it('close removes empty segments and keeps unsettled ones', () => {
    const journal = open();
    journal.settle(journal.append({ n: 1 }));
    journal.close();
    assert.deepEqual(files(), []);
    const again = open();
    again.append({ n: 2 });
    again.close();
    assert.deepEqual(open().recovered, [{ n: 2 }]);
  });
});
