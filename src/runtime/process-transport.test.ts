import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ProcessTransport } from './process-transport.ts';

/** A stdio "plugin" that writes `output` in one write, then waits for stdin to close. */
function writer(output: string): ProcessTransport {
  const source = `process.stdout.write(${JSON.stringify(output)}); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;
  return new ProcessTransport({ command: process.execPath, args: ['-e', source], env: { PATH: process.env['PATH'] ?? '' }, cwd: process.cwd(), stopGraceMs: 1_000 });
}

/** Waits (up to 10 s) until `check` holds. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !check(); waited += 20) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const notification = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'after' } };

describe('process transport: reading the plugin output (issue #28)', () => {
  it('a line that is not JSON, or not an object, is reported and the lines after it in the same chunk still arrive', async () => {
    const transport = writer(`not json\n42\n${JSON.stringify(notification)}\r\n`);
    const messages: JSONRPCMessage[] = [];
    const errors: Error[] = [];
    transport.onmessage = (message) => messages.push(message);
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    try {
      // The SDK's ReadBuffer stopped at the bad line and kept the rest until the plugin wrote again.
      await until(() => messages.length === 1, 'the notification after the bad lines');
      assert.deepEqual(messages, [notification]);
      assert.equal(errors.length, 2);
      assert.match(errors[1]!.message, /not a JSON-RPC message: 42/);
    } finally {
      await transport.close();
    }
  });

  it('output beyond the buffer bound without a newline is dropped and reported', async () => {
    const transport = new ProcessTransport({
      command: process.execPath,
      args: ['-e', `process.stdout.write('x'.repeat(4096)); setTimeout(() => process.stdout.write('\\n' + ${JSON.stringify(JSON.stringify(notification))} + '\\n'), 200); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`],
      env: { PATH: process.env['PATH'] ?? '' },
      cwd: process.cwd(),
      stopGraceMs: 1_000,
      maxBufferSize: 1024,
    });
    const messages: JSONRPCMessage[] = [];
    const errors: Error[] = [];
    transport.onmessage = (message) => messages.push(message);
    transport.onerror = (error) => errors.push(error);
    await transport.start();
    try {
      await until(() => messages.length === 1, 'the notification after the overflow');
      assert.match(errors[0]!.message, /exceeded maximum size of 1024 bytes/);
      assert.deepEqual(messages, [notification]);
    } finally {
      await transport.close();
    }
  });

  it('an object that is no JSON-RPC message reaches the client, whose protocol layer refuses it', async () => {
    // What the SDK's ReadBuffer refused with its message schema is refused one step later by the client.
    const transport = writer(`${JSON.stringify({ jsonrpc: '2.0', surprise: true })}\n`);
    const client = new Client({ name: 'transport-test', version: '1.0.0' });
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    // Connecting sends initialize, which this plugin never answers: the refusal is all that is awaited.
    const connecting = client.connect(transport, { timeout: 15_000 }).catch(() => {});
    try {
      await until(() => errors.length > 0, 'the client to refuse the message');
      assert.match(errors[0]!.message, /Unknown message type/);
    } finally {
      await transport.close();
      await connecting;
    }
  });
});
