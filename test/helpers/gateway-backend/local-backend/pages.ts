/**
 * @module test/helpers/gateway-backend/local-backend/pages
 * Follows an MCP list's `nextCursor` until the server stops returning one.
 */

/** Every item of a paginated list, fetching page after page from the first (no cursor). */
export async function collectPages<T>(fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}
