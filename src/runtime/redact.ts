/**
 * @module runtime/redact
 * Credentials reach the runtime already decrypted (DESIGN §3.5): they must never appear in a
 * log line or an error message. A redactor replaces every occurrence of a secret value
 * (env values and header values of a spec) with "[redacted]", whatever the text is.
 */
import type { UpstreamSpec } from './types.ts';

/** Replaces secret values inside text. */
export type Redactor = (text: string) => string;

// Values shorter than this are too common to be worth hiding ("1", "true") and would mangle text.
const minimumSecretLength = 4;

/** A redactor hiding every value in `values` (longest first, so overlapping values vanish whole). */
export function createRedactor(values: Iterable<string>): Redactor {
  const secrets = [...new Set([...values].filter((value) => value.length >= minimumSecretLength))].sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const secret of secrets) out = out.split(secret).join('[redacted]');
    return out;
  };
}

/** The redactor for one spec: all env values (stdio, openapi) or header values (http) are treated as secret. */
export function redactorForSpec(spec: UpstreamSpec): Redactor {
  const values = spec.transport === 'http' ? Object.values(spec.headers) : Object.values(spec.env);
  // Basic auth and bearer tokens also travel base64-encoded or split; hide the token part too.
  const extra = values.flatMap((value) => value.split(/\s+/).filter((part) => part.length >= 8));
  return createRedactor([...values, ...extra]);
}
