/**
 * @module access/authorization-server/csrf
 * Anti-CSRF tokens of the sign-in, consent and sign-up forms: an HMAC of the form's purpose and
 * the flow it belongs to (the interaction id, the invitation) under a key derived from the hub's
 * secret key. A POST without the token of its own flow is refused; the provider's interaction
 * cookie (SameSite=Lax) is a second barrier, since a cross-site POST does not carry it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface CsrfTokens {
  issue(purpose: string, binding: string): string;
  /** True when `presented` is the token of (`purpose`, `binding`). */
  verify(purpose: string, binding: string, presented: unknown): boolean;
}

export function createCsrfTokens(key: Buffer): CsrfTokens {
  const issue = (purpose: string, binding: string) => createHmac('sha256', key).update(`quiver-csrf\0${purpose}\0${binding}`).digest('base64url');
  return {
    issue,
    verify(purpose, binding, presented) {
      if (typeof presented !== 'string' || presented.length === 0) return false;
      const expected = Buffer.from(issue(purpose, binding));
      const actual = Buffer.from(presented);
      return actual.length === expected.length && timingSafeEqual(actual, expected);
    },
  };
}
