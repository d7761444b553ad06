/**
 * @module openapi/bounded-body
 * Reading an HTTP body up to a size cap (a declared Content-Length over the cap is refused
 * before reading; a body growing past it is cancelled), for OpenAPI documents fetched by URL
 * and for API responses alike.
 */

/** A body that exceeded its cap. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** Reads `response`'s body up to `limit` bytes; throws BodyTooLargeError beyond. */
export async function readBounded(response: Response, limit: number): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > limit) {
    await response.body?.cancel();
    throw new BodyTooLargeError(limit);
  }
  const reader = response.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
