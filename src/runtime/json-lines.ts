/**
 * @module runtime/json-lines
 * The messages a stdio plugin writes, one JSON value per line, as the MCP client gets them.
 * Unlike the SDK's ReadBuffer it does not run the JSON-RPC message schema (zod) over each line:
 * the client's protocol layer (both SDK generations) type-checks every message it receives
 * against the same request, notification, result and error schemas, and reports one that is
 * none of them ("Unknown message type"), so that parse ran twice on every plugin answer
 * (issue #28: 1.3-2.2 against 2.8-5.9 µs per echo result read). What is not a JSON object is
 * refused here, as is output beyond the buffer bound. A bad line costs only that line: the
 * lines after it in the same chunk are read now, not when the plugin next writes.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The SDK's default bound on buffered, unterminated output (10 MiB). */
export const DEFAULT_MAX_LINE_BUFFER = 10 * 1024 * 1024;

/** Unterminated output grew past the bound and was dropped (the SDK's server transport closes on it). */
export class LineBufferOverflowError extends Error {
  constructor(maxBufferSize: number) {
    super(`ReadBuffer exceeded maximum size of ${maxBufferSize} bytes`);
    this.name = 'LineBufferOverflowError';
  }
}

/** Splits a byte stream into JSON messages. */
export class JsonLineReader {
  readonly #maxBufferSize: number;
  #buffer: Buffer | undefined;

  constructor(maxBufferSize = DEFAULT_MAX_LINE_BUFFER) {
    this.#maxBufferSize = maxBufferSize;
  }

  /**
   * Adds `chunk` and hands each complete line's message to `onMessage`; a line that is not a
   * JSON object goes to `onError` and the next lines are still read. Output growing beyond
   * the bound without a newline is dropped and reported (as the SDK's ReadBuffer does).
   */
  push(chunk: Buffer, onMessage: (message: JSONRPCMessage) => void, onError: (error: Error) => void): void {
    const size = (this.#buffer?.length ?? 0) + chunk.length;
    if (size > this.#maxBufferSize) {
      this.#buffer = undefined;
      onError(new LineBufferOverflowError(this.#maxBufferSize));
      return;
    }
    let buffer = this.#buffer ? Buffer.concat([this.#buffer, chunk]) : chunk;
    for (let end = buffer.indexOf(10); end !== -1; end = buffer.indexOf(10)) {
      const line = buffer.toString('utf8', 0, end > 0 && buffer[end - 1] === 13 ? end - 1 : end);
      buffer = buffer.subarray(end + 1);
      try {
        const message: unknown = JSON.parse(line);
        if (message === null || typeof message !== 'object' || Array.isArray(message)) throw new Error(`not a JSON-RPC message: ${line.slice(0, 200)}`);
        onMessage(message as JSONRPCMessage);
      } catch (error) {
        // A bad line, or a handler that threw on it, costs that line only.
        onError(error as Error);
      }
    }
    this.#buffer = buffer.length > 0 ? buffer : undefined;
  }

  /** Drops what is buffered (the process is gone). */
  clear(): void {
    this.#buffer = undefined;
  }
}
