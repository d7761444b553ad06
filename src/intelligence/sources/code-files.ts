/**
 * @module intelligence/sources/code-files
 * The plugin's own source files, read the way verification's static analysis reads them
 * (verification/stages/static-analysis/code-files.ts and plugins/source-files.ts): bounded in
 * count and size, links never followed, nothing read outside the code folder, node_modules and
 * .git skipped, declaration files ignored. The files are only read as text: generation never
 * imports or runs plugin code (issue #14).
 */
import { sha256Hex, contentHash } from '../../core/hash.ts';
import { readSourceFile } from '../../plugins/source-files.ts';
import { listCodeFiles, type CodeFileLimits } from '../../verification/stages/static-analysis/code-files.ts';

/** Smaller than verification's bounds: only the plugin's own code is read, never its dependencies. */
export const GENERATION_FILE_LIMITS: CodeFileLimits = { maxFiles: 500, maxFileBytes: 1024 * 1024, maxTotalBytes: 16 * 1024 * 1024 };

/** One file's text. */
export interface CodeText {
  path: string;
  text: string;
}

/** The files read, the hash of their paths and contents, and what could not be read. */
export interface CodeSnapshot {
  files: CodeText[];
  inputHash: string;
  warnings: string[];
}

const SOURCE_EXTENSIONS = /\.(m|c)?(j|t)sx?$/;

/** Reads the plugin's own JavaScript / TypeScript files under `codeDir` within `limits`. */
export async function readCodeSnapshot(codeDir: string, limits: CodeFileLimits = GENERATION_FILE_LIMITS): Promise<CodeSnapshot> {
  const { files, skipped } = await listCodeFiles(codeDir, [], limits, SOURCE_EXTENSIONS, '');
  const warnings: string[] = [];
  const texts: CodeText[] = [];
  for (const file of files) {
    try {
      const text = await readSourceFile(codeDir, file.path, { maxBytes: limits.maxFileBytes });
      if (text !== undefined) texts.push({ path: file.path, text });
    } catch (error) {
      warnings.push(`${file.path} could not be read (${(error as Error).message})`);
    }
  }
  const left = skipped.tooLarge + skipped.overLimit;
  if (left > 0) warnings.push(`${left} source file(s) were left out by the size limits`);
  if (skipped.links > 0) warnings.push(`${skipped.links} symbolic link(s) were not followed`);
  const inputHash = contentHash(texts.map((file) => [file.path, sha256Hex(file.text)]));
  return { files: texts, inputHash, warnings };
}
