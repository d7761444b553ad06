/**
 * @module selection/learning/redact
 * Redaction before a request becomes a learned example (DESIGN §3.10: secrets and obvious
 * personal data are never stored). Rules run in a fixed order, most specific first, and each
 * replaces a match with a placeholder that still reads as a word (`<email>`), so the example
 * keeps its intent ("send the report to <email>") without the data. Conservative by design:
 * a false positive only costs an example some words; a miss stores personal data.
 */

/** One redaction rule: what it matches and the placeholder it leaves. */
interface Rule {
  name: string;
  pattern: RegExp;
  placeholder: string;
}

const RULES: readonly Rule[] = [
  // scheme://user:password@host — the credentials part, whatever the scheme.
  { name: 'url_credentials', pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s/@:]+:[^\s/@]+@[^\s]+/gi, placeholder: '<url>' },
  // Authorization-style values: "Bearer abc…", "token=…", "api_key: …", "password=…".
  { name: 'bearer', pattern: /\bbearer\s+[a-z0-9._~+/=-]{8,}/gi, placeholder: '<secret>' },
  {
    name: 'assigned_secret',
    pattern: /\b(api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|password|passwd|pwd|client[_-]?secret)\s*[:=]\s*\S+/gi,
    placeholder: '$1=<secret>',
  },
  // Well-known key shapes: sk-…, ghp_…, xox…-, AKIA…, JWTs.
  { name: 'key_prefix', pattern: /\b(sk|pk|rk)[-_](live[-_]|test[-_])?[a-z0-9_-]{16,}\b/gi, placeholder: '<secret>' },
  { name: 'github_token', pattern: /\b(ghp|gho|ghu|ghs|ghr|github_pat)_[a-z0-9_]{16,}\b/gi, placeholder: '<secret>' },
  { name: 'slack_token', pattern: /\bxox[abprs]-[a-z0-9-]{10,}\b/gi, placeholder: '<secret>' },
  { name: 'aws_key', pattern: /\b(AKIA|ASIA)[A-Z0-9]{16}\b/g, placeholder: '<secret>' },
  { name: 'jwt', pattern: /\beyJ[a-z0-9_-]{8,}\.[a-z0-9_-]{8,}\.[a-z0-9_-]{8,}\b/gi, placeholder: '<secret>' },
  { name: 'email', pattern: /\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b/gi, placeholder: '<email>' },
  // Long opaque strings mixing letters and digits (hex digests, random tokens).
  { name: 'opaque_token', pattern: /\b(?=[a-z0-9_-]*\d)(?=[a-z0-9_-]*[a-z])[a-z0-9_-]{24,}\b/gi, placeholder: '<secret>' },
  // Phone numbers: +country or grouped digits (7+ digits with separators).
  { name: 'phone', pattern: /(?<![\w+])\+?\d[\d ().-]{6,}\d(?!\w)/g, placeholder: '<phone>' },
  // Any remaining run of 6+ digits (card, account, ID numbers); short numbers ("50 euros", "2024") stay.
  { name: 'digits', pattern: /\d{6,}/g, placeholder: '<number>' },
];

/**
 * A phone-like match is a phone number when it has 7 to 15 digits and is not an ISO date; a
 * bare digit run is left to the `digits` rule (card and account numbers read as `<number>`).
 */
function isPhoneLike(match: string): boolean {
  const digits = match.replace(/\D/g, '').length;
  if (digits < 7 || digits > 15 || /^\d+$/.test(match)) return false;
  return !/^\d{4}-\d{2}-\d{2}$/.test(match.trim());
}

/** What `redact` returns: the text and the names of the rules that fired. */
export interface Redacted {
  text: string;
  rules: string[];
}

/** Replaces secrets and personal data in `text` with placeholders. */
export function redact(text: string): Redacted {
  let out = text;
  const fired: string[] = [];
  for (const rule of RULES) {
    const next = out.replace(rule.pattern, (match, ...groups) => {
      if (rule.name === 'phone' && !isPhoneLike(match)) return match;
      const first = typeof groups[0] === 'string' ? groups[0] : '';
      return rule.placeholder.replace('$1', first);
    });
    if (next !== out) fired.push(rule.name);
    out = next;
  }
  return { text: out, rules: fired };
}

/**
 * The dedupe key of an example: lower case, placeholders and punctuation to spaces, one space
 * between words, so "Convert 50 EUR to yen!" and "convert 50 eur to yen" are one example.
 */
export function textKey(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}<>]+/gu, ' ')
    .trim()
    .replace(/\s+/g, ' ');
}
