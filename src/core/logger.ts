/**
 * @module core/logger
 * The logging interface every part takes as an option. Libraries are silent by default
 * (`silentLogger`); the app injects a structured JSON logger writing to stderr.
 */

/** Structured logger: a context object first, then a message (pino's calling convention). */
export interface Logger {
  debug(context: object, message?: string): void;
  info(context: object, message?: string): void;
  warn(context: object, message?: string): void;
  error(context: object, message?: string): void;
  child(bindings: object): Logger;
}

/** A logger that drops everything. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};

const SECRET_KEY_PATTERN = /(secret|token|password|passwd|api[-_]?key|authorization|credential|cookie)/i;

/** Replaces the values of secret-looking keys (at any depth) with "[redacted]". */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_KEY_PATTERN.test(key) && member !== null && member !== undefined ? '[redacted]' : redactSecrets(member, depth + 1);
  }
  return out as T;
}
