/**
 * @module openapi/response
 * An HTTP response → an MCP CallToolResult: JSON as `structuredContent` (an object as is,
 * anything else as `{ result }`) plus its text for older clients; text as text; images as
 * image content; other binaries as an embedded resource; an HTTP error status as
 * `isError: true` with the status and a bounded excerpt of the body (bodies are read up to a
 * size cap by bounded-body.ts), credential values blanked from any text shown.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** Default cap on a response body, bytes. */
export const RESPONSE_LIMIT = 5 * 1024 * 1024;
/** How much of an error body is shown. */
const ERROR_EXCERPT = 1_000;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isTextual(contentType: string): boolean {
  return /^text\/|xml|yaml|javascript|x-www-form-urlencoded|csv/i.test(contentType);
}

/** What the response turns into, before redaction. */
export interface ResponseSummary {
  status: number;
  statusText: string;
  contentType: string;
  body: Buffer;
  /** `METHOD /path` of the operation, for messages. */
  label: string;
  wrapsResult: boolean;
  redact: (text: string) => string;
}

/** Turns a response into a tool result. */
export function toToolResult(summary: ResponseSummary): CallToolResult {
  const { status, contentType, body, redact } = summary;
  if (status >= 400) {
    const text = body.toString('utf8');
    const excerpt = text.length > ERROR_EXCERPT ? `${text.slice(0, ERROR_EXCERPT)}… (${body.length} bytes)` : text;
    return {
      isError: true,
      content: [{ type: 'text', text: redact(`HTTP ${status}${summary.statusText ? ` ${summary.statusText}` : ''} from ${summary.label}${excerpt.trim() ? `: ${excerpt.trim()}` : ''}`) }],
    };
  }
  if (body.length === 0) return { content: [{ type: 'text', text: `HTTP ${status} from ${summary.label} (no content)` }] };
  if (/json/i.test(contentType)) {
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8')) as unknown;
    } catch {
      return { content: [{ type: 'text', text: redact(body.toString('utf8')) }] };
    }
    const structuredContent = !summary.wrapsResult && isPlainObject(value) ? value : { result: value };
    return { content: [{ type: 'text', text: redact(JSON.stringify(value)) }], structuredContent };
  }
  if (contentType === '' || isTextual(contentType)) return { content: [{ type: 'text', text: redact(body.toString('utf8')) }] };
  const mimeType = contentType.split(';')[0]!.trim();
  if (/^image\//i.test(mimeType)) return { content: [{ type: 'image', data: body.toString('base64'), mimeType }] };
  return { content: [{ type: 'resource', resource: { uri: `data:${mimeType}`, mimeType, blob: body.toString('base64') } }] };
}
