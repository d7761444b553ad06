/**
 * @module openapi/refs
 * `$ref` resolution (OpenAPI 3.0 §4.8.21 Reference Object, 3.1 via JSON Schema `$ref`).
 * `bundleOpenApi` turns a document and every file it references into ONE self-contained
 * document: external documents are copied under `x-quiver-external` and every reference is
 * rewritten to an internal JSON pointer. A bundled document is what a plugin pins, so it
 * never depends on the original folder again. `inlineRefs` then expands references inside one
 * schema, cutting cycles (a recursive `Node → children: Node[]`) instead of looping.
 */
import { invalidInput } from '../core/errors.ts';
import type { SpecReader } from './load.ts';

/** The root member holding bundled external documents, keyed by their path in the spec's folder. */
export const EXTERNAL_MEMBER = 'x-quiver-external';

/** Bounds on a bundle: documents read, and nodes a schema may inline to. */
const MAX_DOCUMENTS = 200;
const MAX_INLINED_NODES = 20_000;
/** Deepest schema nesting kept when inlining (deeper parts become `{}`). */
const MAX_INLINED_DEPTH = 64;

/** Escapes one JSON pointer token (RFC 6901). */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The value a local reference (`#/a/b`) points to in `document`, or undefined. */
export function resolvePointer(document: unknown, reference: string): unknown {
  if (!reference.startsWith('#')) return undefined;
  const fragment = decodeURIComponent(reference.slice(1));
  if (fragment === '') return document;
  if (!fragment.startsWith('/')) return undefined;
  let current: unknown = document;
  for (const raw of fragment.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) current = current[Number(token)];
    else if (isObject(current) && Object.hasOwn(current, token)) current = current[token];
    else return undefined;
  }
  return current;
}

/** Calls `visit` on every `$ref` string in `node`, replacing it with what `visit` returns. */
function rewriteRefs(node: unknown, visit: (reference: string) => string): unknown {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, visit));
  if (!isObject(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === '$ref' && typeof value === 'string' ? visit(value) : rewriteRefs(value, visit);
  }
  return out;
}

/** Every `$ref` string in `node`. */
function collectRefs(node: unknown, into: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, into);
  else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') into.push(value);
      else collectRefs(value, into);
    }
  }
  return into;
}

/** A bundled document and the documents it was made of. */
export interface BundledDocument {
  document: Record<string, unknown>;
  /** Keys of the external documents read (relative to the spec's folder). */
  files: string[];
}

/**
 * Reads the root document and every document its `$ref`s reach (relative files or URLs within
 * the reader's boundary), and returns one document with internal references only. Throws
 * `invalid_input` for a reference leaving the boundary or pointing at nothing.
 */
export async function bundleOpenApi(reader: SpecReader): Promise<BundledDocument> {
  const root = await reader.read(reader.root);
  if (!isObject(root)) throw invalidInput('an OpenAPI document must be an object');
  const pending: string[] = [];
  const seen = new Set<string>([reader.root]);
  const externals: Record<string, unknown> = {};
  const prefixOf = (location: string): string => (location === reader.root ? '#' : `#/${EXTERNAL_MEMBER}/${escapePointerToken(reader.key(location))}`);

  const rewriteFrom = (base: string) => (reference: string): string => {
    const hash = reference.indexOf('#');
    const target = hash < 0 ? reference : reference.slice(0, hash);
    const fragment = hash < 0 ? '' : reference.slice(hash + 1);
    const location = target === '' ? base : reader.resolve(base, target);
    if (!seen.has(location)) {
      if (seen.size >= MAX_DOCUMENTS) throw invalidInput(`the OpenAPI document references more than ${MAX_DOCUMENTS} documents`);
      seen.add(location);
      pending.push(location);
    }
    return `${prefixOf(location)}${fragment}`;
  };

  const { [EXTERNAL_MEMBER]: _ignored, ...rootRest } = root;
  const document = rewriteRefs(rootRest, rewriteFrom(reader.root)) as Record<string, unknown>;
  while (pending.length > 0) {
    const location = pending.shift()!;
    externals[reader.key(location)] = rewriteRefs(await reader.read(location), rewriteFrom(location));
  }
  if (Object.keys(externals).length > 0) document[EXTERNAL_MEMBER] = externals;
  const dangling = [...new Set(collectRefs(document))].filter((reference) => resolvePointer(document, reference) === undefined);
  if (dangling.length > 0) throw invalidInput(`the OpenAPI document has unresolvable $ref${dangling.length > 1 ? 's' : ''}: ${dangling.slice(0, 5).join(', ')}`);
  return { document, files: Object.keys(externals) };
}

/** Follows a chain of references (`A → B → C`) to the first non-reference value. */
export function followRef(document: unknown, node: unknown, depth = 0): unknown {
  if (!isObject(node) || typeof node['$ref'] !== 'string') return node;
  if (depth > 50) throw invalidInput(`$ref chain too long (or circular) at ${node['$ref']}`);
  return followRef(document, resolvePointer(document, node['$ref']), depth + 1);
}

/**
 * Expands every local `$ref` inside `node` against `document`. A reference already being
 * expanded (a cycle) becomes `{}` with a note in its description, and the whole expansion is
 * bounded in size and depth, so hostile or deeply recursive schemas stay small.
 */
export function inlineRefs(document: unknown, node: unknown): unknown {
  let budget = MAX_INLINED_NODES;
  const walk = (value: unknown, active: readonly string[], depth = 0): unknown => {
    budget -= 1;
    if (budget < 0 || depth > MAX_INLINED_DEPTH) return Array.isArray(value) ? [] : isObject(value) ? {} : value;
    if (Array.isArray(value)) return value.map((item) => walk(item, active, depth + 1));
    if (!isObject(value)) return value;
    const reference = value['$ref'];
    if (typeof reference === 'string') {
      const { $ref: _ref, ...siblings } = value;
      if (active.includes(reference)) {
        const name = reference.split('/').pop() ?? reference;
        return { ...(walk(siblings, active, depth) as Record<string, unknown>), description: `${typeof siblings['description'] === 'string' ? `${siblings['description']} ` : ''}(recursive: ${name})` };
      }
      const target = walk(resolvePointer(document, reference), [...active, reference], depth + 1);
      // OpenAPI 3.1 allows siblings next to $ref (a description overriding the target's).
      return isObject(target) ? { ...target, ...(walk(siblings, active, depth) as Record<string, unknown>) } : target;
    }
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) out[key] = walk(child, active, depth + 1);
    return out;
  };
  return walk(node, []);
}
