import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { QuiverError } from '../../core/errors.ts';
import { createRedactor } from '../redact.ts';
import { classifyFailure, type FailedRequest } from './classify.ts';

const secret = 'sk-live-1234567890';

function request(overrides: Partial<FailedRequest> = {}): FailedRequest {
  return {
    spec: { pluginId: 'p1', pluginName: 'weather' },
    redact: createRedactor([secret]),
    what: "tools/call 'forecast'",
    signal: new AbortController().signal,
    ...overrides,
  };
}

const openConnection = { connection: { isOpen: () => true }, endReason: undefined };
const closedConnection = { connection: { isOpen: () => false }, endReason: 'exit code 3' };

describe('classifyFailure: what a failed request becomes', () => {
  it("the deadline's own timeout or cancellation wins over the error thrown", () => {
    const controller = new AbortController();
    const timeout = new QuiverError('timeout', 'did not answer');
    controller.abort(timeout);
    assert.equal(classifyFailure(request({ signal: controller.signal }), new McpError(ErrorCode.InternalError, 'x')), timeout);
  });

  it('a QuiverError passes through unchanged', () => {
    const error = new QuiverError('rate_limited', 'full');
    assert.equal(classifyFailure(request(), error), error);
  });

  it('a closed MCP connection is a crash, with the reason the transport gave', () => {
    const error = classifyFailure(request({ instance: closedConnection }), new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    assert.equal(error.code, 'unavailable');
    assert.equal(error.message, "plugin 'weather' crashed during tools/call 'forecast': exit code 3");
    assert.deepEqual(error.details, { reason: 'crashed', pluginId: 'p1' });
    const withoutInstance = classifyFailure(request(), new McpError(ErrorCode.ConnectionClosed, 'Connection closed'));
    assert.match(withoutInstance.message, /crashed during .*: the connection closed$/);
  });

  it('an MCP request timeout is a timeout', () => {
    const error = classifyFailure(request({ instance: openConnection }), new McpError(ErrorCode.RequestTimeout, 'Request timed out'));
    assert.equal(error.code, 'timeout');
    assert.equal(error.message, "plugin 'weather' did not answer tools/call 'forecast' in time");
  });

  it("invalid params and unknown methods are the caller's input, without the SDK's 'MCP error N:' prefix", () => {
    for (const code of [ErrorCode.InvalidParams, ErrorCode.MethodNotFound]) {
      const error = classifyFailure(request({ instance: openConnection }), new McpError(code, 'bad city'));
      assert.equal(error.code, 'invalid_input');
      assert.equal(error.message, "plugin 'weather' rejected tools/call 'forecast': bad city");
      assert.deepEqual(error.details, { pluginId: 'p1', mcpCode: code });
    }
  });

  it('other MCP errors are operational upstream errors', () => {
    const error = classifyFailure(request({ instance: openConnection }), new McpError(ErrorCode.InternalError, 'database down'));
    assert.equal(error.code, 'upstream_error');
    assert.equal(error.kind, 'operational');
    assert.equal(error.message, "plugin 'weather' failed tools/call 'forecast': database down");
  });

  it('a plain error on a connection that is gone is a crash; otherwise an upstream error', () => {
    assert.equal(classifyFailure(request({ instance: closedConnection }), new Error('EPIPE')).message, "plugin 'weather' crashed during tools/call 'forecast': exit code 3");
    const gone = classifyFailure(request({ instance: { connection: undefined, endReason: undefined } }), new Error('EPIPE'));
    assert.equal(gone.code, 'unavailable');
    assert.match(gone.message, /: EPIPE$/);
    const upstream = classifyFailure(request({ instance: openConnection }), 'a string');
    assert.equal(upstream.code, 'upstream_error');
    assert.equal(upstream.message, "plugin 'weather' failed tools/call 'forecast': a string");
  });

  it('credentials a plugin echoes back are hidden in every message', () => {
    const errors = [
      classifyFailure(request({ instance: openConnection }), new McpError(ErrorCode.InvalidParams, `bad key ${secret}`)),
      classifyFailure(request({ instance: openConnection }), new McpError(ErrorCode.InternalError, `bad key ${secret}`)),
      classifyFailure(request({ instance: openConnection }), new Error(`bad key ${secret}`)),
      classifyFailure(request({ instance: { connection: undefined, endReason: `died with ${secret}` } }), new Error('x')),
    ];
    for (const error of errors) assert.doesNotMatch(error.message, new RegExp(secret), error.message);
  });
});
