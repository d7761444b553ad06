/**
 * @module gateway/mrtr/input-rounds
 * Multi Round-Trip Requests toward a 2026-07-28 client (issue #24, SEP-2322). A `tools/call`,
 * `prompts/get` or `resources/read` runs with a client link that parks the call when the plugin
 * asks the user something (`parked-calls.ts`); the client then gets `input_required` with the
 * plugin's requests under keys of Quiver's own and a sealed `requestState`
 * (`request-state.ts`); its retry with `inputResponses` and that state hands the answers to the
 * waiting plugin, and is answered with the call's result or the next round. Requests the plugin
 * makes at once (`Promise.all`) are gathered into one round when they reach Quiver within the
 * gathering window (`gather-round.ts`); a plugin process descheduled between its writes on a
 * loaded machine can split them over two rounds, which the client answers in turn (a 2025 push
 * carries no mark of what was sent with it). A call that failed after the plugin
 * needed a capability the client did not declare in the request's `_meta` is answered with
 * -32021 naming it (SEP-2575). Log messages reach the client only when the request set a
 * log level (`_meta` logLevel).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { CreateMessageResultSchema, CreateMessageResultWithToolsSchema, ElicitResultSchema, ListRootsResultSchema, type LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import type { BackendCallOptions, ClientLink, ClientLinkCapabilities } from '../backend.ts';
import { gatherRound } from './gather-round.ts';
import { ParkedCall, type CallOutcome, type InputRequest, type ParkedCalls } from './parked-calls.ts';
import { openState, requestTarget, sealState, type StateBinding } from './request-state.ts';

/** What the input rounds of one gateway share. */
export interface InputRounds {
  parked: ParkedCalls;
  /** The requestState key (`requestStateKey`). */
  key: Uint8Array;
  now: () => number;
  /** How long the plugin must stay quiet before the requests it made are sent as one round, ms (default 50). */
  gatherMs?: number;
  /** This replica's id in the replica table (several replicas on PostgreSQL): sealed into each state as the call's route. */
  replica?: string;
}

/** The `input_required` result (2026-07-28). */
export interface InputRequiredAnswer {
  resultType: 'input_required';
  inputRequests: Record<string, InputRequest>;
  requestState: string;
}

/** Where a paused call's progress and log messages go: the request answering its current round. */
const currentRound = new WeakMap<ParkedCall, ServerContext>();

const LOG_ORDER: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** The request's `_meta` envelope keys (the SDK lifts them out of `_meta`). */
function envelopeOf(ctx: ServerContext): Record<string, unknown> {
  return (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
}

/** The capabilities the client declared in this request's `_meta` (2026-07-28 has no session to hold them). */
function declaredCapabilities(ctx: ServerContext): ClientLinkCapabilities {
  const declared = (envelopeOf(ctx)[CLIENT_CAPABILITIES_META_KEY] ?? {}) as ClientLinkCapabilities;
  return {
    ...(declared.sampling ? { sampling: declared.sampling } : {}),
    ...(declared.elicitation ? { elicitation: declared.elicitation } : {}),
    ...(declared.roots ? { roots: declared.roots } : {}),
  };
}

function logLevelOf(ctx: ServerContext): LoggingLevel | undefined {
  const level = envelopeOf(ctx)[LOG_LEVEL_META_KEY];
  return LOG_ORDER.includes(level as LoggingLevel) ? (level as LoggingLevel) : undefined;
}

/** The client link of a call that may pause: the plugin's requests park the call instead of reaching the client. */
function parkingLink(call: ParkedCall, first: ServerContext, sessionId: string): ClientLink {
  currentRound.set(call, first);
  return {
    // Each call its own id: the runtime attributes a plugin's request to exactly one call in flight.
    sessionId: `${sessionId}/input-${call.id}`,
    capabilities: declaredCapabilities(first),
    logLevel: () => logLevelOf(currentRound.get(call) ?? first),
    request: (request, options) => call.ask(request, options.signal),
    async notify(notification) {
      const ctx = currentRound.get(call) ?? first;
      // 2026-07-28: no log messages unless the request asked for them with a level.
      if (notification.method === 'notifications/message') {
        const wanted = logLevelOf(ctx);
        if (wanted === undefined || LOG_ORDER.indexOf(notification.params.level) < LOG_ORDER.indexOf(wanted)) return;
      }
      await ctx.mcpReq.notify(notification as Parameters<ServerContext['mcpReq']['notify']>[0]).catch(() => undefined);
    },
    refused: (capability) => call.refused.add(capability),
    pauses: true,
  };
}

/** Progress of a paused call goes to the request answering its current round, under that request's token. */
function progressFor(call: ParkedCall, first: ServerContext): BackendCallOptions['onProgress'] {
  return (progress) => {
    const ctx = currentRound.get(call) ?? first;
    const token = ctx.mcpReq._meta?.progressToken;
    if (token === undefined) return;
    void ctx.mcpReq.notify({ method: 'notifications/progress', params: { ...progress, progressToken: token } }).catch(() => undefined);
  };
}

/** Whether `value` is a valid answer to `request` (the client's answers are untrusted input). */
function validAnswer(request: InputRequest, value: unknown): value is Record<string, unknown> {
  if (request.method === 'elicitation/create') return ElicitResultSchema.safeParse(value).success;
  if (request.method === 'roots/list') return ListRootsResultSchema.safeParse(value).success;
  const params = request.params ?? {};
  const schema = params['tools'] !== undefined || params['toolChoice'] !== undefined ? CreateMessageResultWithToolsSchema : CreateMessageResultSchema;
  return schema.safeParse(value).success;
}

function invalidParams(message: string, data?: Record<string, unknown>): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message, data);
}

/** The call's result, or its error; -32021 when it failed after a capability the client lacks was refused. */
function finish<T>(call: ParkedCall, outcome: CallOutcome): T {
  const failed = 'error' in outcome || (outcome.result as { isError?: unknown } | undefined)?.isError === true;
  if (failed && call.refused.size > 0) {
    const requiredCapabilities = Object.fromEntries([...call.refused].map((capability) => [capability, {}]));
    throw new MissingRequiredClientCapabilityError({ requiredCapabilities }, `the plugin needed client capabilities this request did not declare: ${[...call.refused].join(', ')}`);
  }
  if ('error' in outcome) throw outcome.error;
  return outcome.result as T;
}

/** Waits for the call's next turn: its end, or the requests to show the client (gathered). */
async function nextAnswer<T>(inputRounds: InputRounds, call: ParkedCall, binding: StateBinding, reask: boolean): Promise<T | InputRequiredAnswer> {
  const gatherMs = inputRounds.gatherMs ?? 50;
  // Requests made together (Promise.all) arrive a few ms apart: send them as one round.
  if (!reask) await gatherRound(call, gatherMs);
  if (!call.outcome) {
    call.round += 1;
    const refusal = inputRounds.parked.hold(call);
    if (refusal === undefined) {
      const inputRequests = call.takeRequests();
      const requestState = sealState(inputRounds.key, { call: call.id, round: call.round, ...(inputRounds.replica ? { replica: inputRounds.replica } : {}) }, binding, inputRounds.now() + inputRounds.parked.limits.roundTtlMs);
      call.busy = false;
      return { resultType: 'input_required', inputRequests, requestState };
    }
    call.fail(new ProtocolError(ProtocolErrorCode.InvalidRequest, `Quiver cannot wait for this client's input: ${refusal}`));
    while (!call.outcome) await call.changed();
  }
  inputRounds.parked.release(call);
  return finish<T>(call, call.outcome);
}

/**
 * Answers one 2026-07-28 request whose plugin may ask the user something: a new request runs
 * `run` with a parking client link; a retry (`requestState`) resumes its paused call.
 */
export async function answerWithInput<T>(
  inputRounds: InputRounds,
  principal: string,
  ctx: ServerContext,
  params: { name?: unknown; uri?: unknown; arguments?: unknown },
  run: (forward: BackendCallOptions, signal: AbortSignal) => Promise<T>,
): Promise<T | InputRequiredAnswer> {
  const binding: StateBinding = { principal, target: requestTarget(ctx.mcpReq.method, params) };
  const sealed = ctx.mcpReq.requestState<unknown>();
  if (sealed !== undefined) {
    if (typeof sealed !== 'string') throw invalidParams('Invalid or expired requestState', { reason: 'invalid_request_state' });
    const opened = openState(inputRounds.key, sealed, binding, inputRounds.now());
    if ('refused' in opened) throw invalidParams('Invalid or expired requestState', { reason: 'invalid_request_state' });
    // A retry for a call another replica holds is forwarded there before it reaches this handler
    // (gateway/replica-forward.ts); here only when that replica could not be reached.
    if (opened.replica !== undefined && opened.replica !== inputRounds.replica) {
      throw invalidParams('the call this requestState resumes is held by another Quiver replica, which did not answer; send the request again without requestState', {
        reason: 'request_state_replica_gone',
      });
    }
    const call = inputRounds.parked.get(opened.call);
    if (!call || call.principal !== principal) {
      throw invalidParams(`the call this requestState resumes has ended (a call waits ${Math.round(inputRounds.parked.limits.roundTtlMs / 1000)} s for input, on the Quiver that started it); send the request again without requestState`, {
        reason: 'request_state_expired',
      });
    }
    if (call.round !== opened.round || call.busy) throw invalidParams('this requestState was already answered; use the one of the latest round', { reason: 'request_state_used' });
    call.busy = true;
    currentRound.set(call, ctx);
    const responses = (ctx.mcpReq.inputResponses ?? {}) as Record<string, unknown>;
    let missing = false;
    for (const key of call.unanswered()) {
      const request = call.waitingRequest(key);
      const response = responses[key];
      if (request === undefined) continue;
      if (response === undefined) missing = true;
      else if (!validAnswer(request, response)) {
        call.busy = false;
        throw invalidParams(`inputResponses.${key} is not a valid ${request.method} result`);
      } else call.answer(key, response);
    }
    // Unanswered requests are asked again at once (SEP-2322: re-request what is missing).
    return nextAnswer<T>(inputRounds, call, binding, missing);
  }
  const call = new ParkedCall(principal);
  call.busy = true;
  const link = parkingLink(call, ctx, principal);
  const onFirstAbort = (): void => {
    // The client went away before any input was asked: end the call as a plain request would.
    if (call.round === 0) call.fail(ctx.mcpReq.signal.reason);
  };
  ctx.mcpReq.signal.addEventListener('abort', onFirstAbort, { once: true });
  run({ client: link, onProgress: progressFor(call, ctx) }, call.abort.signal).then(
    (result) => call.settle({ result }),
    (error: unknown) => call.settle({ error }),
  );
  try {
    return await nextAnswer<T>(inputRounds, call, binding, false);
  } finally {
    ctx.mcpReq.signal.removeEventListener('abort', onFirstAbort);
  }
}
