/**
 * @module verification/stages/probe/write-audit
 * What a sandboxed plugin wrote (issue #10: "writes outside the state folder"). In the
 * strictest sandbox every path is read-only except the state folder and a private /tmp; the
 * plugin's own code folder appears writable through an overlay whose upper layer sits in the
 * state folder (runtime/code-overlay.ts). So every file in that upper layer is a write into
 * the code folder — a finding — and an overlayfs whiteout (a 0/0 character device) is a
 * deletion there. Folders are not counted: the launcher mirrors the code folder's folders into
 * the upper layer before the plugin starts.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { overlayFolderName } from '../../../runtime/code-overlay.ts';

/** Files under `folder` (recursive, no symlink following), split into files and whiteouts. */
function walk(folder: string, root: string, out: { files: string[]; whiteouts: string[] }, limit: number): void {
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch {
    return;
  }
  for (const entry of entries) {
    if (out.files.length + out.whiteouts.length >= limit) return;
    const path = join(folder, entry);
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat) continue;
    if (stat.isDirectory()) walk(path, root, out, limit);
    else if (stat.isCharacterDevice() && stat.rdev === 0) out.whiteouts.push(relative(root, path));
    else out.files.push(relative(root, path));
  }
}

/** Writes found in one state folder after the plugin stopped. */
export interface WriteAudit {
  written: string[];
  deleted: string[];
  stateFiles: number;
}

/** Audits `stateDir` (at most `limit` paths of each kind are kept). */
export function auditWrites(stateDir: string, limit = 200): WriteAudit {
  const overlayRoot = join(stateDir, overlayFolderName);
  const upper = join(overlayRoot, 'upper');
  const code = { files: [] as string[], whiteouts: [] as string[] };
  walk(upper, upper, code, limit);
  const state = { files: [] as string[], whiteouts: [] as string[] };
  walk(stateDir, stateDir, state, limit + 10_000);
  const stateFiles = state.files.filter((path) => !path.startsWith(`${overlayFolderName}/`)).length;
  return { written: code.files.sort(), deleted: code.whiteouts.sort(), stateFiles };
}
