/**
 * @module retrieval/retrieval-index/plan-steps
 * Parameter-type chaining (issue #25, "plan steps"): a tool whose required input is an opaque
 * value the user rarely types (coordinates, a file path, a URL, an identifier of some entity)
 * pulls in the tool that produces that value, when the request does not already carry one.
 * "How long is my commute from 12 Rue de Rivoli to the office" finds a route planner that
 * needs coordinates; the geocoder that outputs them is the unstated first step.
 *
 * Kinds are a closed set on purpose: a value the user states in words ("location", "country",
 * "text") is never chained, because every catalog has hundreds of tools taking them and a
 * chain there would be noise. Producers are read from an output schema when the catalog has
 * one (`RetrievalDocument.outputs`) and otherwise from the description ("Returns full paths",
 * "Convert an address into geographic coordinates").
 *
 * Gated so single-intent ranking keeps its shape: only the best few tools (within
 * `consumerShare` of the best score) act as consumers, one producer per missing kind, at most
 * `maxPulled` producers per request, and a producer is placed just below its consumer
 * (`pullFactor` × its score), never above it.
 */
import { describeParameters, type RetrievalDocument } from '../document.ts';
import { splitWords, stem } from '../tokenizer.ts';

/** A kind of value one tool needs and another produces: 'coordinates', 'path', 'url' or 'id:<entity stem>'. */
export type ValueKind = string;

/** The chain graph of a snapshot: per consumer position, the kinds it needs and who produces them. */
export interface PlanSteps {
  /** Position → required kinds (only tools that need at least one chainable kind). */
  needs: Map<number, ValueKind[]>;
  /** Kind → producer positions, strongest evidence first (output schema before description). */
  producers: Map<ValueKind, number[]>;
}

/** Tuning of the pull; the defaults were set by judgement (docs/retrieval.md, plan steps). */
export interface PlanStepSettings {
  /** How many of the best tools may act as consumers. */
  consumers: number;
  /** A consumer scores at least this share of the best score. */
  consumerShare: number;
  /** A pulled producer's score: this share of its consumer's. */
  pullFactor: number;
  /** At most this many producers pulled per request. */
  maxPulled: number;
}

export const defaultPlanStepSettings: PlanStepSettings = { consumers: 3, consumerShare: 0.75, pullFactor: 0.8, maxPulled: 2 };

const coordinateWords = new Set(['lat', 'latitude', 'lng', 'lon', 'long', 'longitude', 'coord', 'coords', 'coordinate', 'coordinates', 'latlng', 'latlon', 'geo', 'geocode']);
const pathWords = new Set(['path', 'filepath', 'filename', 'dir', 'dirpath', 'directory']);
const urlWords = new Set(['url', 'uri', 'href', 'link']);
const idWords = new Set(['id', 'ids', 'identifier', 'uuid', 'guid']);
// Words that name no entity of their own inside an identifier's name ("the_id", "unique_id").
const vagueWords = new Set(['the', 'a', 'an', 'of', 'unique', 'internal', 'external', 'target', 'source', 'object', 'item', 'entity', 'record', 'resource', 'new', 'old', 'current', 'parent', 'child', 'get', 'set', 'list', 'create', 'update', 'delete', 'find', 'search', 'fetch', 'retrieve', 'add', 'remove']);

/** The chainable kind of one parameter or output name, if any; `owner` names a bare id's entity. */
export function kindOfName(name: string, owner: readonly string[]): ValueKind | undefined {
  const words = splitWords(name).map((w) => w.toLowerCase());
  if (words.length === 0) return undefined;
  if (words.some((w) => coordinateWords.has(w))) return 'coordinates';
  const last = words[words.length - 1]!;
  if (pathWords.has(last) || (words.includes('path') && words.length <= 3)) return 'path';
  if (urlWords.has(last)) return 'url';
  if (idWords.has(last)) {
    const entity = words.slice(0, -1).filter((w) => !vagueWords.has(w));
    const noun = entity.length > 0 ? entity[entity.length - 1]! : owner[owner.length - 1];
    return noun ? `id:${stem(noun)}` : undefined;
  }
  return undefined;
}

/** The entity words of a tool's name (verbs and vague words dropped): a bare `id` belongs to them. */
function ownerWords(document: RetrievalDocument): string[] {
  return splitWords(document.name)
    .map((w) => w.toLowerCase())
    .filter((w) => !vagueWords.has(w) && !idWords.has(w) && !/^\d+$/.test(w));
}

/** Required parameter names of a JSON Schema (top level). */
function requiredNames(schema: unknown): string[] {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return [];
  const required = (schema as Record<string, unknown>).required;
  return Array.isArray(required) ? required.filter((r): r is string => typeof r === 'string') : [];
}

/** Output property names: a JSON Schema's properties, or a plain `{name: {...}}` map (Seal-Tools' `responses`). */
function outputNames(outputs: unknown): string[] {
  if (outputs === null || typeof outputs !== 'object' || Array.isArray(outputs)) return [];
  const record = outputs as Record<string, unknown>;
  if (record.properties !== undefined || record.items !== undefined) return describeParameters(outputs).names;
  return Object.keys(record);
}

// Description evidence that a tool outputs a kind: a producing verb and the kind's noun.
const producesCoordinates = /\b(geocod\w*|(?:returns?|gets?|finds?|look\s*up|converts?|resolves?|provides?|outputs?)\b[^.]{0,60}\b(?:coordinates|latitude|lat\/lon|lat\/lng))/i;
const producesPaths = /\b(?:returns?|lists?|finds?|search(?:es)?|outputs?|gives?)\b[^.]{0,60}\b(?:paths?|file\s*names?|files and directories)\b/i;
const producesUrls = /\b(?:returns?|finds?|search(?:es)?|outputs?|gives?|provides?)\b[^.]{0,60}\b(?:urls?|links?)\b/i;
const producesIds = /\b(?:returns?|lists?|finds?|search(?:es)?|outputs?|gives?|provides?)\b[^.]{0,60}\b(?:ids?|identifiers?|uuids?)\b/i;

/** The kinds a tool produces: from its output schema (strong) and its description (weak). */
function producedKinds(document: RetrievalDocument): { strong: Set<ValueKind>; weak: Set<ValueKind> } {
  const owner = ownerWords(document);
  const strong = new Set<ValueKind>();
  for (const name of outputNames(document.outputs)) {
    const kind = kindOfName(name, owner);
    if (kind) strong.add(kind);
  }
  const weak = new Set<ValueKind>();
  const text = `${document.name.replace(/[_-]+/g, ' ')}. ${document.description}`;
  if (producesCoordinates.test(text)) weak.add('coordinates');
  if (producesPaths.test(text)) weak.add('path');
  if (producesUrls.test(text)) weak.add('url');
  if (producesIds.test(text) && owner.length > 0) {
    // "Lists open issues and returns their numbers": ids of the tool's own entity.
    for (const word of owner) weak.add(`id:${stem(word)}`);
  }
  return { strong, weak };
}

const filesPattern = /\b(?:files?|director(?:y|ies)|folders?|filesystem)\b|file/i;

/** Builds the chain graph of a document list (positions are list indexes). */
export function buildPlanSteps(documents: readonly RetrievalDocument[]): PlanSteps | undefined {
  const needs = new Map<number, ValueKind[]>();
  const strongProducers = new Map<ValueKind, number[]>();
  const weakProducers = new Map<ValueKind, number[]>();
  documents.forEach((document, position) => {
    const owner = ownerWords(document);
    // "path" is a file path only in a tool about files (an Eulerian path, a career path are not).
    const aboutFiles = filesPattern.test(`${document.name} ${document.description}`);
    const keep = (kind: ValueKind): boolean => kind !== 'path' || aboutFiles;
    const needed = new Set<ValueKind>();
    for (const name of requiredNames(document.parameters)) {
      const kind = kindOfName(name, owner);
      if (kind && keep(kind)) needed.add(kind);
    }
    if (needed.size > 0) needs.set(position, [...needed]);
    const produced = producedKinds(document);
    const strong = new Set([...produced.strong].filter(keep));
    const weak = new Set([...produced.weak].filter(keep));
    // A tool may need a kind and produce it (search_files takes a root path and returns file paths);
    // it is never its own producer (pullPlanSteps skips the consumer).
    for (const kind of strong) (strongProducers.get(kind) ?? strongProducers.set(kind, []).get(kind)!).push(position);
    for (const kind of weak) if (!strong.has(kind)) (weakProducers.get(kind) ?? weakProducers.set(kind, []).get(kind)!).push(position);
  });
  const producers = new Map<ValueKind, number[]>();
  for (const kind of new Set([...strongProducers.keys(), ...weakProducers.keys()])) {
    producers.set(kind, [...(strongProducers.get(kind) ?? []), ...(weakProducers.get(kind) ?? [])]);
  }
  for (const [position, kinds] of needs) {
    const chained = kinds.filter((kind) => producers.has(kind));
    if (chained.length > 0) needs.set(position, chained);
    else needs.delete(position);
  }
  return needs.size > 0 ? { needs, producers } : undefined;
}

// A value the request already carries: then nothing needs to produce it.
const literalOf: Record<string, RegExp> = {
  coordinates: /-?\d{1,3}\.\d+\s*[,/ ]\s*-?\d{1,3}\.\d+|\b(?:lat|latitude|lng|lon|longitude|coordinates?)\b[^.]{0,20}?-?\d+(?:\.\d+)?/i,
  path: /(?:^|\s)(?:~|\.{1,2})?\/[\w.-]+|\b[\w-]+\.[a-z][a-z0-9]{0,4}\b|[A-Za-z]:\\/,
  url: /\bhttps?:\/\/|\bwww\.|\b[\w-]+\.(?:com|org|net|io|dev|app|co)\b/i,
  // An id-looking token: letters and digits mixed, a long digit run, a UUID, "#123", or a quoted value.
  id: /\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{4,}\b|\b\d{3,}\b|#\d+|["'`][^"'`]{2,}["'`]|\b(?:id|ids|identifier|number|no\.)\s*(?:is|=|:|of)?\s*[\w-]+/i,
};

/** True when the request itself carries a value of this kind. */
export function requestCarries(query: string, kind: ValueKind): boolean {
  const pattern = literalOf[kind.startsWith('id:') ? 'id' : kind];
  return pattern !== undefined && pattern.test(query);
}

/**
 * Pulls producers of the values the best tools need into the ranking (in place on `final`).
 * Returns the positions pulled (for explanations and tests).
 */
export function pullPlanSteps(
  final: Float32Array,
  plan: PlanSteps,
  query: string,
  best: readonly number[],
  mask: Uint8Array | undefined,
  settings: PlanStepSettings = defaultPlanStepSettings,
): number[] {
  if (best.length === 0) return [];
  const top = final[best[0]!]!;
  if (!(top > 0)) return [];
  const pulled: number[] = [];
  const carried = new Map<ValueKind, boolean>();
  for (const consumer of best.slice(0, settings.consumers)) {
    const score = final[consumer]!;
    if (score < settings.consumerShare * top) break;
    for (const kind of plan.needs.get(consumer) ?? []) {
      if (pulled.length >= settings.maxPulled) return pulled;
      let isCarried = carried.get(kind);
      if (isCarried === undefined) carried.set(kind, (isCarried = requestCarries(query, kind)));
      if (isCarried) continue;
      const isId = kind.startsWith('id:');
      // The producer the request itself ranks best; evidence order (schema, then description) breaks ties.
      let chosen = -1;
      for (const producer of plan.producers.get(kind) ?? []) {
        if (producer === consumer || (mask !== undefined && mask[producer] !== 1)) continue;
        // An identifier belongs to one entity, and a catalog has many tools that make or list one
        // (create, book, register…): only a producer the request itself matches is a plausible step.
        if (isId && !(final[producer]! > 0)) continue;
        if (chosen < 0 || final[producer]! > final[chosen]!) chosen = producer;
      }
      if (chosen < 0) continue;
      const target = settings.pullFactor * score;
      if (final[chosen]! < target) {
        final[chosen] = target;
        pulled.push(chosen);
      }
    }
  }
  return pulled;
}
