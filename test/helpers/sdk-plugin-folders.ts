/**
 * @module test/helpers/sdk-plugin-folders
 * Installable plugin folders built on the real MCP SDKs (issue #24): a fixture's files plus the
 * SDK packages it imports, copied from the repository's node_modules (the sandbox sees only the
 * plugin's own folder, so they cannot be linked). No registry access.
 */
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { repositoryRoot } from '../runtime/helpers.ts';

/** Packages an SDK 1.x stdio server loads (the SDK, its schema validator and zod). */
const SDK_1X = ['@modelcontextprotocol/sdk', 'ajv', 'ajv-formats', 'fast-deep-equal', 'fast-uri', 'json-schema-traverse', 'require-from-string', 'zod', 'zod-to-json-schema'];
/** Packages an SDK v2 server loads. */
const SDK_V2 = ['@modelcontextprotocol/server', '@modelcontextprotocol/core', 'zod'];

function withPackages(fixture: string, folder: string, packages: readonly string[]): string {
  cpSync(join(repositoryRoot, 'test/fixtures', fixture), folder, { recursive: true });
  const skip = (path: string): boolean => /\.(map|d\.[cm]?ts)$/.test(path);
  for (const name of packages) {
    mkdirSync(join(folder, 'node_modules', name), { recursive: true });
    cpSync(join(repositoryRoot, 'node_modules', name), join(folder, 'node_modules', name), { recursive: true, filter: (path) => !skip(path) });
  }
  return folder;
}

/** Quiver's conformance plugin (SDK 1.x, 2025 era: asks the user by pushed requests) in `folder`. */
export function conformancePluginFolder(folder: string): string {
  return withPackages('conformance-plugin', folder, SDK_1X);
}

/** The modern plugin's 2025-11-25 twin on SDK 1.x (the same tools; asks the user by pushed requests) in `folder`. */
export function legacyTwinPluginFolder(folder: string): string {
  return withPackages('legacy-twin-plugin', folder, SDK_1X);
}

/** The 2026-07-28-only plugin on the v2 SDK (asks the user by input_required) in `folder`. */
export function modernPluginFolder(folder: string): string {
  return withPackages('modern-plugin', folder, SDK_V2);
}

/** The MCP Apps plugin on the v2 SDK (a ui:// view and its tools; capabilities echoed) in `folder`. */
export function appsPluginFolder(folder: string): string {
  return withPackages('apps-plugin', folder, SDK_V2);
}

/** The 2026-07-28 plugin on the v2 SDK whose tool calls become Tasks-extension tasks, in `folder`. */
export function modernTaskPluginFolder(folder: string): string {
  return withPackages('modern-task-plugin', folder, SDK_V2);
}

/** The 2026-07-28 plugin on the v2 SDK whose tools/list varies with the request's client capabilities, in `folder`. */
export function capabilityPluginFolder(folder: string): string {
  return withPackages('capability-plugin', folder, SDK_V2);
}
