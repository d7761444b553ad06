/**
 * @module verification/stages/static-analysis/file-finding
 * What the scan of one file reports, shared by the JavaScript/TypeScript scan
 * (`analyse-file.ts`), the Python scan (`python-scan.ts`) and the rules that weigh findings
 * (`findings.ts`): kept beneath all three so they form a tree, not a cycle (issue #28).
 */

/** What can be found in one file. */
export type FileFindingCode =
  | 'dynamic-process'
  | 'process-spawn'
  | 'eval'
  | 'dynamic-code'
  | 'dynamic-require'
  | 'dynamic-import'
  | 'network'
  | 'fs-write'
  | 'minified'
  | 'high-entropy-string'
  | 'encoded-blob'
  | 'escaped-identifier'
  | 'obfuscated-identifiers'
  | 'raw-socket'
  | 'secret-path'
  | 'env-enumeration'
  | 'env-serialisation'
  | 'unsafe-deserialise';

/** One finding: code, 1-based line, and a short non-content detail (a module name, an API name). */
export interface FileFinding {
  code: FileFindingCode;
  line: number;
  detail?: string;
  /** Code execution whose code or command is computed at run time (it runs whatever data reaches it): caps the verdict. */
  fromData?: true;
}
