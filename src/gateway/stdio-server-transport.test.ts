import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JsonLinesServerTransport } from './stdio-server-transport.ts';

/** A transport over two in-memory pipes, recording what it delivers and reports. */
async function open(options: { maxBufferSize?: number } = {}) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new JsonLinesServerTransport(stdin, stdout, options);
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  let closed = 0;
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error);
  transport.onclose = () => closed++;
  await transport.start();
  return { stdin, stdout, transport, messages, errors, closed: () => closed };
}

/** Lets the stream deliver what was written. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });

describe('stdio server transport: reading the client (issue #28)', () => {
  it('reassembles a line split over chunks and reads several lines from one chunk (CRLF too)', async () => {
    const { stdin, messages, errors } = await open();
    const line = JSON.stringify(ping(1));
    stdin.write(line.slice(0, 7));
    await settle();
    assert.equal(messages.length, 0);
    stdin.write(`${line.slice(7)}\n${JSON.stringify(ping(2))}\r\n${JSON.stringify(ping(3))}`);
    await settle();
    assert.deepEqual(messages, [ping(1), ping(2)]);
    stdin.write('\n');
    await settle();
    assert.deepEqual(messages, [ping(1), ping(2), ping(3)]);
    assert.deepEqual(errors, []);
  });

  it('a line that is not JSON, or not an object, is reported and skipped; the next line in the chunk is read', async () => {
    const { stdin, messages, errors, closed } = await open();
    stdin.write(`not json\n[1,2]\n"text"\n${JSON.stringify(ping(4))}\n`);
    await settle();
    assert.deepEqual(messages, [ping(4)]);
    assert.equal(errors.length, 3);
    assert.equal(closed(), 0);
  });

  it('a JSON object that is no JSON-RPC message goes to the protocol layer, which reports it as such', async () => {
    // The SDK's reader refused it with its own schema parse; the protocol layer makes the same check.
    const { stdin, messages } = await open();
    stdin.write('{"hello":"world"}\n');
    await settle();
    assert.deepEqual(messages, [{ hello: 'world' }]);
  });

  it('unterminated input past the bound is reported and ends the connection, as with the SDK transport', async () => {
    const { stdin, errors, closed, messages, transport } = await open({ maxBufferSize: 64 });
    stdin.write('x'.repeat(100));
    await settle();
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.message, /exceeded maximum size of 64 bytes/);
    assert.equal(closed(), 1);
    await transport.close();
    assert.equal(closed(), 1, 'closing again reports nothing more');
    stdin.write(`${JSON.stringify(ping(5))}\n`);
    await settle();
    assert.deepEqual(messages, [], 'nothing is read after the close');
  });

  it('writes each message as one line in one write, and pauses stdin on close when nothing else reads it', async () => {
    const { stdin, stdout, transport } = await open();
    const writes: string[] = [];
    const write = stdout.write.bind(stdout);
    stdout.write = ((chunk: string, ...rest: never[]) => {
      writes.push(chunk);
      return write(chunk, ...rest);
    }) as typeof stdout.write;
    await transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    assert.deepEqual(writes, ['{"jsonrpc":"2.0","id":1,"result":{}}\n']);
    await transport.close();
    assert.equal(stdin.isPaused(), true);
  });

  it('an SDK server on it answers a request that follows bad lines and a non-message object in the same chunk', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const server = new Server({ name: 't', version: '1' }, { capabilities: {} });
    const reported: string[] = [];
    server.onerror = (error) => reported.push(error.message);
    await server.connect(new JsonLinesServerTransport(stdin, stdout));
    const answers: string[] = [];
    stdout.on('data', (chunk: Buffer) => answers.push(...chunk.toString('utf8').split('\n').filter((line) => line !== '')));
    stdin.write(`garbage\n{"hello":"world"}\n${JSON.stringify(ping(7))}\n`);
    await settle();
    await settle();
    assert.deepEqual(answers.map((line) => JSON.parse(line) as unknown), [{ jsonrpc: '2.0', id: 7, result: {} }]);
    assert.ok(reported.some((message) => message.includes('Unknown message type')), reported.join('; '));
    await server.close();
  });
});
