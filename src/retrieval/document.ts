/**
 * @module retrieval/document
 * What retrieval knows about a tool (`RetrievalDocument`) and how it becomes fielded text.
 * The fields follow DESIGN §3.3: name split into words, summary, description, whenToUse,
 * tags, parameter names and descriptions, example queries, and any extra text.
 */

/** A tool as retrieval sees it. Built by the catalog from a ToolRecord, or by `quiver eval` from JSONL. */
export interface RetrievalDocument {
  id: string;
  name: string;
  description: string;
  summary?: string | undefined;
  tags?: readonly string[] | undefined;
  whenToUse?: readonly string[] | undefined;
  /** Anti-patterns (`whenNotToUse`, PID `antiPatterns`): a query matching them demotes the tool. */
  whenNotToUse?: readonly string[] | undefined;
  /** Known queries this tool answers (manifest examples, PID use cases, logged queries). Tool2Vec input. */
  exampleQueries?: readonly string[] | undefined;
  /** JSON Schema of the arguments. */
  parameters?: unknown;
  /** JSON Schema (or a plain name → description map) of what the tool returns, when known: plan steps read it. */
  outputs?: unknown;
  /** Other descriptive text (display name, description_for_model, category…), weighted low. */
  extraText?: readonly string[] | undefined;
  /** The tool's MCP annotations `readOnlyHint` / `destructiveHint`, when declared (action intent). */
  actionHints?: { readOnly?: boolean | undefined; destructive?: boolean | undefined } | undefined;
}

/** The text fields the lexical index scores, in a fixed order. */
export const fieldNames = [
  'name',
  'summary',
  'description',
  'whenToUse',
  'tags',
  'parameterNames',
  'parameterDescriptions',
  'examples',
  'extra',
] as const;
export type FieldName = (typeof fieldNames)[number];

/** Parameter names and descriptions of a JSON Schema, walking nested objects and arrays (bounded). */
export function describeParameters(schema: unknown): { names: string[]; descriptions: string[] } {
  const names: string[] = [];
  const descriptions: string[] = [];
  const visit = (node: unknown, depth: number): void => {
    if (depth > 4 || node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const record = node as Record<string, unknown>;
    const properties = record.properties;
    if (properties !== null && typeof properties === 'object' && !Array.isArray(properties)) {
      for (const [name, child] of Object.entries(properties as Record<string, unknown>)) {
        names.push(name);
        if (child !== null && typeof child === 'object') {
          const childRecord = child as Record<string, unknown>;
          if (typeof childRecord.description === 'string') descriptions.push(childRecord.description);
          if (typeof childRecord.title === 'string') descriptions.push(childRecord.title);
          if (Array.isArray(childRecord.enum)) {
            descriptions.push(childRecord.enum.filter((v): v is string => typeof v === 'string').join(' '));
          }
        }
        visit(child, depth + 1);
      }
    }
    if (record.items !== undefined) visit(record.items, depth + 1);
  };
  visit(schema, 0);
  return { names, descriptions };
}

/** The document's text per field (examples are kept separately by callers that model them one by one). */
export function documentFields(document: RetrievalDocument): Record<FieldName, string> {
  const parameters = describeParameters(document.parameters);
  return {
    name: document.name,
    summary: document.summary ?? '',
    description: document.description,
    whenToUse: (document.whenToUse ?? []).join('\n'),
    tags: (document.tags ?? []).join('\n'),
    parameterNames: parameters.names.join('\n'),
    parameterDescriptions: parameters.descriptions.join('\n'),
    examples: (document.exampleQueries ?? []).join('\n'),
    extra: (document.extraText ?? []).join('\n'),
  };
}

/** One text describing the tool, for embedders (name, summary, description, when to use, tags, parameters). */
export function documentText(document: RetrievalDocument): string {
  const fields = documentFields(document);
  return [
    fields.name,
    fields.summary,
    fields.description,
    fields.whenToUse,
    fields.tags,
    fields.parameterNames,
    fields.parameterDescriptions,
  ]
    .filter((text) => text.length > 0)
    .join('\n');
}
