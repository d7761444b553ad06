/**
 * @module runtime/upstream-connection
 * What a live plugin connection is and what can be done with one without the MCP SDK's client
 * stacks: the connection's types, the capabilities Quiver offers every plugin, and the
 * paginated list helpers discovery needs. `upstream-client.ts` makes connections and loads both
 * client stacks (the 1.x SDK's and `@modelcontextprotocol/client`, ~3 MB of heap each); its
 * importers load it when the first plugin connects, so an idle server without plugins never
 * does (issue #28: idle memory).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Prompt, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { QUIVER_VERSION } from '../core/version.ts';
import { MCP_APPS_CLIENT_EXTENSIONS } from './mcp-apps-capability.ts';
import type { Redactor } from './redact.ts';
import type { LaunchDescription } from './sandbox.ts';

/** Why a connection ended. */
export interface ConnectionEnd {
  /** True when Quiver closed it (stop, idle, recycle); false for a crash or a dropped link. */
  requested: boolean;
  reason: string;
}

/** The protocol era a connection speaks (issue #24): the 2025 handshake, or 2026-07-28 per-request `_meta`. */
export type ProtocolEra = 'legacy' | 'modern';

/** A live client to one plugin server. */
export interface UpstreamConnection {
  /** A 1.x client; for a modern plugin, one answered by the v2 SDK (`modern-client.ts`). */
  client: Client;
  era: ProtocolEra;
  /** Pid of the plugin process (the launcher's pid, which execs into the sandbox). */
  pid: number | undefined;
  startedAt: number;
  launch: LaunchDescription | undefined;
  isOpen(): boolean;
  /** Registers a listener for the end of the connection (called once). */
  onEnd(listener: (end: ConnectionEnd) => void): void;
  /** The last few KB of the plugin's stderr, redacted. */
  stderrTail(): string;
  /** Closes the connection and, for a process, kills its whole tree. */
  close(): Promise<void>;
}

/** Options for connecting. */
export interface ConnectOptions {
  /** Handshake (initialize) timeout in ms. */
  startTimeoutMs: number;
  redact: Redactor;
  clock: { now(): number };
  /** Aborting kills a plugin still in its handshake. */
  signal?: AbortSignal;
  /**
   * The OAuth access token of a remote plugin's URL (issue #27, `plugins/oauth`), asked before
   * every request so a token is refreshed before it expires; undefined: the server was never
   * authorized (static headers only).
   */
  authorization?: ((url: string, owner: string | undefined) => Promise<string | undefined>) | undefined;
  /**
   * The fetch of a remote plugin's requests (issue #27): the SSRF guard that refuses loopback,
   * private and link-local addresses the admin did not admit, checked again on each connection
   * (`plugins/oauth/network-guard.ts`). Absent: the platform's fetch.
   */
  fetch?: typeof fetch | undefined;
}

/** The client Quiver introduces itself as to every plugin. */
export const clientInfo = { name: 'quiver', version: QUIVER_VERSION };

/**
 * What Quiver offers every plugin as a client (issue #12 "Forwarding"): sampling, elicitation
 * and roots, each answered by the gateway session whose call caused the request and refused
 * with a clear error when that session's client did not declare it (`supervisor/session-routing.ts`).
 */
export const UPSTREAM_CLIENT_CAPABILITIES = Object.freeze({
  sampling: { tools: {} },
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
  // Issue #24: app views pass through to the hosts behind Quiver (MCP Apps).
  extensions: MCP_APPS_CLIENT_EXTENSIONS,
});
/** The plugin's process ended during the era probe (some legacy servers exit on a request before `initialize`). */
export class EraProbeClosed extends Error {
  constructor() {
    super('the process ended during the server/discover probe');
  }
}
/** Options for list calls. */
export interface ListOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Safety bound on pages followed (a server returning cursors forever). */
  maxPages?: number;
  /** `_meta` sent with every page (a modern plugin's listing for other client capabilities, `client-requirements.ts`). */
  meta?: Record<string, unknown>;
}

async function paginate<T>(fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>, maxPages: number): Promise<T[]> {
  const out: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page += 1) {
    const result = await fetchPage(cursor);
    out.push(...result.items);
    if (!result.nextCursor || seen.has(result.nextCursor)) return out;
    seen.add(result.nextCursor);
    cursor = result.nextCursor;
  }
  return out;
}

/** The SDK request options of a list call. */
function requestOptions(options: ListOptions): { timeout: number | undefined; signal: AbortSignal | undefined } {
  return { timeout: options.timeoutMs, signal: options.signal };
}

/** Lists every tool, following `nextCursor`. */
export function listAllTools(client: Client, options: ListOptions): Promise<Tool[]> {
  return paginate(async (cursor) => {
    const result = await client.listTools({ ...(cursor ? { cursor } : {}), ...(options.meta ? { _meta: options.meta } : {}) }, requestOptions(options));
    return { items: result.tools, nextCursor: result.nextCursor };
  }, options.maxPages ?? 100);
}

/** Lists every resource (empty when the server has no resources capability). */
export function listAllResources(client: Client, options: ListOptions): Promise<Resource[]> {
  if (!client.getServerCapabilities()?.resources) return Promise.resolve([]);
  return paginate(async (cursor) => {
    const result = await client.listResources(cursor ? { cursor } : {}, requestOptions(options));
    return { items: result.resources, nextCursor: result.nextCursor };
  }, options.maxPages ?? 100);
}

/** Lists every prompt (empty when the server has no prompts capability). */
export function listAllPrompts(client: Client, options: ListOptions): Promise<Prompt[]> {
  if (!client.getServerCapabilities()?.prompts) return Promise.resolve([]);
  return paginate(async (cursor) => {
    const result = await client.listPrompts(cursor ? { cursor } : {}, requestOptions(options));
    return { items: result.prompts, nextCursor: result.nextCursor };
  }, options.maxPages ?? 100);
}
