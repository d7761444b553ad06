/**
 * @module verification/stages/security-scan/advisories
 * Known vulnerabilities of the installed dependency tree from the npm registry's bulk advisory
 * endpoint, the one `npm audit` uses: `POST {registry}/-/npm/v1/security/advisories/bulk` with
 * `{"name": ["version", …]}`, answered with `{"name": [{id, url, title, severity,
 * vulnerable_versions, …}]}` for the versions that are affected. Unreachable, a status other
 * than 200 or a body that is not that shape is a result (`unavailable` with the reason), never
 * an exception: the stage reports it and caps the verdict.
 */

/** One advisory as the registry returns it (the fields used). */
export interface Advisory {
  id: number | string;
  title: string;
  severity: 'critical' | 'high' | 'moderate' | 'low' | 'info';
  url?: string;
  vulnerable_versions?: string;
}

/** What the lookup gave: advisories per package name, or why there are none. */
export type AdvisoryLookup = { ok: true; advisories: Record<string, Advisory[]> } | { ok: false; reason: string };

const SEVERITIES = new Set(['critical', 'high', 'moderate', 'low', 'info']);

function parseAdvisories(body: unknown): Record<string, Advisory[]> | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const result: Record<string, Advisory[]> = {};
  for (const [name, list] of Object.entries(body as Record<string, unknown>)) {
    if (!Array.isArray(list)) return undefined;
    result[name] = list.flatMap((entry) => {
      if (entry === null || typeof entry !== 'object') return [];
      const raw = entry as Record<string, unknown>;
      const severity = typeof raw['severity'] === 'string' && SEVERITIES.has(raw['severity']) ? (raw['severity'] as Advisory['severity']) : 'moderate';
      return [
        {
          id: typeof raw['id'] === 'number' || typeof raw['id'] === 'string' ? raw['id'] : 'unknown',
          title: typeof raw['title'] === 'string' ? raw['title'].slice(0, 200) : 'advisory',
          severity,
          ...(typeof raw['url'] === 'string' ? { url: raw['url'] } : {}),
          ...(typeof raw['vulnerable_versions'] === 'string' ? { vulnerable_versions: raw['vulnerable_versions'] } : {}),
        },
      ];
    });
  }
  return result;
}

/** Asks the registry for advisories of these name → versions; never throws for the registry's failures. */
export async function lookupAdvisories(registryUrl: string, versions: Record<string, string[]>, signal: AbortSignal, timeoutMs = 20_000): Promise<AdvisoryLookup> {
  const url = `${registryUrl.replace(/\/+$/, '')}/-/npm/v1/security/advisories/bulk`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(versions),
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
  } catch (error) {
    if (signal.aborted) throw error;
    return { ok: false, reason: `the advisory endpoint of ${new URL(url).host} is unreachable (${(error as Error).name === 'TimeoutError' ? 'timed out' : ((error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message)})` };
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, reason: `the advisory endpoint of ${new URL(url).host} answered HTTP ${response.status}` };
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return { ok: false, reason: 'the advisory endpoint answered with a body that is not JSON' };
  }
  const advisories = parseAdvisories(body);
  return advisories === undefined ? { ok: false, reason: 'the advisory endpoint answered in an unexpected shape' } : { ok: true, advisories };
}
