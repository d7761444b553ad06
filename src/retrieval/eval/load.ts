/**
 * @module retrieval/eval/load
 * Reads the three JSONL files of the `quiver eval` contract (DESIGN §5) into retrieval
 * documents and labelled queries. Every problem names its file and line; a gold id the
 * catalog does not know is a warning, not an error (the query is scored on the rest).
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { QuiverError } from '../../core/errors.ts';
import { formatIssues } from '../../core/validation.ts';
import type { RetrievalDocument } from '../document.ts';
import type { RelevantItems } from './metrics.ts';

/** A labelled query. */
export interface EvalQuery {
  id: string;
  query: string;
  /** Relevant items (gold groups), restricted to ids the catalog knows. */
  items: RelevantItems;
}

/** What was loaded, with warnings for the user. */
export interface EvalData {
  documents: RetrievalDocument[];
  queries: EvalQuery[];
  warnings: string[];
  /** Example queries attached to tools. */
  exampleCount: number;
}

const idSchema = z.union([z.string().min(1), z.number()]).transform(String);

const toolLineSchema = z
  .object({
    id: idSchema,
    name: z.string().nullish(),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    source: z.string().nullish(),
  })
  .passthrough();

const queryLineSchema = z
  .object({
    id: idSchema,
    query: z.string().min(1),
    gold: z.array(idSchema).optional(),
    gold_groups: z.array(z.array(idSchema).min(1)).optional(),
  })
  .refine((line) => line.gold !== undefined || line.gold_groups !== undefined, { message: 'needs gold or gold_groups' });

const exampleLineSchema = z.object({ tool_id: idSchema, query: z.string().min(1) }).passthrough();

/** Fields of tools.jsonl that are not extra text. */
const knownToolFields = new Set(['id', 'name', 'description', 'parameters', 'source']);
const maximumExtraChars = 20_000;

/** Reads a file, turning a missing or unreadable file into a one-line user error. */
async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (error as Error).message;
    throw new QuiverError('invalid_input', `cannot read ${what} file ${path}: ${reason}`);
  }
}

/** Parses each non-blank line of a JSONL text with `schema`, naming file:line on failure. */
function parseLines<S extends z.ZodType>(text: string, path: string, schema: S): { line: number; value: z.output<S> }[] {
  const result: { line: number; value: z.output<S> }[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    if (!raw.trim()) return;
    const line = index + 1;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (error) {
      throw new QuiverError('invalid_input', `${path}:${line}: not valid JSON (${(error as Error).message})`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = formatIssues(parsed.error)[0];
      throw new QuiverError('invalid_input', `${path}:${line}: ${issue ? `${issue.path}: ${issue.message}` : 'invalid line'}`);
    }
    result.push({ line, value: parsed.data });
  });
  return result;
}

/** Collects the string leaves of a value (bounded), for extra text. */
function stringLeaves(value: unknown, out: string[], depth = 0): void {
  if (depth > 4) return;
  if (typeof value === 'string') {
    if (value.trim()) out.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) stringLeaves(item, out, depth + 1);
  } else if (value !== null && typeof value === 'object') {
    for (const member of Object.values(value)) stringLeaves(member, out, depth + 1);
  }
}

/** Loads tools (and examples) and labelled queries from JSONL files. */
export async function loadEvalData(paths: { tools: string; queries: string; examples?: string | undefined }): Promise<EvalData> {
  const warnings: string[] = [];
  const toolLines = parseLines(await readText(paths.tools, 'tools'), paths.tools, toolLineSchema);
  const documents: RetrievalDocument[] = [];
  const byId = new Map<string, RetrievalDocument>();
  for (const { line, value } of toolLines) {
    if (byId.has(value.id)) throw new QuiverError('invalid_input', `${paths.tools}:${line}: duplicate tool id '${value.id}'`);
    // Other fields (display names, model-facing descriptions, response fields) are extra text.
    const extra: string[] = [];
    for (const [key, member] of Object.entries(value)) if (!knownToolFields.has(key)) stringLeaves(member, extra);
    let extraText = extra.join('\n');
    if (extraText.length > maximumExtraChars) extraText = extraText.slice(0, maximumExtraChars);
    // What the tool returns, when the line says (`responses`, `outputSchema`, `output_schema`): plan steps
    // read it; it stays in the extra text as well.
    const outputs = value.outputSchema ?? value.output_schema ?? value.responses;
    const document: RetrievalDocument = {
      id: value.id,
      name: value.name ?? value.id,
      description: value.description ?? '',
      ...(value.parameters ? { parameters: value.parameters } : {}),
      ...(outputs !== null && typeof outputs === 'object' ? { outputs } : {}),
      ...(extraText ? { extraText: [extraText] } : {}),
    };
    documents.push(document);
    byId.set(value.id, document);
  }
  if (documents.length === 0) throw new QuiverError('invalid_input', `${paths.tools}: no tools`);

  let exampleCount = 0;
  if (paths.examples !== undefined) {
    const exampleLines = parseLines(await readText(paths.examples, 'examples'), paths.examples, exampleLineSchema);
    const examples = new Map<string, string[]>();
    const unknown = new Set<string>();
    for (const { value } of exampleLines) {
      if (!byId.has(value.tool_id)) {
        unknown.add(value.tool_id);
        continue;
      }
      const list = examples.get(value.tool_id) ?? [];
      list.push(value.query);
      examples.set(value.tool_id, list);
      exampleCount++;
    }
    if (unknown.size > 0) warnings.push(`${paths.examples}: ${unknown.size} unknown tool id(s) ignored: ${[...unknown].slice(0, 5).join(', ')}`);
    for (const [id, list] of examples) {
      const document = byId.get(id)!;
      const index = documents.indexOf(document);
      documents[index] = { ...document, exampleQueries: list };
    }
  }

  const queryLines = parseLines(await readText(paths.queries, 'queries'), paths.queries, queryLineSchema);
  const queries: EvalQuery[] = [];
  const unknownGold = new Set<string>();
  let skipped = 0;
  for (const { value } of queryLines) {
    const groups = value.gold_groups ?? (value.gold ?? []).map((id) => [id]);
    const items = groups
      .map((group) =>
        group.filter((id) => {
          if (byId.has(id)) return true;
          unknownGold.add(id);
          return false;
        }),
      )
      .filter((group) => group.length > 0);
    if (items.length === 0) {
      skipped++;
      continue;
    }
    queries.push({ id: value.id, query: value.query, items });
  }
  if (unknownGold.size > 0) {
    warnings.push(
      `${paths.queries}: ${unknownGold.size} gold id(s) not in the tools file were ignored: ${[...unknownGold].slice(0, 5).join(', ')}${unknownGold.size > 5 ? ', …' : ''}`,
    );
  }
  if (skipped > 0) warnings.push(`${paths.queries}: ${skipped} quer${skipped === 1 ? 'y' : 'ies'} without any known gold id skipped`);
  return { documents, queries, warnings, exampleCount };
}
