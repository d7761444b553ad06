/**
 * @module test/telemetry/meta-echo-plugin
 * A plugin folder holding a whole MCP server in one file with no imports outside Node (so it
 * runs under the UNVERIFIED sandbox), whose `echo_meta` tool answers with the `params._meta`
 * of the `tools/call` it received: the test reads the W3C trace context Quiver sent it.
 * `fail` always answers with a tool error.
 */
import { writeRawPluginFolder, type RawServerParts } from '../helpers/raw-mcp-server.ts';

const SERVER: RawServerParts = {
  name: 'meta-echo',
  tools: [
    { name: 'echo_meta', description: 'Echo the request metadata (_meta, trace context headers) this server received, for tracing diagnostics.', inputSchema: { type: 'object', properties: {} } },
    { name: 'fail', description: 'Always answers with a tool error, for testing error handling.', inputSchema: { type: 'object', properties: {} } },
  ],
  callTool: `
    if (message.params.name === 'echo_meta') return reply({ content: [{ type: 'text', text: JSON.stringify(message.params._meta ?? null) }] });
    return reply({ isError: true, content: [{ type: 'text', text: 'failed on purpose' }] });`,
};

/** Writes the plugin into `root/name` and returns the folder. */
export async function createMetaEchoPlugin(root: string, name: string): Promise<string> {
  return writeRawPluginFolder(root, name, { server: SERVER, description: 'Echoes the _meta of each tools/call' });
}
