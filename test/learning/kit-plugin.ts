/**
 * @module test/learning/kit-plugin
 * A plugin folder serving the learned-example catalog (catalog-fixture.ts) as a real MCP
 * server in one file with no imports outside Node, so it runs in the app's sandbox. Every
 * tool answers "ok"; a call with `{"fail": true}` answers a tool error.
 */
import { writeRawPluginFolder } from '../helpers/raw-mcp-server.ts';
import { LEARNING_TOOLS } from './catalog-fixture.ts';

/** Writes the kit plugin into `root/kit` and returns the folder. */
export async function createKitPluginFolder(root: string): Promise<string> {
  const tools = LEARNING_TOOLS.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: { type: 'object', properties: { text: { type: 'string' }, fail: { type: 'boolean' } } },
  }));
  return writeRawPluginFolder(root, 'kit', {
    description: 'Learned-example test kit',
    server: {
      name: 'kit',
      tools,
      callTool: `
        if (message.params.arguments?.fail === true) return reply({ isError: true, content: [{ type: 'text', text: 'failed on purpose' }] });
        return reply({ content: [{ type: 'text', text: 'ok ' + message.params.name }] });`,
    },
  });
}
