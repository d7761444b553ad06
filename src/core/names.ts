/**
 * @module core/names
 * Qualified tool names: an LLM sees `<plugin>__<tool>`. The separator is banned inside
 * plugin names and tool names at every entry point, so parsing is never ambiguous.
 */
import { invalidInput } from './errors.ts';

/** The separator between plugin and tool in a qualified name. */
export const NAME_SEPARATOR = '__';

/** Plugin names: kebab-case, 1–64 characters, no separator. */
export const PLUGIN_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/**
 * Tool names as MCP servers use them: letters, digits, `_ - .` (1–128 characters),
 * never containing the separator. Providers restrict names further (OpenAI: 64 characters).
 */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

// The zod schemas of both names live in name-schemas.ts: these checks load no schema library
// (issue #28: the command list, and with it `quiver --help`, imports this module).

/** True when `name` is a valid plugin name. */
export function isValidPluginName(name: string): boolean {
  return PLUGIN_NAME_PATTERN.test(name) && !name.includes('--');
}

/** True when `name` is a valid tool name. */
export function isValidToolName(name: string): boolean {
  return TOOL_NAME_PATTERN.test(name) && !name.includes(NAME_SEPARATOR);
}

/** Throws `invalid_input` unless `name` is a valid plugin name. */
export function assertPluginName(name: string): void {
  if (!isValidPluginName(name)) {
    throw invalidInput(
      `invalid plugin name '${name}': use lowercase letters, digits and single dashes (no "${NAME_SEPARATOR}")`,
    );
  }
}

/** Throws `invalid_input` unless `name` is a valid tool name. */
export function assertToolName(name: string): void {
  if (!isValidToolName(name)) {
    throw invalidInput(
      `invalid tool name '${name}': use letters, digits, "_", "-" and "." and never "${NAME_SEPARATOR}"`,
    );
  }
}

/** Formats `<plugin>__<tool>`, validating both parts. */
export function formatQualifiedName(pluginName: string, toolName: string): string {
  assertPluginName(pluginName);
  assertToolName(toolName);
  return `${pluginName}${NAME_SEPARATOR}${toolName}`;
}

/** A qualified name split into its parts. */
export interface QualifiedName {
  plugin: string;
  tool: string;
}

/** Parses `<plugin>__<tool>`; returns undefined for anything else. */
export function parseQualifiedName(qualified: string): QualifiedName | undefined {
  const at = qualified.indexOf(NAME_SEPARATOR);
  if (at <= 0) return undefined;
  const plugin = qualified.slice(0, at);
  const tool = qualified.slice(at + NAME_SEPARATOR.length);
  if (!isValidPluginName(plugin) || !isValidToolName(tool)) return undefined;
  return { plugin, tool };
}

/** Turns arbitrary text (a package name, a folder) into a valid plugin name. */
export function slugifyPluginName(text: string): string {
  const slug = text
    .toLowerCase()
    .replace(/^@/, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 64)
    .replace(/-$/, '');
  return slug || 'plugin';
}

/** The workspace that always exists; keys and sessions with no workspace binding work in it. */
export const DEFAULT_WORKSPACE = 'default';
