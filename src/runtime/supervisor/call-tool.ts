/**
 * @module runtime/supervisor/call-tool
 * The path of one `tools/call` (runtime README "Per call"): admission (crash loop, breakers,
 * token buckets), a slot of each concurrency cap, then attempts on a pooled connection, each
 * with the full call timeout; a failed attempt is retried with backoff only when the PID has a
 * retry policy and the tool is read-only or idempotent (seed 000 §3.2.3). Every call ends in
 * exactly one `onCall` event and in the plugin's statistics (refusals in the event only).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError, isQuiverError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { sleep } from '../process-tree.ts';
import { retryPolicySchema, type CallEvent, type CallOutcome, type Clock, type RetryClass, type RetryPolicy, type UpstreamSpecInput } from '../types.ts';
import type { CallOptions } from './api.ts';
import { admitCall, type CallPermits } from './admission.ts';
import { classifyFailure } from './classify.ts';
import { createDeadline, type Deadline } from './deadline.ts';
import type { EntryRegistry } from './registry.ts';
import type { Requests } from './requests.ts';
import { answerRoomMs, claimFor, progressMeta, syncLogLevel, withCallerCapabilities, withProgressToken, type CallClaim } from './session-routing.ts';
import type { UpstreamConnection } from '../upstream-connection.ts';
import { requestTimeoutMs, type SupervisorSettings } from './settings.ts';
import type { Entry, Gate } from './state.ts';
import { SpanKind, inSpan, withTraceMeta } from '../../telemetry/tracing/spans.ts';

/** Calls a tool of a plugin. */
export type ToolCaller = (spec: UpstreamSpecInput, toolName: string, args?: Record<string, unknown>, options?: CallOptions) => Promise<CallToolResult>;

/** What the tool call path needs from the supervisor. */
export interface ToolCallerOptions {
  settings: Pick<SupervisorSettings, 'defaultTimeoutMs'>;
  clock: Clock;
  logger: Logger;
  gate: Gate;
  registry: Pick<EntryRegistry, 'resolve'>;
  requests: Pick<Requests, 'onConnection' | 'annotationsFor'>;
  onCall: ((event: CallEvent) => void) | undefined;
}

const noRetry = retryPolicySchema.parse({ maxAttempts: 1 });

/** The retry class of a failure: the plugin was slow, gone or failed (not the input, not Quiver's own refusals). */
function retryClassOf(error: QuiverError): RetryClass | undefined {
  if (error.code === ErrorCodes.timeout) return 'timeout';
  if (error.code === ErrorCodes.unavailable) return 'unavailable';
  if (error.code === 'upstream_error') return 'upstream_error';
  return undefined;
}

/** Whether the policy retries this class: the PID's `retryOn` when it names some (issue #29), else every class but tool errors. */
function retries(policy: RetryPolicy, retryClass: RetryClass | undefined): boolean {
  if (retryClass === undefined) return false;
  return policy.retryOn === undefined ? retryClass !== 'tool_error' : policy.retryOn.includes(retryClass);
}

function outcomeOf(error: QuiverError): CallOutcome {
  return error.code === ErrorCodes.timeout ? 'timeout' : 'error';
}

/**
 * The upstream `tools/call`: the connection's log level first, a progress token of Quiver's own
 * when the client asked for progress (its notifications are mapped back), and, for a caller that may be asked to answer (a form to fill), an SDK
 * timeout that leaves room for the answer: the call's own deadline stops meanwhile.
 */
async function forwardedCall(
  connection: UpstreamConnection,
  call: { toolName: string; args: Record<string, unknown>; callOptions: CallOptions; claim: CallClaim },
  signal: AbortSignal,
  remaining: () => number,
): Promise<CallToolResult> {
  const { toolName, args, callOptions, claim } = call;
  await syncLogLevel(connection.client, callOptions.caller, { signal, timeout: remaining() });
  return withProgressToken(connection.client, callOptions.onProgress, async (progressToken) => {
    const params = withCallerCapabilities({ name: toolName, arguments: args, ...progressMeta(progressToken) }, claim.caller, connection.era);
    // W3C trace context for the plugin in `_meta` when this call is traced (issue #16).
    return (await connection.client.callTool(withTraceMeta(params), undefined, {
      signal,
      timeout: remaining() + answerRoomMs(claim.caller),
    })) as CallToolResult;
  });
}

/** Creates `callTool`. */
export function createToolCaller(options: ToolCallerOptions): ToolCaller {
  const { settings, clock, logger, gate, registry, requests } = options;

  function emit(event: CallEvent): void {
    if (!options.onCall) return;
    try {
      options.onCall(event);
    } catch (error) {
      logger.warn({ error: (error as Error).message }, 'onCall listener threw');
    }
  }

  /** Seed 000 §3.2.3 retries apply only where a repeat cannot do harm (MCP annotations). */
  async function isIdempotent(entry: Entry, tool: string, callOptions: CallOptions, deadline: Deadline): Promise<boolean> {
    let annotations: { readOnlyHint?: boolean; idempotentHint?: boolean } | undefined = callOptions.annotations;
    if (!annotations) {
      try {
        annotations = await requests.annotationsFor(entry, tool, deadline);
      } catch {
        return false;
      }
    }
    return annotations?.readOnlyHint === true || annotations?.idempotentHint === true;
  }

  /** Attempts the call until it succeeds or may not be retried; settles the breaker permits. */
  async function attempt(entry: Entry, call: { toolName: string; args: Record<string, unknown>; callOptions: CallOptions; deadline: Deadline; permits: CallPermits; countAttempt(): number }): Promise<CallToolResult> {
    const { toolName, args, callOptions, deadline, permits } = call;
    const policy = entry.spec.execution.retryPolicy ?? noRetry;
    let delayMs = policy.initialDelayMs;
    // Another attempt only for a class the policy retries, attempts left, time for the delay, and a tool a repeat cannot harm.
    const mayRetry = async (retryClass: RetryClass | undefined, attempts: number) =>
      retries(policy, retryClass) && attempts < policy.maxAttempts && !deadline.signal.aborted && deadline.remaining() > delayMs && (await isIdempotent(entry, toolName, callOptions, deadline));
    const backOff = async (attempts: number, code: string) => {
      logger.debug({ pluginId: entry.spec.pluginId, tool: toolName, attempt: attempts, code }, 'retrying idempotent tool call');
      await sleep(delayMs, deadline.signal);
      delayMs = Math.min(policy.maxDelayMs, delayMs * policy.backoffMultiplier);
    };
    for (;;) {
      const attempts = call.countAttempt();
      let toolError = false;
      try {
        const claim = claimFor(callOptions.caller, deadline);
        const result = (await requests.onConnection(
          entry,
          deadline,
          `tools/call '${toolName}'`,
          (connection, signal, remaining) => forwardedCall(connection, { toolName, args, callOptions, claim }, signal, remaining),
          claim,
        )) as CallToolResult;
        entry.crashes.succeeded();
        // A tool error is retried only when the policy names `tool_error` (issue #29).
        toolError = result.isError === true && (await mayRetry('tool_error', attempts));
        if (!toolError) {
          // A tool-level error (isError) is the tool failing, not the plugin: it only moves the tool's breaker.
          permits.release('success', result.isError ? 'failure' : 'success');
          return result;
        }
      } catch (error) {
        const quiverError = error as QuiverError;
        const userFault = quiverError.code === ErrorCodes.invalidInput || quiverError.code === 'cancelled';
        if (userFault || !(await mayRetry(retryClassOf(quiverError), attempts))) {
          permits.release(userFault ? 'ignored' : 'failure', userFault ? 'ignored' : 'failure');
          throw quiverError;
        }
        await backOff(attempts, quiverError.code);
        continue;
      }
      if (toolError) await backOff(attempts, 'tool_error');
    }
  }

  // One CLIENT span per plugin call when traced (issue #16); untraced, `inSpan` only runs the call.
  return (specInput, toolName, args, callOptions) =>
    inSpan(`tools/call ${toolName}`, { kind: SpanKind.CLIENT, attributes: { 'gen_ai.tool.name': toolName, 'quiver.plugin.id': specInput.pluginId } }, () => callTool(specInput, toolName, args, callOptions));

  async function callTool(specInput: UpstreamSpecInput, toolName: string, args: Record<string, unknown> = {}, callOptions: CallOptions = {}): Promise<CallToolResult> {
    gate.ensureOpen();
    const entry = registry.resolve(specInput);
    const spec = entry.spec;
    const startedAt = clock.now();
    let attempts = 0;
    const finish = (outcome: CallOutcome, errorClass?: string): void => {
      const latencyMs = clock.now() - startedAt;
      if (outcome !== 'rejected') {
        entry.totals.calls += 1;
        if (outcome !== 'success') entry.totals.failures += 1;
        entry.window.record({ at: clock.now(), latencyMs, ok: outcome === 'success' });
      }
      emit({ pluginId: spec.pluginId, pluginName: spec.pluginName, version: spec.version, tool: toolName, latencyMs, outcome, errorClass, attempts, at: new Date(clock.now()) });
    };

    const admission = await admitCall(entry, toolName);
    if (!admission.admitted) {
      finish('rejected', admission.error.code);
      throw admission.error;
    }
    const what = `tools/call '${toolName}'`;
    const deadline = createDeadline(spec, what, requestTimeoutMs(spec, settings, callOptions.timeoutMs), callOptions.signal, clock);
    const releases: Array<() => void> = [];
    try {
      for (const semaphore of entry.limits.semaphores(toolName)) {
        try {
          releases.push(await semaphore.acquire(deadline.signal));
        } catch (error) {
          const quiverError = isQuiverError(error) ? error : classifyFailure({ spec, redact: entry.redact, what, signal: deadline.signal }, error);
          admission.permits.release('ignored', 'ignored');
          // A full queue is a refusal like an empty bucket; running out of time while queued is not.
          finish(quiverError.code === ErrorCodes.rateLimited ? 'rejected' : outcomeOf(quiverError), quiverError.code);
          throw quiverError;
        }
      }
      try {
        const result = await attempt(entry, { toolName, args, callOptions, deadline, permits: admission.permits, countAttempt: () => (attempts += 1) });
        finish(result.isError ? 'error' : 'success', result.isError ? 'tool_error' : undefined);
        return result;
      } catch (error) {
        const quiverError = error as QuiverError;
        finish(outcomeOf(quiverError), quiverError.code);
        throw quiverError;
      }
    } finally {
      for (const release of releases) release();
      deadline.dispose();
    }
  }
}
