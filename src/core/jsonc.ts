/**
 * @module core/jsonc
 * JSON with comments and trailing commas, as VS Code writes `.vscode/mcp.json` and
 * `settings.json`, read with VS Code's own parser (`jsonc-parser`, no dependencies), so what
 * VS Code accepts is what Quiver accepts. An error names its line and column.
 */
// jsonc-parser ships a UMD build as its main: Node's ESM loader sees its exports on the default only.
import jsonc from 'jsonc-parser';

/** Parses JSON that may carry comments and trailing commas; throws SyntaxError (with line and column) like `JSON.parse`. */
export function parseJsonc(text: string): unknown {
  const errors: jsonc.ParseError[] = [];
  const value: unknown = jsonc.parse(text.replace(/^\uFEFF/, ''), errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  const first = errors[0];
  if (first !== undefined) {
    const before = text.replace(/^\uFEFF/, '').slice(0, first.offset);
    const line = before.split('\n').length;
    const column = first.offset - before.lastIndexOf('\n');
    throw new SyntaxError(`${jsonc.printParseErrorCode(first.error)} at line ${line}, column ${column}`);
  }
  return value;
}
