/**
 * @module plugins/git
 * Fetching a plugin from git (seed 003: "clone the repository … and cache it locally";
 * DESIGN §3.5: cloned once, keyed by commit, the remote never needed again). The `git` CLI
 * runs through execFile — no shell — with a timeout, no terminal prompts (a private repo
 * fails fast instead of waiting for a password), and only the transports a plugin URL should
 * use (`ext::` and friends could run commands).
 */
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { QuiverError } from '../core/errors.ts';
import { MINIMAL_COMMAND_ENV } from './command-env.ts';

/** Options for one git invocation. */
export interface GitRunOptions {
  cwd?: string;
  timeoutMs: number;
  /**
   * Environment for git (PATH, HOME, proxies); prompts are always disabled on top. Default:
   * the hub's own environment, inherited as any child process would — not read as configuration.
   */
  env?: Record<string, string | undefined>;
}

/** A failed git command: what ran (without credentials) and its stderr. */
export class GitCommandError extends Error {
  readonly stderr: string;
  readonly timedOut: boolean;
  constructor(message: string, stderr: string, timedOut: boolean) {
    super(message);
    this.name = 'GitCommandError';
    this.stderr = stderr;
    this.timedOut = timedOut;
  }
}

/** Hides the password part of `https://user:password@host` URLs in text. */
export function redactUrlCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)([^/@\s:]+)(:[^/@\s]*)?@/gi, '$1***@');
}

/** Runs `git ARGS` and resolves to its stdout (trimmed). */
export function runGit(args: readonly string[], options: GitRunOptions): Promise<string> {
  const env = {
    // Only what the caller hands over (the app passes the environment it was configured with).
    ...(options.env ?? MINIMAL_COMMAND_ENV),
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GCM_INTERACTIVE: 'never',
    // Transports a plugin source may use; `ext::` (runs a command) and `fd::` stay forbidden.
    GIT_ALLOW_PROTOCOL: 'file:git:http:https:ssh',
    GIT_CONFIG_NOSYSTEM: '1',
    // ssh must never ask a question on a terminal.
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new',
  };
  return new Promise((resolvePromise, reject) => {
    execFile(
      'git',
      [...args],
      { cwd: options.cwd, env, timeout: options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024, windowsHide: true },
      (error, stdout, stderr) => {
        if (!error) {
          resolvePromise(stdout.trim());
          return;
        }
        const timedOut = (error as NodeJS.ErrnoException & { killed?: boolean }).killed === true;
        // Name the subcommand (`git clone`), not the `-c key=value` settings before it.
        let at = 0;
        while (args[at] === '-c') at += 2;
        const what = redactUrlCredentials(`git ${args[at] ?? ''}`);
        const detail = redactUrlCredentials(String(stderr || error.message).trim()).slice(-2_000);
        reject(new GitCommandError(timedOut ? `${what} timed out after ${options.timeoutMs} ms` : `${what} failed: ${detail}`, detail, timedOut));
      },
    );
  });
}

/** What git said, without the "git clone failed:" the step name already carries. */
function gitFailure(error: unknown): string {
  if (error instanceof GitCommandError && !error.timedOut && error.stderr !== '') return error.stderr;
  return (error as Error).message;
}

/** Where a clone ended up. */
export interface GitCheckout {
  /** The full commit hash checked out. */
  commit: string;
  /** The ref that was asked for, or the remote's default branch. */
  ref: string;
  /** What the ref is: a branch, a tag, a commit, or the remote default. */
  refKind: 'branch' | 'tag' | 'commit' | 'default';
}

/** A step of the git fetch failed; `step` says which (`clone` or `checkout`). */
export class GitStepError extends QuiverError {
  constructor(step: 'clone' | 'checkout', reason: string, cause?: unknown) {
    super('git_failed', reason, { kind: 'user', details: { step, reason }, cause });
  }
}

/**
 * Clones `url` into `folder` (which must not exist), checks out `ref` (branch, tag or
 * commit; default: the remote HEAD) detached, and removes `.git`, leaving the plain tree of
 * one commit. The tree no longer depends on the remote.
 */
export async function cloneAtRef(url: string, ref: string | undefined, folder: string, options: Omit<GitRunOptions, 'cwd'>): Promise<GitCheckout> {
  if (url.startsWith('-')) throw new GitStepError('clone', `invalid git URL '${url}'`);
  if (ref !== undefined && (ref.startsWith('-') || /[\s\0~^:?*[\\]/.test(ref) || ref === '')) {
    throw new GitStepError('checkout', `invalid git ref '${ref}'`);
  }
  try {
    // No submodules, no hooks from the remote, no checkout until the ref is resolved.
    await runGit(['-c', 'core.hooksPath=/dev/null', 'clone', '--quiet', '--no-checkout', '--no-recurse-submodules', '--', url, folder], options);
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    // The installer names the step ("clone failed: …"); the reason says what and why, once.
    throw new GitStepError('clone', `${redactUrlCredentials(url)}: ${gitFailure(error)}`, error);
  }
  const git = (args: string[]) => runGit(args, { ...options, cwd: folder });
  let commit: string | undefined;
  let refKind: GitCheckout['refKind'] = 'default';
  if (ref === undefined) {
    commit = await git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']).catch(() => undefined);
    if (commit === undefined) throw new GitStepError('checkout', `the repository ${redactUrlCredentials(url)} has no default branch to check out; pass --ref`);
  } else {
    const candidates: Array<[string, GitCheckout['refKind']]> = [
      [`refs/remotes/origin/${ref}^{commit}`, 'branch'],
      [`refs/tags/${ref}^{commit}`, 'tag'],
      [`${ref}^{commit}`, 'commit'],
    ];
    for (const [candidate, kind] of candidates) {
      commit = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', candidate]).catch(() => undefined);
      if (commit) {
        refKind = kind;
        break;
      }
    }
    if (!commit) throw new GitStepError('checkout', `ref '${ref}' is not a branch, tag or commit of ${redactUrlCredentials(url)}`);
  }
  try {
    await git(['-c', 'advice.detachedHead=false', '-c', 'core.hooksPath=/dev/null', 'checkout', '--quiet', '--detach', commit]);
  } catch (error) {
    throw new GitStepError('checkout', `commit ${commit}: ${gitFailure(error)}`, error);
  }
  await rm(join(folder, '.git'), { recursive: true, force: true });
  return { commit, ref: ref ?? 'HEAD', refKind };
}
