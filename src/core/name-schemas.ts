/**
 * @module core/name-schemas
 * The zod schemas of plugin and tool names, for the schemas that embed them (manifests, tools,
 * catalog input). The rules are `core/names.ts`'s, which checks names without zod.
 */
import { z } from 'zod';
import { NAME_SEPARATOR, PLUGIN_NAME_PATTERN, TOOL_NAME_PATTERN } from './names.ts';

/** zod schema for a plugin name. */
export const pluginNameSchema = z
  .string()
  .regex(PLUGIN_NAME_PATTERN, 'plugin names are kebab-case: lowercase letters, digits and single dashes, 1-64 characters')
  .refine((name) => !name.includes('--'), 'plugin names must not contain "--"');

/** zod schema for a tool name. */
export const toolNameSchema = z
  .string()
  .regex(TOOL_NAME_PATTERN, 'tool names use letters, digits, "_", "-" and "." (1-128 characters)')
  .refine((name) => !name.includes(NAME_SEPARATOR), `tool names must not contain the separator "${NAME_SEPARATOR}"`);
