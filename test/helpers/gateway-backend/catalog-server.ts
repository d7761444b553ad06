/**
 * @module test/helpers/gateway-backend/catalog-server
 * A real MCP server over stdio that serves a catalog of tools read from a file, for gateway
 * tests and benchmarks: `tools/list` returns the tools, `tools/call` echoes the tool name and
 * its arguments. Run it as a process:
 *
 *   node --import tsx test/helpers/gateway-backend/catalog-server.ts --jsonl tools.jsonl [--offset N] [--count M] [--name NAME]
 *   node --import tsx test/helpers/gateway-backend/catalog-server.ts --json catalog.json
 *
 * `tools.jsonl` lines follow the `quiver eval` tools format (`name`, `description`,
 * `parameters`); `catalog.json` is `{name, tools: [{name, description, inputSchema}]}`.
 * Logs nothing: stdout carries MCP.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const jsonlToolSchema = z.object({
  name: z.string().min(1),
  description: z.string().default(''),
  parameters: z.record(z.string(), z.unknown()).nullish(),
});
const catalogSchema = z.object({
  name: z.string().default('catalog'),
  tools: z.array(z.object({ name: z.string().min(1), description: z.string().default(''), inputSchema: z.record(z.string(), z.unknown()).optional() })),
});

/** Reads the tools the server will serve from its command line. */
export function loadCatalog(argv: string[]): { name: string; tools: Tool[] } {
  const { values } = parseArgs({
    args: argv,
    options: { jsonl: { type: 'string' }, json: { type: 'string' }, offset: { type: 'string' }, count: { type: 'string' }, name: { type: 'string' } },
  });
  if (typeof values.json === 'string') {
    const catalog = catalogSchema.parse(JSON.parse(readFileSync(values.json, 'utf8')));
    return {
      name: values.name ?? catalog.name,
      tools: catalog.tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: { type: 'object', ...tool.inputSchema } })),
    };
  }
  if (typeof values.jsonl !== 'string') throw new Error('catalog-server: pass --jsonl FILE or --json FILE');
  const offset = Number(values.offset ?? 0);
  const count = Number(values.count ?? Number.POSITIVE_INFINITY);
  const lines = readFileSync(values.jsonl, 'utf8').split('\n').filter((line) => line.trim() !== '');
  const tools = lines.slice(offset, offset + count).map((line) => {
    const tool = jsonlToolSchema.parse(JSON.parse(line));
    const parameters = tool.parameters && tool.parameters.type === 'object' ? tool.parameters : { type: 'object', properties: {} };
    return { name: tool.name, description: tool.description, inputSchema: parameters as Tool['inputSchema'] };
  });
  return { name: values.name ?? 'catalog', tools };
}

/** Starts the server on stdio. */
export async function runCatalogServer(argv: string[]): Promise<void> {
  const catalog = loadCatalog(argv);
  const byName = new Map(catalog.tools.map((tool) => [tool.name, tool]));
  const server = new Server({ name: catalog.name, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: catalog.tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (!byName.has(request.params.name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return { content: [{ type: 'text', text: `${request.params.name}: ${JSON.stringify(request.params.arguments ?? {})}` }] };
  });
  await server.connect(new StdioServerTransport());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runCatalogServer(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
    process.exit(1);
  });
}
