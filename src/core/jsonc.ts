/**
 * @module core/jsonc
 * JSON with comments and trailing commas, as VS Code writes `.vscode/mcp.json` and
 * `settings.json`: comments and trailing commas are blanked out (outside strings), then the
 * text goes through `JSON.parse`, so positions in error messages stay right.
 */

/** Strips `//` and `/* *\/` comments and trailing commas outside strings; the rest is untouched. */
export function stripJsonComments(text: string): string {
  const out = text.split('');
  let i = 0;
  let lastSignificant = -1; // index of the last non-space character kept, to find trailing commas
  while (i < out.length) {
    const char = out[i]!;
    if (char === '"') {
      lastSignificant = i;
      i += 1;
      while (i < out.length && out[i] !== '"') i += out[i] === '\\' ? 2 : 1;
      lastSignificant = i;
      i += 1;
    } else if (char === '/' && out[i + 1] === '/') {
      while (i < out.length && out[i] !== '\n') out[i++] = ' ';
    } else if (char === '/' && out[i + 1] === '*') {
      out[i++] = ' ';
      out[i++] = ' ';
      while (i < out.length && !(out[i] === '*' && out[i + 1] === '/')) {
        if (out[i] !== '\n') out[i] = ' ';
        i += 1;
      }
      if (i < out.length) {
        out[i++] = ' ';
        out[i++] = ' ';
      }
    } else if (char === '}' || char === ']') {
      if (lastSignificant >= 0 && out[lastSignificant] === ',') out[lastSignificant] = ' ';
      lastSignificant = i;
      i += 1;
    } else {
      if (!/\s/.test(char)) lastSignificant = i;
      i += 1;
    }
  }
  return out.join('');
}

/** Parses JSON that may carry comments and trailing commas; throws SyntaxError like `JSON.parse`. */
export function parseJsonc(text: string): unknown {
  return JSON.parse(stripJsonComments(text.replace(/^\uFEFF/, '')));
}
