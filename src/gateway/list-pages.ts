/**
 * @module gateway/list-pages
 * Cursor pagination of `tools/list` for both eras (issue #24, MCP server/utilities/pagination):
 * a list longer than the page size comes in pages, each but the last with a `nextCursor`. The
 * cursor is opaque to the client: the offset and a fingerprint of the list it was cut from, so a
 * cursor that was made up, altered, or cut from a list that has since changed is refused with
 * -32602 (Invalid params) instead of silently skipping or repeating tools.
 */
import { createHash } from 'node:crypto';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** Tools per `tools/list` page when the gateway is not told otherwise. */
export const DEFAULT_TOOLS_PAGE_SIZE = 500;

function fingerprint(names: readonly string[]): string {
  return createHash('sha256').update(names.join('\n')).digest('base64url').slice(0, 16);
}

function invalidCursor(why: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${why}; list again without a cursor`);
}

/** The page of `items` that `cursor` names (the first without one), with the cursor of the next page if any. */
export function pageOf<T extends { name: string }>(items: readonly T[], cursor: string | undefined, pageSize: number): { items: T[]; nextCursor?: string } {
  const names = items.map((item) => item.name);
  let offset = 0;
  if (cursor !== undefined) {
    let parsed: { o?: unknown; f?: unknown };
    try {
      parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o?: unknown; f?: unknown };
    } catch {
      throw invalidCursor('it is not a cursor this server gave');
    }
    if (typeof parsed?.o !== 'number' || !Number.isInteger(parsed.o) || parsed.o <= 0 || typeof parsed.f !== 'string') throw invalidCursor('it is not a cursor this server gave');
    if (parsed.f !== fingerprint(names)) throw invalidCursor('the list changed since it was given');
    if (parsed.o >= items.length) throw invalidCursor('it points past the end of the list');
    offset = parsed.o;
  }
  const end = offset + pageSize;
  const page = items.slice(offset, end);
  if (end >= items.length) return { items: page };
  return { items: page, nextCursor: Buffer.from(JSON.stringify({ o: end, f: fingerprint(names) })).toString('base64url') };
}
