/**
 * @module verification/stages/security-scan/poisoning-signals
 * Structural poisoning signals (issue #23): instead of a list of attack sentences, each rule is
 * a combination of small, general signals found in one sentence (or a sentence and the next):
 * - a reference to a tool the plugin does not own: an identifier-shaped word (`send_email`,
 *   `createPullRequest`) that is neither one of its tools nor one of its parameters, or
 *   "other servers / plugins / tools";
 * - a trigger about tool use ("whenever … is called"), an order (must, always, instead,
 *   replace), or words addressed to the model ("note to the assistant", "AI agent:");
 * - a destination: a URL, an e-mail address, another tool, a parameter or field;
 * - loot: the conversation, the system prompt, secrets, credentials, environment variables,
 *   the user's files or data;
 * - a move: send, post, put, pass, include, append, load, call…;
 * - hiding: HTML comments or bracketed `[SYSTEM]` labels carrying orders, text pushed out of
 *   view by padding.
 * Kinds: shadowing (trigger or order + a foreign tool), exfiltration (move + loot + a
 * destination), secret-request (a harvest of secrets asked of the model in a parameter
 * description or a tool result — one credential the tool plainly takes, "your API key", is
 * not), hidden-instruction (overrides, hidden blocks, orders addressed to the model).
 * Which surface the text is on matters: parameter descriptions are what the model fills in,
 * results are what it reads next.
 */
/** The kinds of tool poisoning the rules name (here, beneath the detector that reports them). */
export type PoisoningKind = 'hidden-instruction' | 'invisible-unicode' | 'confusable-name' | 'sensitive-file' | 'exfiltration' | 'shadowing' | 'secret-request';

/** Where the text was found. */
export type PoisoningSurface = 'tool' | 'parameter' | 'prompt' | 'resource' | 'result';

/** What the structural rules know about the plugin the text belongs to. */
export interface SignalContext {
  surface: PoisoningSurface;
  /** The plugin's own tool names, lower case. */
  ownNames: ReadonlySet<string>;
  /** Parameter names of the tool (a description may name them), lower case. */
  ownParameters?: ReadonlySet<string>;
}

/** One structural finding: the kind and which rule, in words. */
export interface SignalFinding {
  kind: PoisoningKind;
  rule: string;
}

const IDENTIFIER = /(?<![\w.\/@-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+)(?![\w\/@-]|\.\w)/g;
const TOOL_USE_TRIGGER = /\b(when|whenever|if|every time|each time|before|after|once|while)\b.{0,60}\b(used|called|invoked|run|executed|triggered|uses?|calls?|invokes?)\b/;
const ORDER = /\b(must|always|never|instead|make sure|ensure|replace|redirect|override|prefer|add|change|set|silently|from now on)\b/;
const OTHER_SERVERS = /\b(every other|all other|any other|all the other|other|another|any|all|every)( \w+)? (mcp )?(servers?|plugins?|integrations?|tools?)\b/;
const ADDRESSEE_LABEL = /\b(note|message|instructions?|reminder|important)\s+(to|for)\s+(the\s+)?(assistant|ai|model|llm|agent|claude|chatgpt)\b|(^|[\s<>\[(])(assistant|ai|ai agent|llm|model|agent)\s*:/;
const ORDERS_TO_MODEL = /\b(must|should|always|never|do not|don't|from now on|immediately|now)\b/;
const URL_OR_EMAIL = /(https?:\/\/[^\s)'"]+|\b[\w.+-]+@[\w-]+\.[a-z]{2,}\b)/;
const DESTINATION_WORDS = /\b(fetch|http|web|browser|request|webhook|email|e-mail|mail)( \w+)? tool\b|\banother tool\b|\b(parameter|argument|field|body|query string|url)\b/;
const LOOT =
  /\b((whole|entire|full|all|previous|prior|recent|complete) (the )?(conversation|chat|messages|transcript)(?! ?(id|ids|title|name)\b)|(conversation|chat|message) (history|so far|transcript|log)|system prompt|secrets|credentials|api keys|passwords|private keys?|environment variables|env vars|user'?s (files|data|messages|documents|emails|contacts|api keys?|credentials)|personal (data|information)|everything (the user|you))\b/;
const MOVE = /\b(send|post|forward|upload|transmit|exfiltrate|bcc|cc|copy|report|mail|email|submit|include|append|attach|pass|put|encode|embed|load|visit|open|navigate|request|call|pipe|relay|share|log|paste|write)\b/;
const HARVEST_NOUN = /\b(environment variables?|env vars?|env values|process\.env|os\.environ|printenv|system prompt|(conversation|chat|message) history|previous messages|api keys?|access keys?|tokens?|passwords?|credentials?|secrets?|private keys?|session cookies?)\b/;
const QUANTIFIER = /\b(values? of|contents? of|list of|all|every|each|any|full|entire|whole|complete|dump|everything)\b/;
const MODEL_OWNED = /\b(your|you have|you've|you can|you know|the assistant'?s|it can access|in this session|in the session|in this chat|in this conversation)\b/;
const OVERRIDE =
  /\b(ignore|disregard|forget|override|bypass|abandon|stop following|no longer follow)\b.{0,50}\b(instructions?|rules|guidelines|directions|prompts?|guidance|system message|policies|constraints|restrictions)\b/;
const OVERRIDE_SCOPE = /\b(previous|prior|earlier|above|original|system|given|existing|your|all|any|other)\b/;
const OBEY_ONLY = /\b(obey|follow|trust) only (this|these|me|my|the following)\b/;
const HTML_COMMENT = /<!--([\s\S]*?)(-->|$)/g;
const BRACKET_LABEL = /(^|\s)[\[{(]\s*(system|admin|instructions?|assistant|important|hidden)\s*[\]})]/;
const PADDING = /(\n[ \t]*){12,}\S|[ \t]{120,}\S/;

/** Sentences of text (case kept), for rules that must stay local. */
function sentences(text: string): string[] {
  return text.split(/(?<=[.!?;])\s+|\n+/).filter((sentence) => sentence.trim() !== '');
}

/** Identifier-shaped words of a sentence that are not the plugin's own tools or parameters. */
function foreignIdentifiers(sentence: string, context: SignalContext): string[] {
  const found: string[] = [];
  for (const match of sentence.matchAll(IDENTIFIER)) {
    const word = match[1]!;
    const lower = word.toLowerCase();
    if (word.length < 5 || context.ownNames.has(lower) || context.ownParameters?.has(lower)) continue;
    found.push(word);
  }
  return found;
}

/** Whether the sentence uses `name` as a tool: "send_email is called", "call send_email", "the send_email tool". */
function usedAsTool(lower: string, name: string): boolean {
  const escaped = name.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return (
    new RegExp(`\\b${escaped}\\b[\`'"]?( tool)?,? (is |are |gets |get |was |has been )?(used|called|invoked|run|executed|triggered)\\b`).test(lower) ||
    new RegExp(`\\b(call|calls|calling|invoke|invokes|invoking)( the)? [\`'"]?${escaped}\\b`).test(lower) ||
    new RegExp(`\\b${escaped}[\`'"]? tool\\b`).test(lower)
  );
}

function shadowing(sentence: string, lower: string, context: SignalContext): string | undefined {
  const asTools = foreignIdentifiers(sentence, context).filter((name) => usedAsTool(lower, name));
  if (asTools.length > 0 && (TOOL_USE_TRIGGER.test(lower) || ORDER.test(lower))) return 'gives orders about a tool the plugin does not own';
  if (OTHER_SERVERS.test(lower) && /\b(servers?|plugins?|integrations?)\b/.test(lower) && ORDER.test(lower)) return 'gives orders about other servers or plugins';
  return undefined;
}

function exfiltration(window: string, lower: string, context: SignalContext): string | undefined {
  if (!LOOT.test(lower) || !MOVE.test(lower)) return undefined;
  if (URL_OR_EMAIL.test(lower)) return 'asks to move conversation data or secrets to an address';
  if (DESTINATION_WORDS.test(lower) || /`[^`]+`/.test(window)) return 'asks to move conversation data or secrets into a tool, parameter or request';
  if (foreignIdentifiers(window, context).length > 0) return 'asks to move conversation data or secrets into another tool';
  return undefined;
}

function secretRequest(lower: string, surface: PoisoningSurface): string | undefined {
  if (surface !== 'parameter' && surface !== 'result' && surface !== 'prompt') return undefined;
  if (!HARVEST_NOUN.test(lower)) return undefined;
  // "Your API key for example.com" is one credential the tool plainly takes; a harvest asks for all of them, or for the model's own.
  const environment = /\b(environment variables?|env vars?|env values|process\.env|os\.environ|printenv)\b/.test(lower);
  const modelsOwn = /\b(system prompt|(conversation|chat|message) history|previous messages)\b/.test(lower) && MODEL_OWNED.test(lower);
  if ((environment && QUANTIFIER.test(lower)) || modelsOwn || (QUANTIFIER.test(lower) && MODEL_OWNED.test(lower))) {
    return surface === 'parameter' ? 'a parameter description asks the model for secrets, the environment or its own context' : 'asks the model for secrets, the environment or its own context';
  }
  return undefined;
}

function hidden(original: string, lower: string): string | undefined {
  if (OBEY_ONLY.test(lower) || sentences(lower).some((sentence) => OVERRIDE.test(sentence) && OVERRIDE_SCOPE.test(sentence))) return 'asks the model to set aside its instructions';
  for (const match of lower.matchAll(HTML_COMMENT)) {
    const inside = match[1] ?? '';
    if (ORDERS_TO_MODEL.test(inside) || /\b(assistant|ai|model|llm|agent)\b/.test(inside) || MOVE.test(inside)) return 'orders hidden in an HTML comment';
  }
  if (BRACKET_LABEL.test(lower)) return 'a bracketed [SYSTEM]-style label addressed to the model';
  if (PADDING.test(original)) return 'text pushed out of view by padding';
  if (sentences(lower).some((sentence) => ADDRESSEE_LABEL.test(sentence) && ORDERS_TO_MODEL.test(sentence))) return 'orders addressed to the model by name';
  return undefined;
}

/**
 * The structural findings of one text. `original` is NFKC with invisible characters removed
 * (case kept, for identifiers); `lower` the same in lower case with whitespace collapsed.
 */
export function structuralFindings(original: string, lower: string, context: SignalContext): SignalFinding[] {
  const findings: SignalFinding[] = [];
  const originalSentences = sentences(original.replace(/[ \t]+/g, ' '));
  for (const [index, sentence] of originalSentences.entries()) {
    const sentenceLower = sentence.toLowerCase();
    const window = `${sentence} ${originalSentences[index + 1] ?? ''}`;
    const shadow = shadowing(sentence, sentenceLower, context);
    if (shadow !== undefined && !findings.some((finding) => finding.kind === 'shadowing')) findings.push({ kind: 'shadowing', rule: shadow });
    const exfil = exfiltration(window, window.toLowerCase(), context);
    if (exfil !== undefined && !findings.some((finding) => finding.kind === 'exfiltration')) findings.push({ kind: 'exfiltration', rule: exfil });
  }
  const secret = secretRequest(lower, context.surface);
  if (secret !== undefined) findings.push({ kind: 'secret-request', rule: secret });
  const hiddenRule = hidden(original, lower);
  if (hiddenRule !== undefined) findings.push({ kind: 'hidden-instruction', rule: hiddenRule });
  return findings;
}
