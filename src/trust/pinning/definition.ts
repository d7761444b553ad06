/**
 * @module trust/pinning/definition
 * A tool's definition as the plugin serves it (issue #10 "Tool pinning"): name, title,
 * description, inputSchema, outputSchema and annotations, nothing Quiver adds. Its canonical
 * hash (core/hash.ts, key order does not matter) is what a pin approves.
 */
import { contentHash } from '../../core/hash.ts';

/** The served definition of one tool (the MCP `Tool` fields a model reads). */
export interface ToolDefinition {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown> | undefined;
  annotations?: Record<string, unknown> | undefined;
}

/** The parts of a definition a pin compares, in the order a diff shows them. */
export const DEFINITION_PARTS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;

/** The definition reduced to its pinned parts (extra members a server sends are dropped). */
export function definitionOf(tool: ToolDefinition): ToolDefinition {
  return {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
  };
}

/** The canonical hash of a served definition. */
export function definitionHash(tool: ToolDefinition): string {
  return contentHash(definitionOf(tool));
}

/** The parts that differ between an approved and a served definition. */
export function changedParts(approved: ToolDefinition, served: ToolDefinition): string[] {
  return DEFINITION_PARTS.filter((part) => contentHash(approved[part] ?? null) !== contentHash(served[part] ?? null));
}
