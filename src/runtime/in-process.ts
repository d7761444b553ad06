/**
 * @module runtime/in-process
 * Plugins served inside Quiver rather than by a process or a remote endpoint: today the MCP
 * server generated from an OpenAPI document (issue #14, `openapi/server.ts`). It is connected
 * to the supervisor's MCP client over the SDK's in-memory transport, so every call goes
 * through the same client, deadline, breaker, rate limits and call events as any plugin.
 * No third-party code runs, so there is nothing to sandbox; the generated server refuses any
 * host but the base URL's, and internal addresses unless an admin allowed them (issue #23).
 */
import { readFile } from 'node:fs/promises';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ErrorCodes, QuiverError } from '../core/errors.ts';
import { openApiToolDefinitions } from '../openapi/operations.ts';
import { createOpenApiServer } from '../openapi/server.ts';
import type { OpenApiSpec } from './types.ts';
import { newUpstreamClient, processlessConnection } from './upstream-client.ts';
import type { ConnectOptions, UpstreamConnection } from './upstream-connection.ts';

/** Largest pinned document accepted (bundled JSON). */
const DOCUMENT_LIMIT = 20 * 1024 * 1024;

async function readPinnedDocument(spec: OpenApiSpec): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(spec.document, 'utf8');
  } catch (error) {
    throw new QuiverError(ErrorCodes.unavailable, `plugin '${spec.pluginName}': cannot read its OpenAPI document (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); run 'quiver plugin update ${spec.pluginName}'`, {
      details: { reason: 'start_failed', pluginId: spec.pluginId },
    });
  }
  if (text.length > DOCUMENT_LIMIT) throw new QuiverError(ErrorCodes.unavailable, `plugin '${spec.pluginName}': its OpenAPI document is larger than ${DOCUMENT_LIMIT} bytes`);
  return JSON.parse(text) as unknown;
}

/** Starts the generated MCP server of an OpenAPI plugin and connects a client to it. */
export async function connectOpenApi(spec: OpenApiSpec, options: ConnectOptions): Promise<UpstreamConnection> {
  const toolSet = openApiToolDefinitions(await readPinnedDocument(spec));
  const server = createOpenApiServer({ toolSet, name: spec.pluginName, version: spec.version, baseUrl: spec.baseUrl, credentials: spec.env, guard: { pluginName: spec.pluginName, allow: spec.allowInternal } });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = newUpstreamClient();
  try {
    await server.connect(serverSide);
    await client.connect(clientSide, { timeout: options.startTimeoutMs, ...(options.signal ? { signal: options.signal } : {}) });
  } catch (error) {
    await server.close().catch(() => undefined);
    throw new QuiverError(ErrorCodes.unavailable, options.redact(`plugin '${spec.pluginName}' (OpenAPI) failed to start: ${(error as Error).message}`), {
      details: { reason: 'start_failed', pluginId: spec.pluginId },
    });
  }
  return processlessConnection(client, {
    clock: options.clock,
    lostReason: 'the in-process server closed',
    release: () => server.close().catch(() => undefined),
  });
}
