/**
 * @module test/helpers/stateless-mcp-server
 * A real remote MCP server on loopback for the remote-plugin tests: the SDK's McpServer over
 * stateless Streamable HTTP (a fresh server per request, JSON answers), optionally behind a
 * bearer token, counting every request that reaches it (refused ones too).
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** A running server: its `/mcp` URL and port, the requests it got, and `close()`. */
export interface StatelessMcpServer {
  url: string;
  port: number;
  requests(): number;
  close(): Promise<void>;
}

/** Starts a server named `name` whose tools `register` adds; without `Bearer <token>` (when given) a request gets 401. */
export async function startStatelessMcpServer(options: {
  name: string;
  version: string;
  token?: string;
  register: (server: McpServer) => void;
}): Promise<StatelessMcpServer> {
  let requests = 0;
  const http: HttpServer = createServer(async (request, response) => {
    requests += 1;
    if (options.token !== undefined && request.headers.authorization !== `Bearer ${options.token}`) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
    const server = new McpServer({ name: options.name, version: options.version });
    options.register(server);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    requests: () => requests,
    // Idle keep-alive connections would hold close() until they time out.
    close: () => new Promise<void>((resolve) => (http.closeAllConnections(), http.close(() => resolve()))),
  };
}
