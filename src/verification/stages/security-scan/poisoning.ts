/**
 * @module verification/stages/security-scan/poisoning
 * Tool poisoning detection (issue #10, security scan): text a plugin serves to the *model*
 * (tool names, titles, descriptions, annotations and every string inside inputSchema /
 * outputSchema) that tries to steer it instead of describing the tool. A pure function over tool definitions, so
 * the verification stage and `quiver bench` (false alarms on real catalogs) share it.
 *
 * Kinds, each a high-precision rule (a finding is meant to be confirmed poisoning, so every
 * finding is critical; ambiguous wording is deliberately left alone):
 * - `hidden-instruction`: "ignore previous instructions", `<IMPORTANT>`-style tags, "do not
 *   tell the user", "before using this tool, read …", "secretly";
 * - `invisible-unicode`: zero-width characters (a ZWJ between two emoji is an emoji sequence and
 *   allowed), bidi overrides and isolates, tag characters U+E0000–E007F, variation selectors
 *   U+E0100–E01EF (both can carry hidden text);
 * - `confusable-name`: a name or title mixing Latin with Cyrillic / Greek letters in one word,
 *   or whose Latin "skeleton" equals another tool's name while the spelling differs;
 * - `sensitive-file`: a request (read, cat, include, send…) naming keys or secret files
 *   (~/.ssh, id_rsa, .env, /etc/passwd, credentials files, MCP client configs);
 * - `exfiltration`: a literal URL or e-mail address in the same sentence as send / post /
 *   forward / upload and something worth stealing (conversation, history, secrets, files…);
 * - `shadowing`: instructions about *other* tools: a mention of another plugin's tool name, or
 *   "any / all / other tools" in a sentence that also commands (must, always, instead…).
 * Tuning on the bench catalogs: "do not show … to the user" and "without showing the user" are
 * presentation advice in real ChatGPT plugins (metatool: Glowing, Creaticode), so showing is not
 * hiding; telling, informing, mentioning, revealing, notifying are.
 * Text is matched after NFKC normalisation with invisible characters removed, so splitting a
 * phrase with zero-width spaces does not hide it. Findings carry where and which rule, never
 * the matched text (it is attacker-controlled and may itself be an injection).
 */

import { structuralFindings, type PoisoningKind, type PoisoningSurface, type SignalContext } from './poisoning-signals.ts';

export type { PoisoningKind, PoisoningSurface } from './poisoning-signals.ts';

/** A tool definition as served by a plugin (the subset poisoning looks at). */
export interface PoisoningToolInput {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: unknown;
  outputSchema?: unknown;
  /** MCP tool annotations (`title`, hints): clients show them, models read them. */
  annotations?: unknown;
}

/** One poisoning finding: which tool, where in it (`description`, `inputSchema.properties.q.description`…), which rule. */
export interface PoisoningFinding {
  tool: string;
  field: string;
  kind: PoisoningKind;
  /** Which rule matched, in words (never the matched text). */
  rule: string;
}

/** Options: tool names of other plugins, for shadowing and look-alike checks. */
export interface PoisoningOptions {
  otherToolNames?: readonly string[];
}

interface TextRule {
  kind: PoisoningKind;
  rule: string;
  test(text: string): boolean;
}

const INVISIBLE = /[\u200B\u200C\u200E\u200F\u2060-\u2064\u206A-\u206F\uFEFF\u180E\u202A-\u202E\u2066-\u2069]|\u{E0000}|[\u{E0001}-\u{E007F}]|[\u{E0100}-\u{E01EF}]/u;
const INVISIBLE_ALL = /[\u200B-\u200F\u2060-\u2064\u206A-\u206F\uFEFF\u180E\u202A-\u202E\u2066-\u2069]|[\u{E0000}-\u{E007F}]|[\u{E0100}-\u{E01EF}]/gu;
const ZWJ_OUTSIDE_EMOJI = /(?<!\p{Extended_Pictographic}\uFE0F?)\u200D|\u200D(?!\p{Extended_Pictographic})/u;

function invisibleRule(text: string): string | undefined {
  if (/[\u{E0000}-\u{E007F}]/u.test(text)) return 'Unicode tag characters (text hidden from people)';
  if (/[\u202A-\u202E\u2066-\u2069]/.test(text)) return 'bidirectional override or isolate characters';
  if (INVISIBLE.test(text) || ZWJ_OUTSIDE_EMOJI.test(text)) return 'zero-width or invisible characters';
  return undefined;
}

/** NFKC, invisible characters removed, whitespace collapsed, lower case: what the rules match. */
export function normaliseForMatching(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE_ALL, '').replace(/\s+/g, ' ').toLowerCase();
}

const SENSITIVE_TARGET = String.raw`(~\/\.ssh|\.ssh\/|\bid_(rsa|dsa|ecdsa|ed25519)\b|\/etc\/(passwd|shadow)\b|(^|[\s'"\x60(])\.env\b|\.aws\/credentials|\.git-credentials|\.netrc\b|\.npmrc\b|\.kube\/config|\bcredentials\.json\b|\bmcp\.json\b|claude_desktop_config|\bprivate (ssh )?keys?\b|\bssh keys?\b)`;
const REQUEST_VERB = String.raw`\b(read|cat|open|include|send|pass|provide|upload|attach|copy|append|forward|output|print|return|fetch|load|contents? of)\b`;
const SEND_VERB = String.raw`\b(send|post|forward|upload|transmit|exfiltrate|bcc|cc|copy|report|mail|email|submit)\b`;
const LOOT = String.raw`\b(conversation|chat|history|messages?|passwords?|tokens?|keys?|secrets?|credentials?|contents?|files?|environment|env|cookies?|session|api key|personal data|all data|everything)\b`;
const URL_OR_EMAIL = String.raw`(https?:\/\/[^\s)'"]+|\b[\w.+-]+@[\w-]+\.[\w.-]+\b)`;

/** Splits into sentences so that co-occurrence rules stay local. */
function sentences(text: string): string[] {
  return text.split(/(?<=[.!?;])\s+|\n+/);
}

function withinSentence(text: string, ...patterns: RegExp[]): boolean {
  return sentences(text).some((sentence) => patterns.every((pattern) => pattern.test(sentence)));
}

const TEXT_RULES: TextRule[] = [
  {
    kind: 'hidden-instruction',
    rule: 'asks the model to ignore or override earlier instructions',
    test: (t) =>
      /\b(ignore|disregard|forget|override)( all| any| the| your)* (previous|prior|above|earlier|preceding|former|system|original) (instructions?|prompts?|rules|directions|guidelines|messages)\b/.test(t) ||
      /\bnew (system )?instructions?:/.test(t) ||
      /\byou are now (in )?(a |an )?(developer|admin|unrestricted|jailbr)/.test(t),
  },
  {
    kind: 'hidden-instruction',
    rule: 'an instruction tag addressed to the model (<IMPORTANT>, <system>…)',
    test: (t) => /<\s*\/?\s*(important|system|instructions?|secret|hidden|assistant|admin|critical)\s*>/.test(t),
  },
  {
    kind: 'hidden-instruction',
    rule: 'asks the model to hide something from the user',
    test: (t) =>
      /\b(do not|don't|dont|never|must not|should not) (tell|inform|mention|reveal|notify|alert|disclose)\b[^.]{0,40}\b(the )?user\b/.test(t) ||
      /\bwithout (telling|informing|notifying|alerting|asking) (the |your )?user\b/.test(t) ||
      /\b(the )?user (must|should) (not|never) (know|see|be told|find out|notice)\b/.test(t) ||
      /\b(secretly|covertly|surreptitiously)\b/.test(t),
  },
  {
    kind: 'hidden-instruction',
    rule: 'orders a step before the tool is used (read / call / send something first)',
    test: (t) =>
      /\bbefore (using|calling|invoking|running|executing) (this|the|any)( \w+)? tool,? (you )?(must |should |first |always )*(read|call|send|fetch|open|cat|include|pass|provide|run|execute|retrieve)\b/.test(t),
  },
  {
    kind: 'sensitive-file',
    rule: 'asks to read or pass keys or secret files',
    test: (t) => withinSentence(t, new RegExp(SENSITIVE_TARGET), new RegExp(REQUEST_VERB)),
  },
  {
    kind: 'exfiltration',
    rule: 'asks to send data to a literal address',
    test: (t) => withinSentence(t, new RegExp(URL_OR_EMAIL), new RegExp(SEND_VERB), new RegExp(LOOT)),
  },
  {
    kind: 'shadowing',
    rule: 'gives orders about other tools',
    test: (t) =>
      withinSentence(t, /\b(any|all|every|other|another)( other)? tools?\b/, /\b(must|always|never|instead|first|before|whenever|override|redirect|replace)\b/) ||
      /\bwhen(ever)? (the user|you|the assistant|the model) (calls?|uses?|invokes?|runs?) (any|another|other|a different) tool\b/.test(t),
  },
];

/** The Latin look-alike of common Cyrillic and Greek letters (a small confusables table, UTS #39 style). */
const CONFUSABLES: Record<string, string> = {
  а: 'a', в: 'b', е: 'e', ё: 'e', к: 'k', м: 'm', н: 'h', о: 'o', р: 'p', с: 'c', т: 't', у: 'y', х: 'x', ѕ: 's', і: 'i', ї: 'i', ј: 'j', һ: 'h', ԁ: 'd', ԛ: 'q', ԝ: 'w', ӏ: 'l',
  α: 'a', β: 'b', ε: 'e', η: 'n', ι: 'i', κ: 'k', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x', γ: 'y', ω: 'w',
};

/** The ASCII skeleton of a name: NFKC (full-width forms fold), confusable letters mapped, lower case. */
export function nameSkeleton(name: string): string {
  return [...name.normalize('NFKC').toLowerCase()].map((c) => CONFUSABLES[c] ?? c).join('');
}

function mixedScriptWord(text: string): boolean {
  return text.split(/[^\p{L}\p{N}]+/u).some((word) => /\p{Script=Latin}/u.test(word) && /[\p{Script=Cyrillic}\p{Script=Greek}]/u.test(word));
}

/** Skeleton → the distinct names having it, for look-alike checks in one pass. */
function lookAlikeIndex(names: Iterable<string>): Map<string, Set<string>> {
  const index = new Map<string, Set<string>>();
  for (const name of names) {
    const skeleton = nameSkeleton(name);
    const group = index.get(skeleton) ?? new Set<string>();
    group.add(name);
    index.set(skeleton, group);
  }
  return index;
}

/** The other plugins' and the plugin's own skeleton indexes. */
type SkeletonIndexes = ReadonlyArray<ReadonlyMap<string, ReadonlySet<string>>>;

function nameFindings(tool: PoisoningToolInput, field: 'name' | 'title', value: string, skeletons: SkeletonIndexes): PoisoningFinding[] {
  const findings: PoisoningFinding[] = [];
  if (mixedScriptWord(value)) findings.push({ tool: tool.name, field, kind: 'confusable-name', rule: 'mixes Latin with Cyrillic or Greek letters in one word' });
  // Only a name with non-ASCII letters can be a look-alike; two ASCII names differing in case are plainly visible.
  const skeleton = field === 'name' && /[^\x00-\x7F]/.test(value) ? nameSkeleton(value) : undefined;
  if (skeleton !== undefined && skeletons.some((index) => [...(index.get(skeleton) ?? [])].some((other) => other !== value))) {
    findings.push({ tool: tool.name, field, kind: 'confusable-name', rule: 'looks like another tool name but is spelled differently' });
  }
  return findings;
}

/** Keys whose string values are syntax, not prose: only the Unicode check applies to them. */
const SYNTAX_KEYS = new Set(['type', 'format', 'pattern', '$ref', '$schema', '$id', 'contentEncoding', 'contentMediaType']);

/** Every string of a schema with its path: values, and property names (for hidden characters). */
function schemaStrings(value: unknown, path: string, out: Array<{ path: string; text: string; prose: boolean }>, depth = 0): void {
  if (depth > 32) return;
  if (typeof value === 'string') {
    out.push({ path, text: value, prose: true });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => schemaStrings(item, `${path}[${index}]`, out, depth + 1));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    out.push({ path: `${path}.${key}`, text: key, prose: false });
    if (SYNTAX_KEYS.has(key) && typeof child === 'string') out.push({ path: `${path}.${key}`, text: child, prose: false });
    else schemaStrings(child, `${path}.${key}`, out, depth + 1);
  }
}

/**
 * The other plugins' names that read as identifiers, not plain words like "search": names with
 * `_`, `-`, `.` or digits match case-insensitively; camelCase-only names match only in their
 * exact case (tuned on seal-tools: `checkOut`, `takeOff`, `endGame` are tools there, and
 * "checkout" / "takeoff" in prose are words, not mentions).
 */
function identifierNames(others: readonly string[]): { lower: Set<string>; exact: Set<string> } {
  const lower = new Set<string>();
  const exact = new Set<string>();
  for (const name of others) {
    if (name.length < 4) continue;
    if (/[_\-.]|\d/.test(name)) lower.add(name.toLowerCase());
    else if (/[a-z][A-Z]/.test(name)) exact.add(name);
  }
  return { lower, exact };
}

/** What shadowing by name checks: the other plugins' identifier-like names, minus the plugin's own tools. */
interface OtherNames {
  lower: ReadonlySet<string>;
  exact: ReadonlySet<string>;
  own: ReadonlySet<string>;
}

/** Whether text (NFKC, invisible characters removed, case kept) names another plugin's tool as a whole token. */
function mentionsOtherTool(text: string, others: OtherNames): boolean {
  if (others.lower.size === 0 && others.exact.size === 0) return false;
  return text.split(/[^A-Za-z0-9_.\-]+/).some((raw) => {
    for (const token of [raw, raw.replace(/[.\-]+$/, '')]) {
      if (others.own.has(token.toLowerCase())) continue;
      if (others.lower.has(token.toLowerCase()) || others.exact.has(token)) return true;
    }
    return false;
  });
}

/** The kinds and rules a text triggers: the phrase rules, then the structural ones (poisoning-signals.ts). */
function textRules(text: string, context: SignalContext, others: OtherNames | undefined): Array<{ kind: PoisoningKind; rule: string }> {
  const found: Array<{ kind: PoisoningKind; rule: string }> = [];
  const hidden = invisibleRule(text);
  if (hidden !== undefined) found.push({ kind: 'invisible-unicode', rule: hidden });
  const normalised = normaliseForMatching(text);
  const original = text.normalize('NFKC').replace(INVISIBLE_ALL, '');
  const seen = new Set<PoisoningKind>(['invisible-unicode']);
  for (const rule of TEXT_RULES) {
    if (seen.has(rule.kind) || !rule.test(normalised)) continue;
    seen.add(rule.kind);
    found.push({ kind: rule.kind, rule: rule.rule });
  }
  if (structuralRulesEnabled) {
    for (const finding of structuralFindings(original, normalised, context)) {
      if (seen.has(finding.kind)) continue;
      seen.add(finding.kind);
      found.push(finding);
    }
  }
  if (others !== undefined && !seen.has('shadowing') && mentionsOtherTool(original, others)) found.push({ kind: 'shadowing', rule: "names another plugin's tool" });
  return found;
}

function textFindings(tool: PoisoningToolInput, field: string, text: string, prose: boolean, others: OtherNames, parameters: ReadonlySet<string>): PoisoningFinding[] {
  if (!prose) {
    const hidden = invisibleRule(text);
    return hidden === undefined ? [] : [{ tool: tool.name, field, kind: 'invisible-unicode', rule: hidden }];
  }
  const surface: PoisoningSurface = field.startsWith('inputSchema.') ? 'parameter' : 'tool';
  return textRules(text, { surface, ownNames: others.own, ownParameters: parameters }, others).map((finding) => ({ tool: tool.name, field, ...finding }));
}

/** Switch for tests: the structural rules off leaves only the phrase rules (to show what they add). */
let structuralRulesEnabled = true;
/** Turns the structural rules on or off (tests prove their own cases fail without them). */
export function setStructuralRules(enabled: boolean): void {
  structuralRulesEnabled = enabled;
}

/** A finding in a text that is not a tool definition (a prompt, a resource, a tool result). */
export interface TextPoisoningFinding {
  kind: PoisoningKind;
  rule: string;
}

/**
 * Poisoning findings of one text served to the model outside a tool definition: a prompt, a
 * resource description or a tool result (`ownNames`: the serving plugin's tool names, which it
 * may name freely). Pure and cheap: a few regular expressions per sentence.
 */
export function detectTextPoisoning(text: string, options: { surface: Exclude<PoisoningSurface, 'tool' | 'parameter'>; ownNames?: readonly string[] }): TextPoisoningFinding[] {
  return textRules(text, { surface: options.surface, ownNames: new Set((options.ownNames ?? []).map((name) => name.toLowerCase())) }, undefined);
}

/** A detector for one hub: the other plugins' names are indexed once, then any plugin's tools are checked. */
export type PoisoningDetector = (tools: readonly PoisoningToolInput[]) => PoisoningFinding[];

/**
 * Builds a detector over `otherToolNames` (shadowing and look-alike names). A plugin's own tool
 * names are never "other" (a tool may name its sibling), but are compared with each other and
 * with the other names for look-alikes.
 */
export function createPoisoningDetector(options: PoisoningOptions = {}): PoisoningDetector {
  const otherNames = options.otherToolNames ?? [];
  const { lower, exact } = identifierNames(otherNames);
  const otherSkeletons = lookAlikeIndex(otherNames);
  return (tools) => {
    const ownNames = tools.map((tool) => tool.name);
    const others: OtherNames = { lower, exact, own: new Set(ownNames.map((name) => name.toLowerCase())) };
    const skeletons = [otherSkeletons, lookAlikeIndex(ownNames)];
    const findings: PoisoningFinding[] = [];
    for (const tool of tools) findings.push(...toolFindings(tool, others, skeletons));
    return findings;
  };
}

/** The tool's top-level parameter names, lower case (a description may name them). */
function parameterNames(tool: PoisoningToolInput): Set<string> {
  const schema = tool.inputSchema as { properties?: unknown } | undefined;
  const properties = schema !== null && typeof schema === 'object' && schema.properties !== null && typeof schema.properties === 'object' ? Object.keys(schema.properties as object) : [];
  return new Set(properties.map((name) => name.toLowerCase()));
}

function toolFindings(tool: PoisoningToolInput, others: OtherNames, skeletons: SkeletonIndexes): PoisoningFinding[] {
  const parameters = parameterNames(tool);
  const findings = [...textFindings(tool, 'name', tool.name, false, others, parameters), ...nameFindings(tool, 'name', tool.name, skeletons)];
  if (typeof tool.title === 'string') findings.push(...textFindings(tool, 'title', tool.title, true, others, parameters), ...nameFindings(tool, 'title', tool.title, skeletons));
  if (typeof tool.description === 'string') findings.push(...textFindings(tool, 'description', tool.description, true, others, parameters));
  const strings: Array<{ path: string; text: string; prose: boolean }> = [];
  schemaStrings(tool.inputSchema, 'inputSchema', strings);
  schemaStrings(tool.outputSchema, 'outputSchema', strings);
  schemaStrings(tool.annotations, 'annotations', strings);
  for (const entry of strings) findings.push(...textFindings(tool, entry.path, entry.text, entry.prose, others, parameters));
  return findings;
}

/** Poisoning findings over one plugin's tools against the other plugins' tool names; empty when clean. */
export function detectToolPoisoning(tools: readonly PoisoningToolInput[], options: PoisoningOptions = {}): PoisoningFinding[] {
  return createPoisoningDetector(options)(tools);
}
