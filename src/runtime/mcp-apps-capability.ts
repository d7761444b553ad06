/**
 * @module runtime/mcp-apps-capability
 * MCP Apps (the `io.modelcontextprotocol/ui` extension, issue #24) as Quiver declares it to
 * plugins. Servers offer their app views (tools with `_meta.ui`, `ui://` resources) only to
 * clients that declare the extension with the view MIME type, and Quiver passes views through
 * to the hosts behind it (`gateway/mcp-apps.ts`), so every plugin connection declares it: at
 * `initialize` for 2025-era plugins, and in each request's capabilities for 2026-07-28 ones.
 */

/** The extension's identifier. */
export const MCP_APPS_EXTENSION = 'io.modelcontextprotocol/ui';

/** The `extensions` part of Quiver's client capabilities toward plugins. */
export const MCP_APPS_CLIENT_EXTENSIONS: Readonly<Record<string, object>> = Object.freeze({
  [MCP_APPS_EXTENSION]: Object.freeze({ mimeTypes: ['text/html;profile=mcp-app'] }),
});
