/**
 * @module openapi
 * REST APIs described by OpenAPI 3.0 / 3.1 as Quiver plugins (issue #14): read a document
 * (load.ts), bundle its `$ref`s into one pinned document (refs.ts), turn its operations into
 * MCP tool definitions (operations.ts), and execute them over HTTP (execute.ts) from an
 * in-process MCP server (server.ts).
 */
import { invalidInput } from '../core/errors.ts';
import { bundleOpenApi, type BundledDocument } from './refs.ts';
import { createSpecReader, type ReaderOptions } from './load.ts';

export { openApiToolDefinitions, sanitizeToolName } from './operations.ts';
export { bundleOpenApi, inlineRefs, resolvePointer, EXTERNAL_MEMBER, type BundledDocument } from './refs.ts';
export { createFileReader, createUrlReader, createSpecReader, parseOpenApiText, OPENAPI_DOCUMENT_LIMIT, type SpecReader, type ReaderOptions } from './load.ts';
export { credentialNames, applyCredentials } from './security.ts';
export type * from './types.ts';

/**
 * Reads an OpenAPI document from a file or http(s) URL with everything it references, as one
 * bundled document with internal `$ref`s only.
 *
 * @example
 * const { document } = await readOpenApiDocument('specs/petstore.yaml');
 * const { tools } = openApiToolDefinitions(document);
 */
export async function readOpenApiDocument(location: string, options: ReaderOptions & { cwd?: string } = {}): Promise<BundledDocument> {
  try {
    return await bundleOpenApi(await createSpecReader(location, options));
  } catch (error) {
    // Walking a document nested thousands of levels deep exhausts the stack: its author's problem.
    if (error instanceof RangeError) throw invalidInput('the OpenAPI document is nested too deeply to read');
    throw error;
  }
}
