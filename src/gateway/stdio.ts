/**
 * @module gateway/stdio
 * The gateway over stdio: one session for the process's one client. stdout carries MCP only
 * (logs must go to stderr, STYLE.md habit 5). When the client goes away (stdin ends), the
 * session closes, which aborts in-flight calls so nothing keeps running for nobody.
 */
import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { SessionIdentity } from './backend.ts';
import { observeMcpTransport, type McpRequestObserver } from '../telemetry/index.ts';
import type { Gateway, GatewaySession } from './gateway.ts';

export interface RunStdioGatewayOptions {
  gateway: Gateway;
  identity: SessionIdentity;
  stdin?: Readable;
  stdout?: Writable;
  /** Times and traces the session's MCP requests at its transport (issue #16). */
  observer?: McpRequestObserver;
}

/** A running stdio gateway. */
export interface StdioGateway {
  session: GatewaySession;
  /** Resolves when the client disconnects or `close()` is called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** Serves one MCP session on stdin/stdout until the client disconnects. */
export async function runStdioGateway(options: RunStdioGatewayOptions): Promise<StdioGateway> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const session = await options.gateway.openSession(options.identity);
  const transport = new StdioServerTransport(stdin, stdout);
  if (options.observer) observeMcpTransport(transport, options.observer, session.id);
  // The SDK's stdio transport does not notice the end of stdin: the client is gone then.
  const onEnd = () => void session.close();
  stdin.once('end', onEnd);
  stdin.once('close', onEnd);
  await session.connect(transport);
  void session.closed.then(() => {
    stdin.off('end', onEnd);
    stdin.off('close', onEnd);
  });
  return { session, closed: session.closed, close: () => session.close() };
}
