/**
 * @module verification/stages/probe/tool-safety
 * Which tools the probe may call (issue #10: "call read-only tools"). The rule, in order:
 * 1. `annotations.destructiveHint === true` → never called;
 * 2. `annotations.readOnlyHint === true` → called;
 * 3. `annotations.readOnlyHint === false` → not called (the author says it changes something);
 * 4. no annotation: called only when the name reads as a read — its first word is a read verb
 *    (get, list, read, search…) and no word of the name is a write verb (create, delete, send…)
 *    — and the description's first word is not a write verb either.
 * The sandbox has no network and a throwaway state folder, so a wrong guess harms nothing
 * outside it; the rule keeps the probe from exercising writes it cannot judge.
 */
import type { ProbeTool } from './types.ts';

const READ_VERBS = new Set([
  'get', 'list', 'read', 'search', 'find', 'query', 'lookup', 'look', 'describe', 'show', 'view', 'count', 'echo',
  'fetch', 'check', 'inspect', 'info', 'status', 'stat', 'explain', 'validate', 'preview', 'resolve', 'open', 'load',
  'browse', 'retrieve', 'summarize', 'compute', 'calculate', 'convert', 'parse', 'format', 'ping', 'health', 'version',
]);

const WRITE_VERBS = new Set([
  'create', 'delete', 'remove', 'update', 'write', 'set', 'add', 'insert', 'put', 'post', 'send', 'move', 'rename',
  'kill', 'exec', 'execute', 'run', 'drop', 'push', 'upload', 'modify', 'edit', 'patch', 'install', 'uninstall',
  'start', 'stop', 'restart', 'reset', 'clear', 'purge', 'destroy', 'commit', 'merge', 'deploy', 'publish', 'toggle',
  'trigger', 'submit', 'save', 'store', 'archive', 'close', 'cancel', 'approve', 'reject', 'assign', 'invite', 'grant',
  'revoke', 'truncate', 'wipe', 'overwrite', 'append', 'replace', 'apply', 'import', 'sync', 'transfer', 'pay', 'charge',
]);

/** The words of a tool name: `getUserInfo`, `get_user-info`, `get.user.info` → get, user, info. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase());
}

/** Why a tool may or may not be called by the probe. */
export interface SafetyVerdict {
  safe: boolean;
  reason: string;
}

/** Applies the module's rule to one tool. */
export function toolSafety(tool: Pick<ProbeTool, 'name' | 'description' | 'annotations'>): SafetyVerdict {
  const annotations = tool.annotations ?? {};
  if (annotations.destructiveHint === true) return { safe: false, reason: 'annotated destructive' };
  if (annotations.readOnlyHint === true) return { safe: true, reason: 'annotated read-only' };
  if (annotations.readOnlyHint === false) return { safe: false, reason: 'annotated as not read-only' };
  const words = nameWords(tool.name);
  const first = words[0];
  if (first === undefined || !READ_VERBS.has(first)) return { safe: false, reason: 'no read-only annotation and the name does not start with a read verb' };
  const writer = words.find((word) => WRITE_VERBS.has(word));
  if (writer !== undefined) return { safe: false, reason: `no read-only annotation and the name contains '${writer}'` };
  const leading = nameWords(tool.description ?? '')[0];
  if (leading !== undefined && WRITE_VERBS.has(leading)) return { safe: false, reason: `no read-only annotation and the description starts with '${leading}'` };
  return { safe: true, reason: 'no annotation; the name reads as a read' };
}
