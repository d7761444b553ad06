/**
 * @module test/helpers/gateway-backend/local-backend/types
 * What the test backend is configured with, what it exposes for assertions, and the state it
 * keeps per plugin and shares between its parts.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Logger } from '../../../../src/core/logger.ts';
import type { SearchDocument } from './lexical.ts';
import type { CallRecord, CatalogChange, GatewayBackend, GatewayTool, MarketplaceSuggestion, Visibility } from '../../../../src/gateway/backend.ts';

/** A plugin the test backend runs. */
export interface LocalPluginSpec {
  /** Plugin name (kebab-case): the `plugin` of `plugin__tool`. */
  name: string;
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Seed 002 manifest fields. */
  manifest?: {
    title?: string;
    summary?: string;
    whenToUse?: string[];
    whenNotToUse?: string[];
    tags?: string[];
    category?: string;
    visibility?: Visibility;
    stability?: 'stable' | 'beta' | 'experimental';
  };
  /** Per-tool visibility overrides (tool name → tier). */
  toolVisibility?: Record<string, Visibility>;
  /** Tool names pinned for every session. */
  pinned?: string[];
  /** Workspaces the plugin is enabled in (absent: all). */
  workspaces?: string[];
  /** Seed 004 §9.1 grants: organisations, roles, users (any match suffices; absent: everyone). */
  grants?: { orgs?: string[]; roles?: string[]; users?: string[] };
  /** Per-call timeout, ms (default 30 s). */
  callTimeoutMs?: number;
}

/** Options of `createLocalTestBackend`. */
export interface LocalBackendOptions {
  plugins: LocalPluginSpec[];
  /** Installable plugins for marketplace suggestions. */
  marketplace?: MarketplaceSuggestion[];
  logger?: Logger;
  /** Where plugin stderr goes (default: dropped). */
  pluginStderr?: 'inherit' | 'ignore';
}

/** The test backend, with what it recorded, for assertions. */
export interface LocalTestBackend extends GatewayBackend {
  readonly searches: Array<{ eventId: string; sessionId: string; query: string; offered: string[] }>;
  readonly outcomes: Array<{ eventId: string; toolsCalled: string[]; success: boolean }>;
  readonly calls: Array<CallRecord & { sessionId: string; orgId: string | null }>;
  /** Plugins that failed to start, and other trouble. */
  readonly warnings: string[];
  /** Starts a plugin and announces the catalog change. */
  addPlugin(spec: LocalPluginSpec): Promise<void>;
  /** Stops a plugin and announces the catalog change. */
  removePlugin(name: string): Promise<void>;
  /** The process id of a running plugin. */
  pluginPid(name: string): number | undefined;
  /** Every tool of every plugin, ignoring access (for benchmarks' bookkeeping). */
  allTools(): GatewayTool[];
  close(): Promise<void>;
}

/** One running (or failed) plugin: its connection and its tools with their search documents. */
export interface PluginState {
  spec: LocalPluginSpec;
  client: Client | undefined;
  transport: StdioClientTransport | undefined;
  connecting: Promise<Client> | undefined;
  tools: GatewayTool[];
  /** Qualified name → the tool's name at the plugin. */
  originalNames: Map<string, string>;
  /** Qualified name → the tool's search document. */
  documents: Map<string, SearchDocument>;
}

/** What the parts of the backend share. */
export interface BackendState {
  options: LocalBackendOptions;
  /** Plugins by name, in configured order. */
  plugins: Map<string, PluginState>;
  searches: LocalTestBackend['searches'];
  outcomes: LocalTestBackend['outcomes'];
  calls: LocalTestBackend['calls'];
  warnings: string[];
  /** The plugin's client, connecting (or reconnecting) first; `unavailable` when it cannot start. */
  clientFor(plugin: PluginState): Promise<Client>;
  emit(change: CatalogChange): void;
}
