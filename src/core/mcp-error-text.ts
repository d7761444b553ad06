/**
 * @module core/mcp-error-text
 * The MCP SDK's `McpError` writes `MCP error <code>: ` into `Error.message`, sends that message
 * on the wire, and the receiving client's `McpError` adds the prefix again: one upstream error
 * reached users as `MCP error -32602: MCP error -32602: …` (issue #15). The code travels beside
 * the text (`error.code`, `details.mcpCode`), so the prefixes are noise and are taken off.
 */

const SDK_PREFIX = /^(?:MCP error -?\d+: )+/;

/** `text` without the SDK's leading `MCP error <code>: ` prefixes (any number of them). */
export function withoutMcpErrorPrefix(text: string): string {
  return text.replace(SDK_PREFIX, '');
}
