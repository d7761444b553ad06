/**
 * Issue #28: the stdio gateway's transport reads the client's stdin itself once the opening
 * line chose the era; no stream sits between them (a PassThrough there re-emitted every message,
 * ~5 % of the server's CPU per call). The opening bytes are put back in front of stdin, so
 * messages that came in the same chunk as the opening line are answered too.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough, type Writable } from 'node:stream';
import { createGateway, type Gateway } from '../../src/gateway/gateway.ts';
import { runStdioGateway, type StdioGateway } from '../../src/gateway/stdio.ts';
import { createLocalTestBackend, type LocalTestBackend } from '../helpers/gateway-backend/local-backend.ts';
import { collectStdioFrames, identity, marketplace, standardPlugins, waitForFrame } from './helpers.ts';

type Frame = { id?: number; result?: { tools?: unknown[]; serverInfo?: unknown }; error?: unknown };

/** A client's stdin that remembers every stream it was piped into. */
class RecordingStdin extends PassThrough {
  readonly pipedInto: Writable[] = [];
  override pipe<T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T {
    this.pipedInto.push(destination as unknown as Writable);
    return super.pipe(destination, options);
  }
}

describe('the stdio gateway reads stdin itself (issue #28)', { timeout: 120_000 }, () => {
  let backend: LocalTestBackend;
  let gateway: Gateway;
  const connections: StdioGateway[] = [];

  before(async () => {
    backend = await createLocalTestBackend({ plugins: standardPlugins(), marketplace });
    gateway = createGateway({ backend, options: { sessions: { sweepIntervalMs: 0 } } });
  });
  after(async () => {
    await Promise.allSettled(connections.map((connection) => connection.close()));
    await gateway?.close();
    await backend?.close();
  });

  it('answers the messages that came in the opening chunk, and pipes stdin nowhere', async () => {
    const stdin = new RecordingStdin();
    const stdout = new PassThrough();
    const frames = collectStdioFrames<Frame>(stdout);
    const connection = await runStdioGateway({ gateway, identity: identity(), stdin, stdout });
    connections.push(connection);
    // initialize, initialized and tools/list in one write: one chunk for the opening reader.
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-stream', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    ];
    stdin.write(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    await waitForFrame(frames, (frame) => frame.id === 2);
    assert.ok(frames.find((frame) => frame.id === 1)?.result?.serverInfo, `no initialize answer: ${JSON.stringify(frames)}`);
    const listed = frames.find((frame) => frame.id === 2);
    assert.ok(Array.isArray(listed?.result?.tools), `no tools/list answer: ${JSON.stringify(frames)}`);
    assert.equal(connection.era, 'legacy');
    assert.deepEqual(stdin.pipedInto.length, 0, 'stdin was piped into another stream');
    await connection.close();
    // Closed: stdin is left paused, so a client holding the pipe open keeps no process alive.
    assert.equal(stdin.isPaused(), true);
  });
});
