/**
 * @module plugins/python/pip-config
 * The machine's own pip configuration, carried into the install sandbox (issue #26). Quiver
 * never names a package index: `pip config list`, run on the host with the hub's environment,
 * reports what pip would use here (its config files and `PIP_*` variables); the options that
 * decide where packages come from and how they are checked are handed to the sandboxed pip as
 * `PIP_*` variables (its own config files are switched off there, PIP_CONFIG_FILE=/dev/null),
 * and what they point at becomes the sandbox's view:
 * - a `file://` index or a find-links folder is bound read-only (a PEP 503 mirror's `simple/`
 *   links to files beside it, so its parent is bound);
 * - an http(s) index's host (pypi.org and files.pythonhosted.org when none is configured) is
 *   the only network the install gets, through the egress proxy; with local indexes only the
 *   install has no network at all.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EgressRule } from '../../runtime/egress-proxy.ts';

/** What the sandboxed pip is given. */
export interface PipSandboxSettings {
  /** `PIP_*` variables (may hold index credentials: never logged). */
  env: Record<string, string>;
  /** Host paths the install must read (local indexes, wheel folders, constraint files). */
  readOnlyPaths: string[];
  /** Hosts the install may reach. */
  egress: EgressRule[];
  /** The index locations, credentials removed, for messages. */
  sources: string[];
}

/** pip options carried over: where packages come from and how they are checked, nothing that moves the install. */
const CARRIED = new Set([
  'index-url', 'extra-index-url', 'find-links', 'no-index', 'trusted-host', 'cert', 'client-cert', 'constraint',
  'default-timeout', 'timeout', 'retries', 'only-binary', 'no-binary', 'prefer-binary', 'pre',
]);
/** Later wins: a variable over the install section over the global one (pip's own order). */
const SECTION_RANK: Record<string, number> = { global: 0, install: 1, ':env:': 2 };

/** Parses `pip config list` output (`section.key='value'` lines) into the carried options. */
export function parsePipConfigList(text: string): Map<string, string> {
  const ranked = new Map<string, { value: string; rank: number }>();
  for (const line of text.split('\n')) {
    const match = /^([^.\s]+)\.([a-z0-9-]+)=(['"])(.*)\3$/.exec(line.trim());
    if (match === null) continue;
    const [, section, key, , value] = match as unknown as [string, string, string, string, string];
    const rank = SECTION_RANK[section];
    if (rank === undefined || !CARRIED.has(key)) continue;
    const previous = ranked.get(key);
    if (previous === undefined || previous.rank <= rank) ranked.set(key, { value, rank });
  }
  return new Map([...ranked].map(([key, entry]) => [key, entry.value]));
}

function redact(location: string): string {
  return location.replace(/(\/\/)[^/@\s]+@/, '$1***@');
}

/** The sandbox settings for the carried options (pure, for tests). */
export function sandboxSettingsFor(options: ReadonlyMap<string, string>): PipSandboxSettings {
  const env: Record<string, string> = { PIP_CONFIG_FILE: '/dev/null' };
  for (const [key, value] of options) env[`PIP_${key.toUpperCase().replace(/-/g, '_')}`] = value;
  const readOnly = new Set<string>();
  const hosts = new Map<string, EgressRule>();
  const sources: string[] = [];
  const noIndex = /^(1|true|yes|on)$/i.test(options.get('no-index') ?? '');
  const indexes = noIndex ? [] : [options.get('index-url') ?? 'https://pypi.org/simple', ...(options.get('extra-index-url') ?? '').split(/\s+/)];
  const links = (options.get('find-links') ?? '').split(/\s+/);
  for (const location of [...indexes, ...links].filter((entry) => entry !== '')) {
    sources.push(redact(location));
    if (/^https?:\/\//i.test(location)) {
      const url = new URL(location);
      const port = url.port === '' ? (url.protocol === 'http:' ? 80 : 443) : Number(url.port);
      hosts.set(`${url.hostname}:${port}`, { host: url.hostname, port });
      // The default index serves its files from a second host.
      if (url.hostname === 'pypi.org') hosts.set('files.pythonhosted.org:443', { host: 'files.pythonhosted.org', port: 443 });
      continue;
    }
    const path = location.startsWith('file:') ? fileURLToPath(location) : location;
    if (!isAbsolute(path) || !existsSync(path)) continue;
    readOnly.add(basename(path) === 'simple' ? dirname(path) : path);
  }
  for (const key of ['constraint', 'cert', 'client-cert']) {
    const path = options.get(key);
    if (path !== undefined && isAbsolute(path) && existsSync(path)) readOnly.add(path);
  }
  return { env, readOnlyPaths: [...readOnly], egress: [...hosts.values()], sources };
}

/** Reads the machine's pip configuration with `python -m pip config list` (the venv's pip, on the host). */
export function readPipConfig(python: string, env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<PipSandboxSettings> {
  return new Promise((resolve, reject) => {
    execFile(python, ['-m', 'pip', 'config', 'list'], { env, timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`pip config list failed: ${String(stderr || error.message).trim().slice(-500)}`));
      else resolve(sandboxSettingsFor(parsePipConfigList(stdout)));
    });
  });
}
