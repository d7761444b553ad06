/**
 * @module verification/stages/security-scan/secrets
 * Hard-coded secrets in a plugin's own files (issue #10): credentials with a recognisable
 * format (AWS access key ids, GitHub / npm / Slack / OpenAI / Anthropic / Google / Stripe
 * tokens, private key blocks, Slack webhooks) and high-entropy string values assigned to names
 * like apiKey / secret / token / password. Token formats are textual by nature (they also
 * hide in JSON, .env and YAML files), so this scans lines, not syntax trees. A finding is the
 * line and the kind only: the value is never kept, logged or reported.
 */
import { entropy } from '../static-analysis/analyse-file.ts';

/** One secret found: 1-based line and kind (never the value). */
export interface SecretFinding {
  line: number;
  kind: string;
}

const FORMATS: Array<{ kind: string; pattern: RegExp }> = [
  { kind: 'AWS access key id', pattern: /\b(AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { kind: 'GitHub token', pattern: /\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b/ },
  { kind: 'npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/ },
  { kind: 'Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/ },
  { kind: 'Slack webhook', pattern: /hooks\.slack\.com\/services\/T[A-Z0-9]{6,}\/B[A-Z0-9]{6,}\/[A-Za-z0-9]{16,}/ },
  { kind: 'Anthropic API key', pattern: /\bsk-ant-[A-Za-z0-9_-]{30,}/ },
  { kind: 'OpenAI API key', pattern: /\bsk-(proj-|svcacct-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}|\bsk-(proj|svcacct)-[A-Za-z0-9_-]{40,}/ },
  { kind: 'Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { kind: 'Stripe secret key', pattern: /\b(sk|rk)_live_[0-9a-zA-Z]{24,}\b/ },
  { kind: 'private key block', pattern: /-----BEGIN (RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY( BLOCK)?-----/ },
];

const ASSIGNMENT = /(?:api[_-]?key|apikey|secret|token|password|passwd|client[_-]?secret|access[_-]?key|auth[_-]?token|private[_-]?key)["']?\s*[:=]\s*["'`]([^"'`\s]{16,200})["'`]/i;
const PLACEHOLDER = /^(x+|\*+|<.*>|\$\{.*\}|\{\{.*\}\})$|your[_-]?|changeme|example|dummy|placeholder|redacted|replace|sample/i;

/** Secrets in one file's text, by line. */
export function scanSecrets(text: string): SecretFinding[] {
  const findings: SecretFinding[] = [];
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    const format = FORMATS.find((entry) => entry.pattern.test(line));
    if (format !== undefined) {
      findings.push({ line: index + 1, kind: format.kind });
      continue;
    }
    const value = ASSIGNMENT.exec(line)?.[1];
    if (value !== undefined && !PLACEHOLDER.test(value) && entropy(value) >= 3.5 && /\d/.test(value) && /[A-Za-z]/.test(value)) {
      findings.push({ line: index + 1, kind: 'high-entropy value assigned to a secret-like name' });
    }
  }
  return findings;
}
