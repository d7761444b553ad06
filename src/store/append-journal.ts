/**
 * @module store/append-journal
 * A small append-only journal of JSON lines for records acknowledged before they are written
 * to the database (issue #23: an acknowledged selection event survives `kill -9`).
 *
 * `append` is one write(2) on a file opened with O_APPEND, a few microseconds and no database
 * work, so the quiet-period batching of the embedded database stays as it was (its writes hold
 * the event loop, issue #18); the record is in the kernel's page cache when `append` returns,
 * which is what survives the process being killed. It is not fsynced per record: an fsync costs
 * milliseconds of disk latency on every acknowledgement, and a power loss is outside this
 * promise (the embedded database's own commits are the limit there).
 *
 * Records are settled once the database has them; a segment whose records are all settled is
 * emptied (the active one, with ftruncate) or deleted (a rotated one). A record the database did
 * not take for a reason that is not its own (the database failed, the queue overflowed) is
 * retained: its segment stays on disk and is read again at the next open. Records read back at
 * open are given to the caller to write; `discardRecovered` then deletes those segments.
 */
import { closeSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Where a record was appended; handed back to `settle` or `retain`. */
export interface JournalTicket {
  readonly segment: number;
}

/** Options of `openAppendJournal`. */
export interface AppendJournalOptions<T> {
  /** The journal's own folder (created when missing). */
  directory: string;
  /** Checks one record read back; undefined drops it (a torn last line after a kill, or a foreign line). */
  parse(value: unknown): T | undefined;
  /** A segment holding records is rotated past this size (bytes, default 4 MiB). */
  maxSegmentBytes?: number;
}

/** An open journal. */
export interface AppendJournal<T> {
  /** The records of the previous run that were never settled, oldest first. */
  readonly recovered: readonly T[];
  /** Lines of the recovered segments that could not be read (torn or foreign). */
  readonly unreadable: number;
  /** Deletes the recovered segments (call once their records are in the database). */
  discardRecovered(): void;
  /** Appends one record; it is on disk (page cache) when this returns. Throws when the write fails. */
  append(record: T): JournalTicket;
  /** The database has this record (or refused it for its data): it need not be read again. */
  settle(ticket: JournalTicket): void;
  /** The database does not have this record and it is not the record's fault: keep it for the next open. */
  retain(ticket: JournalTicket): void;
  /** Closes the active segment; unsettled records stay on disk for the next open. */
  close(): void;
}

interface Segment {
  number: number;
  path: string;
  fd: number | undefined;
  bytes: number;
  pending: number;
  retained: boolean;
}

const SEGMENT = /^segment-(\d{1,15})\.jsonl$/;

function segmentPath(directory: string, number: number): string {
  return join(directory, `segment-${String(number).padStart(8, '0')}.jsonl`);
}

/** Opens (or creates) a journal and reads back what the previous run left. */
export function openAppendJournal<T>(options: AppendJournalOptions<T>): AppendJournal<T> {
  const { directory } = options;
  const maxSegmentBytes = options.maxSegmentBytes ?? 4 * 1024 * 1024;
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const found = readdirSync(directory)
    .map((name) => SEGMENT.exec(name))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => Number(match[1]))
    .sort((a, b) => a - b);
  const recovered: T[] = [];
  let unreadable = 0;
  for (const number of found) {
    for (const line of readFileSync(segmentPath(directory, number), 'utf8').split('\n')) {
      if (line.length === 0) continue;
      let record: T | undefined;
      try {
        record = options.parse(JSON.parse(line));
      } catch {
        record = undefined;
      }
      if (record === undefined) unreadable++;
      else recovered.push(record);
    }
  }
  let nextNumber = (found.at(-1) ?? 0) + 1;
  let recoveredSegments = [...found];
  const segments = new Map<number, Segment>();
  let active: Segment | undefined;

  function openSegment(): Segment {
    const number = nextNumber++;
    const path = segmentPath(directory, number);
    const segment: Segment = { number, path, fd: openSync(path, 'a', 0o600), bytes: 0, pending: 0, retained: false };
    segments.set(number, segment);
    return segment;
  }

  function closeFd(segment: Segment): void {
    if (segment.fd !== undefined) closeSync(segment.fd);
    segment.fd = undefined;
  }

  // A segment with nothing pending is emptied (active) or removed (rotated); a retained one stays for the next open.
  function release(segment: Segment): void {
    if (segment.pending > 0) return;
    if (segment.retained) {
      if (segment === active) active = undefined;
      closeFd(segment);
      segments.delete(segment.number);
      return;
    }
    if (segment === active) {
      if (segment.bytes > 0 && segment.fd !== undefined) ftruncateSync(segment.fd, 0);
      segment.bytes = 0;
      return;
    }
    closeFd(segment);
    unlinkSync(segment.path);
    segments.delete(segment.number);
  }

  function ticketSegment(ticket: JournalTicket): Segment | undefined {
    const segment = segments.get(ticket.segment);
    if (segment === undefined || segment.pending === 0) return undefined;
    segment.pending--;
    return segment;
  }

  return {
    recovered,
    unreadable,
    discardRecovered() {
      for (const number of recoveredSegments) unlinkSync(segmentPath(directory, number));
      recoveredSegments = [];
    },
    append(record) {
      if (active !== undefined && active.bytes >= maxSegmentBytes) {
        // Rotate: the full segment is deleted once its last record settles.
        const full = active;
        active = undefined;
        closeFd(full);
        if (full.pending === 0) release(full);
      }
      active ??= openSegment();
      const line = `${JSON.stringify(record)}\n`;
      const bytes = Buffer.byteLength(line);
      writeSync(active.fd!, line);
      active.bytes += bytes;
      active.pending++;
      return { segment: active.number };
    },
    settle(ticket) {
      const segment = ticketSegment(ticket);
      if (segment) release(segment);
    },
    retain(ticket) {
      const segment = ticketSegment(ticket);
      if (segment === undefined) return;
      segment.retained = true;
      release(segment);
    },
    close() {
      for (const segment of segments.values()) {
        closeFd(segment);
        // Nothing left to replay in it: an empty file need not outlive the process.
        if (segment.pending === 0 && !segment.retained) unlinkSync(segment.path);
      }
      segments.clear();
      active = undefined;
    },
  };
}
