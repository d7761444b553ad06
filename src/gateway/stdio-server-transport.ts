/**
 * @module gateway/stdio-server-transport
 * The 2025-era stdio connection's transport: what the SDK's StdioServerTransport does (JSON per
 * line from stdin, one `write` per message to stdout, waiting for `drain` when the pipe is full,
 * the connection closed when the unterminated input outgrows the buffer bound) without running
 * the JSON-RPC message schema (zod) over each line: the server's protocol layer type-checks
 * every message it receives against the same request, notification, result and error schemas
 * and reports one that is none of them ("Unknown message type"), so that parse ran twice on
 * every client request (issue #28; the plugin side reads the same way, runtime/json-lines.ts).
 * A line that is not JSON, or not an object, is reported through `onerror` and skipped, as the
 * SDK's reader does; no answer goes back for it in either.
 */
import type { Readable, Writable } from 'node:stream';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JsonLineReader, LineBufferOverflowError } from '../runtime/json-lines.ts';

/** A server transport over a readable (the client's requests) and a writable (the answers). */
export class JsonLinesServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #lines: JsonLineReader;
  #started = false;
  #closed = false;

  constructor(stdin: Readable, stdout: Writable, options: { maxBufferSize?: number } = {}) {
    this.#stdin = stdin;
    this.#stdout = stdout;
    this.#lines = new JsonLineReader(options.maxBufferSize);
  }

  readonly #onData = (chunk: Buffer | string): void => {
    this.#lines.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, this.#deliver, this.#onLineError);
  };

  readonly #deliver = (message: JSONRPCMessage): void => {
    this.onmessage?.(message);
  };

  readonly #onLineError = (error: Error): void => {
    this.onerror?.(error);
    // As the SDK's transport: input past the bound without a newline ends the connection.
    if (error instanceof LineBufferOverflowError) void this.close();
  };

  readonly #onStreamError = (error: Error): void => {
    this.onerror?.(error);
  };

  /** Starts reading the client's messages. */
  async start(): Promise<void> {
    if (this.#started) throw new Error('JsonLinesServerTransport already started');
    this.#started = true;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onStreamError);
  }

  /** Stops reading (stdin is paused when nothing else reads it) and reports the close, once. */
  async close(): Promise<void> {
    // Once: the overflow closes it and the protocol closes it again on its way out.
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onStreamError);
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    this.#lines.clear();
    this.onclose?.();
  }

  /** Writes one message as one line, in one write; resolves once the pipe takes more. */
  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#stdout.write(serializeMessage(message))) resolve();
      else this.#stdout.once('drain', resolve);
    });
  }
}
