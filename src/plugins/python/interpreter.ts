/**
 * @module plugins/python/interpreter
 * Finding the Python that Python plugins run on (issue #26): `python3` on the hub's PATH, at
 * least 3.10 (what the MCP Python SDK needs), with the `venv` module and `ensurepip` (Debian
 * ships them apart, in python3-venv), and installed where the sandbox shows it. A sandboxed
 * plugin sees /usr and nothing of the hub's home, so an interpreter under /root/.pyenv (or any
 * other home) cannot run a plugin; the next `python3` on the PATH is tried. When none fits, the
 * error says, for each one found, what is missing, and how to install a usable one.
 */
import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';
import { QuiverError } from '../../core/errors.ts';
import { MINIMAL_COMMAND_ENV } from '../command-env.ts';

/** The oldest Python the plugins may run on. */
export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** Where the sandbox shows host files to a plugin (runtime/sandbox.ts binds /usr read-only). */
const SANDBOX_VISIBLE = ['/usr/'];

/** A usable interpreter. */
export interface PythonInterpreter {
  /** The interpreter's real path (links resolved), e.g. /usr/bin/python3.11. */
  executable: string;
  /** `3.11.2`. */
  version: string;
}

/** No usable Python: `details.candidates` says what each one found lacks. */
export class PythonMissingError extends QuiverError {
  constructor(message: string, candidates: ReadonlyArray<{ path: string; problem: string }>) {
    super('install_failed', message, { kind: 'user', details: { step: 'dependencies', reason: message, missing: 'python', candidates } });
  }
}

// Prints what the checks need as one JSON line; never imports anything it does not check.
const PROBE = [
  'import json, os, sys',
  'info = {"version": "%d.%d.%d" % sys.version_info[:3], "major": sys.version_info[0], "minor": sys.version_info[1],',
  '        "executable": os.path.realpath(sys.executable), "prefix": os.path.realpath(sys.base_prefix)}',
  'for module in ("venv", "ensurepip"):',
  '    try:',
  '        __import__(module)',
  '    except Exception:',
  '        info.setdefault("missing", []).append(module)',
  'print(json.dumps(info))',
].join('\n');

interface ProbeResult {
  version: string;
  major: number;
  minor: number;
  executable: string;
  prefix: string;
  missing?: string[];
}

function probe(path: string, env: Record<string, string | undefined>): Promise<ProbeResult | { problem: string }> {
  return new Promise((resolve) => {
    // -I: isolated (no PYTHON* variables, no user site, no script folder on sys.path).
    execFile(path, ['-I', '-c', PROBE], { env, timeout: 20_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error) {
        resolve({ problem: `does not run: ${String(stderr || error.message).trim().split('\n').at(-1) ?? 'unknown error'}` });
        return;
      }
      try {
        resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as ProbeResult);
      } catch {
        resolve({ problem: 'did not report its version' });
      }
    });
  });
}

/** Why `found` cannot run plugins, or undefined when it can. */
function problemOf(found: ProbeResult): string | undefined {
  const [major, minor] = MIN_PYTHON;
  if (found.major < major || (found.major === major && found.minor < minor)) return `is Python ${found.version}; ${major}.${minor} or newer is needed`;
  if (found.missing !== undefined && found.missing.length > 0) {
    return `is Python ${found.version} without the ${found.missing.join(' and ')} module${found.missing.length > 1 ? 's' : ''} (Debian/Ubuntu: apt-get install python3-venv)`;
  }
  const visible = (path: string) => SANDBOX_VISIBLE.some((root) => `${path}/`.startsWith(root));
  if (!visible(found.executable) || !visible(found.prefix)) {
    return `is Python ${found.version} installed under ${found.prefix}, which the plugin sandbox does not show (it shows /usr); use a system Python`;
  }
  return undefined;
}

/** Every executable `python3` on the PATH of `env`, in PATH order, without repeats. */
async function candidates(env: Record<string, string | undefined>): Promise<string[]> {
  const found: string[] = [];
  for (const folder of (env['PATH'] ?? '').split(':')) {
    if (folder === '' || !folder.startsWith('/')) continue;
    const path = join(folder, 'python3');
    if (found.includes(path)) continue;
    if (await access(path, constants.X_OK).then(() => true, () => false)) found.push(path);
  }
  return found;
}

/**
 * The first `python3` on the PATH that can run plugins; throws PythonMissingError naming what
 * each one lacks (or that there is none) and how to get one.
 */
export async function findPython(env: Record<string, string | undefined> = MINIMAL_COMMAND_ENV): Promise<PythonInterpreter> {
  const paths = await candidates(env);
  const rejected: Array<{ path: string; problem: string }> = [];
  for (const path of paths) {
    const found = await probe(path, env);
    const problem = 'problem' in found ? found.problem : problemOf(found);
    if (problem === undefined && !('problem' in found)) return { executable: found.executable, version: found.version };
    rejected.push({ path, problem: problem! });
  }
  const [major, minor] = MIN_PYTHON;
  const install = `install one, e.g. 'apt-get install python3 python3-venv' (Debian/Ubuntu)`;
  const message =
    rejected.length === 0
      ? `this is a Python MCP server, and no python3 was found on the PATH (${env['PATH'] ?? 'unset'}): Python ${major}.${minor} or newer with the venv module is needed; ${install}`
      : `this is a Python MCP server, and no python3 on the PATH can run it: ${rejected.map((entry) => `${entry.path} ${entry.problem}`).join('; ')}. ` +
        `Python ${major}.${minor} or newer with the venv module, under /usr, is needed; ${install}`;
  throw new PythonMissingError(message, rejected);
}
