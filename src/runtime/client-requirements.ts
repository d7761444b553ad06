/**
 * @module runtime/client-requirements
 * Which client capabilities a plugin's tools need (issue #24). A 2026-07-28 request carries the
 * client's capabilities in its `_meta`, so a modern plugin may list a tool only to a client
 * that declared what the tool uses (a tool that asks the user lists only with `elicitation`).
 * Discovery lists such a plugin's tools once with everything Quiver declares, then once per
 * requirable capability with that one left out: a tool missing from the listing without X
 * needs X. Leaving one out at a time (rather than listing with none, then each alone) finds a
 * tool that needs two capabilities at once (absent from both listings that drop one of them).
 *
 * The capabilities listed are the client capabilities the 2026-07-28 schema names that a
 * server can make a tool depend on: `sampling`, `elicitation` and `roots`. `experimental` is
 * not a spec capability anyone can test, and the extensions Quiver declares (MCP Apps) are
 * declared for every caller (the gateway passes views through), so leaving them out would
 * learn nothing a caller could lack. A 2025-era plugin fixes its capabilities once per
 * handshake: learning the same would take one more process start (sandbox, handshake) per
 * capability at every install and sync, and the runtime serves every session from one
 * connection that declared them all; its tools are taken as needing nothing (as before),
 * and a pushed request the session's client did not declare is still refused per call
 * (`supervisor/session-routing.ts`).
 */
import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/client';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { listAllTools, UPSTREAM_CLIENT_CAPABILITIES, type ListOptions, type UpstreamConnection } from './upstream-connection.ts';

/** The client capabilities a tool may be found to need, in the order they are reported. */
export const REQUIRABLE_CLIENT_CAPABILITIES = ['sampling', 'elicitation', 'roots'] as const;

/** One of `REQUIRABLE_CLIENT_CAPABILITIES`. */
export type RequirableCapability = (typeof REQUIRABLE_CLIENT_CAPABILITIES)[number];

/** Per tool name, the client capabilities it needs (tools that need none are absent). */
export type ClientRequirements = Record<string, RequirableCapability[]>;

/** Quiver's declared capabilities without one of them (the `_meta` of one listing). */
function without(capability: RequirableCapability): Record<string, unknown> {
  const { [capability]: _left, ...rest } = UPSTREAM_CLIENT_CAPABILITIES;
  return rest;
}

/**
 * The requirements of `tools` (the plugin's full listing) on a modern connection: three more
 * `tools/list` requests on the same connection, each all pages. A listing the plugin answers
 * with an error teaches nothing: its capability is required by no tool, and a warning says so.
 */
export async function listClientRequirements(
  made: Pick<UpstreamConnection, 'client' | 'era'>,
  tools: readonly Tool[],
  options: ListOptions,
  warnings: string[],
): Promise<ClientRequirements> {
  if (made.era !== 'modern' || tools.length === 0) return {};
  const listings = await Promise.all(
    REQUIRABLE_CLIENT_CAPABILITIES.map(async (capability) => {
      try {
        const listed = await listAllTools(made.client, { ...options, meta: { [CLIENT_CAPABILITIES_META_KEY]: without(capability) } });
        return { capability, names: new Set(listed.map((tool) => tool.name)) };
      } catch (error) {
        if (!(error instanceof McpError)) throw error;
        warnings.push(`tools/list without the ${capability} capability failed: ${error.message}`);
        return undefined;
      }
    }),
  );
  const requirements: ClientRequirements = {};
  for (const tool of tools) {
    const needs = listings.flatMap((listing) => (listing !== undefined && !listing.names.has(tool.name) ? [listing.capability] : []));
    if (needs.length > 0) requirements[tool.name] = needs;
  }
  return requirements;
}
