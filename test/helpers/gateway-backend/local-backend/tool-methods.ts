/**
 * @module test/helpers/gateway-backend/local-backend/tool-methods
 * The backend's tool methods: search (access first, then ranking: seed 004 §9.1 filters
 * inside the query, not after it), listing, lookup, calls, and the records tests assert on.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCodes, QuiverError } from '../../../../src/core/errors.ts';
import type { GatewayBackend } from '../../../../src/gateway/backend.ts';
import { findVisibleTool, visibleTools } from './access.ts';
import { lexicalTokens, rankTools } from './lexical.ts';
import type { BackendState } from './types.ts';
import { upstreamError } from './upstream-error.ts';

/** The tool methods over the shared state. */
export function createToolMethods(
  state: BackendState,
): Pick<GatewayBackend, 'searchTools' | 'listVisibleTools' | 'getTool' | 'callTool' | 'recordOutcome' | 'recordCall'> {
  const { plugins } = state;
  return {
    async searchTools(session, query, { limit }) {
      const terms = [...new Set(lexicalTokens(query))];
      const documentOf = (tool: { pluginName: string; qualifiedName: string }) => plugins.get(tool.pluginName)?.documents.get(tool.qualifiedName);
      const ranked = rankTools(visibleTools(plugins, session), terms, documentOf, limit);
      const eventId = randomUUID();
      const tools = ranked.map((entry) => ({ ...entry.tool, score: Math.round(entry.score * 1000) / 1000 }));
      state.searches.push({ eventId, sessionId: session.sessionId, query, offered: tools.map((tool) => tool.qualifiedName) });
      return { tools, eventId, warnings: terms.length === 0 ? ['the query has no searchable words'] : [] };
    },

    async listVisibleTools(session, listOptions = {}) {
      const all = visibleTools(plugins, session);
      if (!listOptions.visibility) return all;
      const tiers = new Set(listOptions.visibility);
      return all.filter((tool) => tiers.has(tool.visibility) || (listOptions.includePinned === true && tool.pinned === true));
    },

    async getTool(session, qualifiedName) {
      return findVisibleTool(plugins, session, qualifiedName)?.tool;
    },

    async callTool(session, qualifiedName, args, callOptions = {}) {
      const found = findVisibleTool(plugins, session, qualifiedName);
      if (!found) throw new QuiverError(ErrorCodes.notFound, `tool '${qualifiedName}' was not found`);
      const { plugin } = found;
      const client = await state.clientFor(plugin);
      try {
        const result = await client.callTool(
          { name: plugin.originalNames.get(qualifiedName)!, arguments: args },
          undefined,
          { ...(callOptions.signal ? { signal: callOptions.signal } : {}), timeout: plugin.spec.callTimeoutMs ?? 30_000 },
        );
        return result as CallToolResult;
      } catch (error) {
        throw upstreamError(plugin.spec, `a call of '${qualifiedName}'`, error, callOptions.signal);
      }
    },

    async recordOutcome(eventId, outcome) {
      state.outcomes.push({ eventId, ...outcome });
    },

    async recordCall(session, record) {
      state.calls.push({ ...record, sessionId: session.sessionId, orgId: session.orgId });
    },
  };
}
