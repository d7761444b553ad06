/**
 * @module store/pglite-template
 * A pre-initialised PGlite cluster (initdb + pgvector + every migration), made once by
 * `scripts/build.mjs`, so that a new store skips initdb in WASM: a new data folder is ready in
 * about a third of the time (DESIGN §6: `quiver serve` ready ≤ 3 s). The template is an
 * optimisation only: it is used when its manifest names this PGlite, this pgvector and exactly
 * these migrations and its bytes hash to the recorded digest; anything else (missing, stale,
 * corrupt, unreadable) means plain initdb, never an error.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { PGlite } from '@electric-sql/pglite';
import type { Migration } from './migrator.ts';
import { CONTROL_SOCKET_FILE } from './control-socket-path.ts';
import { LOCK_FILE } from './data-dir-lock.ts';

/** File names of the template and its manifest, side by side. */
export const TEMPLATE_FILE = 'pglite-template.tar.gz';
export const TEMPLATE_MANIFEST_FILE = 'pglite-template.json';

const FORMAT = 1;

/** What a template was made from; all of it must match for the template to be used. */
export interface TemplateManifest {
  format: number;
  pglite: string;
  pgvector: string;
  migrations: { name: string; checksum: string }[];
  /** sha256 of the .tar.gz file. */
  sha256: string;
}

/** A validated template: the uncompressed tar of a PGlite data folder. */
export interface PGliteTemplate {
  manifest: TemplateManifest;
  tar: Uint8Array<ArrayBuffer>;
}

/**
 * Where the template is looked for: beside this module (`dist/store/` when running the build)
 * and the build output seen from the sources (`src/store/` → `dist/store/`), so the test suite
 * run through tsx profits too. A stale build is harmless: its manifest no longer matches.
 */
export function defaultTemplateDirectories(): URL[] {
  const here = new URL('./', import.meta.url);
  const built = new URL('../../dist/store/', import.meta.url);
  return here.href === built.href ? [here] : [here, built];
}

function packageVersion(name: string): string {
  const require = createRequire(import.meta.url);
  // The packages do not export package.json; it sits one level above their dist/ entry.
  const entry = require.resolve(name);
  let dir = dirname(entry);
  for (let i = 0; i < 4; i++) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const parsed = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (parsed.name === name && typeof parsed.version === 'string') return parsed.version;
    }
    dir = dirname(dir);
  }
  throw new Error(`cannot find the version of ${name}`);
}

/** The manifest a template made now, by this code, would carry (without its digest). */
export function expectedManifest(migrations: Migration[]): Omit<TemplateManifest, 'sha256'> {
  return {
    format: FORMAT,
    pglite: packageVersion('@electric-sql/pglite'),
    pgvector: packageVersion('@electric-sql/pglite-pgvector'),
    migrations: migrations.map((m) => ({ name: m.name, checksum: m.checksum })),
  };
}

/**
 * Builds a template into `directory`: a fresh in-memory PGlite, `migrate` applied, a
 * checkpoint so the files hold everything, then the data folder dumped as .tar.gz with its
 * manifest. Used by scripts/build.mjs.
 */
export async function createTemplate(options: {
  directory: string;
  migrations: Migration[];
  migrate: (pg: PGlite) => Promise<void>;
  settings: string[];
}): Promise<TemplateManifest> {
  // Loaded here, at build time only: a process that opens a store runs PGlite in its worker thread.
  const [{ PGlite }, { vector }] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-pgvector')]);
  const pg = await PGlite.create({ extensions: { vector }, postgresqlconf: options.settings });
  let gz: Uint8Array;
  try {
    await options.migrate(pg);
    await pg.exec('CHECKPOINT');
    gz = new Uint8Array(await (await pg.dumpDataDir('gzip')).arrayBuffer());
  } finally {
    await pg.close();
  }
  const manifest: TemplateManifest = {
    ...expectedManifest(options.migrations),
    sha256: createHash('sha256').update(gz).digest('hex'),
  };
  mkdirSync(options.directory, { recursive: true });
  writeFileSync(join(options.directory, TEMPLATE_FILE), gz);
  writeFileSync(join(options.directory, TEMPLATE_MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

// Per process: which template matched is kept, and its uncompressed form (~40 MB) only weakly, so
// a process opening many in-memory stores (the tests) rarely reads or gunzips twice while a
// long-running server holds neither. The .tar.gz (5 MB) is not kept: a server started on a new
// folder held it for its whole life (issue #28); once the tar has been collected the file is read
// again and checked against the manifest's sha256.
interface CacheEntry {
  manifest: TemplateManifest;
  tar?: WeakRef<Uint8Array<ArrayBuffer>>;
}
const cache = new Map<string, CacheEntry | null>();

function sameManifest(found: Partial<TemplateManifest>, expected: Omit<TemplateManifest, 'sha256'>): boolean {
  return (
    found.format === expected.format &&
    found.pglite === expected.pglite &&
    found.pgvector === expected.pgvector &&
    Array.isArray(found.migrations) &&
    found.migrations.length === expected.migrations.length &&
    found.migrations.every(
      (m, i) => m?.name === expected.migrations[i]!.name && m?.checksum === expected.migrations[i]!.checksum,
    )
  );
}

function readEntry(directory: URL, migrations: Migration[]): { manifest: TemplateManifest; gz: Uint8Array } | null {
  try {
    const manifestPath = join(fileURLToPath(directory), TEMPLATE_MANIFEST_FILE);
    if (!existsSync(manifestPath)) return null;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Partial<TemplateManifest>;
    if (!sameManifest(manifest, expectedManifest(migrations))) return null;
    const gz = readTemplateFile(directory, manifest as TemplateManifest);
    return gz ? { manifest: manifest as TemplateManifest, gz } : null;
  } catch {
    return null;
  }
}

/** The .tar.gz in `directory` if it is the one `manifest` names (its sha256), else null. */
function readTemplateFile(directory: URL, manifest: TemplateManifest): Uint8Array | null {
  try {
    const gz = readFileSync(join(fileURLToPath(directory), TEMPLATE_FILE));
    return createHash('sha256').update(gz).digest('hex') === manifest.sha256 ? gz : null;
  } catch {
    return null;
  }
}

/**
 * Output chunks of the template's gunzip. zlib's default (16 KiB) made ~2,500 chunks for the ~40 MB
 * tar, below the allocator's mmap threshold (32 KiB under `quiver serve`), freed once concatenated:
 * a server started on a new folder kept ~35 MB of freed arena for its whole life (issue #28).
 * Chunks of 1 MiB are mapped on their own and returned when freed.
 */
const GUNZIP_CHUNK = 1024 * 1024;

/**
 * The first usable template among `directories` for these migrations, or undefined. Never
 * throws: a template that cannot be read, does not match or does not decompress is skipped.
 */
export function loadTemplate(
  migrations: Migration[],
  directories: URL[] = defaultTemplateDirectories(),
): PGliteTemplate | undefined {
  const key = migrations.map((m) => `${m.name}:${m.checksum}`).join(',');
  for (const directory of directories) {
    const cacheKey = `${directory.href}|${key}`;
    let entry = cache.get(cacheKey);
    let gz: Uint8Array | null | undefined;
    if (entry === undefined) {
      const read = readEntry(directory, migrations);
      entry = read && { manifest: read.manifest };
      gz = read?.gz;
      cache.set(cacheKey, entry);
    }
    if (entry === null) continue;
    let tar = entry.tar?.deref();
    if (tar === undefined) {
      gz ??= readTemplateFile(directory, entry.manifest);
      if (gz === null) {
        cache.set(cacheKey, null);
        continue;
      }
      try {
        const unzipped = gunzipSync(gz, { chunkSize: GUNZIP_CHUNK });
        tar = new Uint8Array(unzipped.buffer as ArrayBuffer, unzipped.byteOffset, unzipped.byteLength);
        readTar(tar); // refuse anything that is not a plain data folder before PGlite sees it
      } catch {
        cache.set(cacheKey, null);
        continue;
      }
      entry.tar = new WeakRef(tar);
    }
    return { manifest: entry.manifest, tar };
  }
  return undefined;
}

/** Forgets what loadTemplate read (tests change templates on disk). */
export function clearTemplateCache(): void {
  cache.clear();
}

/** Files that may be in a data folder before PGlite has created anything (the lock file). */
const IGNORABLE_BEFORE_INIT = new Set([LOCK_FILE, CONTROL_SOCKET_FILE]);

/** True when `dataDir` holds no PostgreSQL cluster and nothing else that could be one. */
export function isNewDataDir(dataDir: string): boolean {
  if (!existsSync(dataDir)) return true;
  return readdirSync(dataDir).every((entry) => IGNORABLE_BEFORE_INIT.has(entry));
}

interface TarEntry {
  path: string;
  directory: boolean;
  data: Uint8Array;
}

/**
 * Reads a ustar archive as written by PGlite's dumpDataDir (regular files and directories
 * only). Anything else — links, absolute or `..` paths, truncated data — is refused.
 */
export function readTar(tar: Uint8Array): TarEntry[] {
  const decoder = new TextDecoder();
  const text = (offset: number, length: number): string => {
    const bytes = tar.subarray(offset, offset + length);
    const end = bytes.indexOf(0);
    return decoder.decode(end < 0 ? bytes : bytes.subarray(0, end));
  };
  const entries: TarEntry[] = [];
  let offset = 0;
  while (offset + 512 <= tar.length) {
    const name = text(offset, 100);
    if (name === '') break; // the zero blocks that end the archive
    const prefix = text(offset + 345, 155);
    const sizeField = text(offset + 124, 12).trim();
    const size = sizeField === '' ? 0 : Number.parseInt(sizeField, 8);
    const type = text(offset + 156, 1) || '0';
    if (!Number.isSafeInteger(size) || size < 0) throw new Error(`bad size in tar entry ${name}`);
    if (type !== '0' && type !== '5') throw new Error(`unsupported tar entry type ${type} (${name})`);
    const raw = (prefix ? `${prefix}/${name}` : name).replace(/^\/+/, '');
    const path = normalize(raw);
    if (raw === '' || isAbsolute(path) || path === '..' || path.startsWith(`..${sep}`)) {
      throw new Error(`unsafe tar entry ${raw}`);
    }
    offset += 512;
    if (offset + size > tar.length) throw new Error(`truncated tar entry ${raw}`);
    entries.push({ path, directory: type === '5', data: tar.subarray(offset, offset + size) });
    offset += Math.ceil(size / 512) * 512;
  }
  if (!entries.some((e) => e.path === 'PG_VERSION' && !e.directory)) throw new Error('not a PostgreSQL data folder');
  return entries;
}

/**
 * Unpacks the template into a new, empty data folder with Node's own file system calls (twice
 * as fast as PGlite's `loadDataDir`, which writes through the WASM file system). On failure the
 * folder is put back as it was and false is returned, so the caller falls back to initdb.
 */
export function extractTemplate(template: PGliteTemplate, dataDir: string): boolean {
  if (!isNewDataDir(dataDir)) return false;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    for (const entry of readTar(template.tar)) {
      const target = join(dataDir, entry.path);
      if (entry.directory) {
        mkdirSync(target, { recursive: true, mode: 0o700 });
      } else {
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        writeFileSync(target, entry.data, { mode: 0o600, flag: 'wx' });
      }
    }
    return true;
  } catch {
    clearNewDataDir(dataDir);
    return false;
  }
}

/** Empties a data folder that was being created from the template (keeping the lock file). */
export function clearNewDataDir(dataDir: string): void {
  if (!existsSync(dataDir)) return;
  for (const entry of readdirSync(dataDir)) {
    if (!IGNORABLE_BEFORE_INIT.has(entry)) rmSync(join(dataDir, entry), { recursive: true, force: true });
  }
}
