/**
 * @module plugins/import-egress
 * The next step for an imported server's network (issue #26). A sandboxed plugin reaches only
 * the hosts on its allow-list, and a server imported from a client configuration was used to
 * reaching the internet. Where the entry says which host it needs — a known server
 * (`server-github` → api.github.com, `server-brave-search` → api.search.brave.com, …) or an
 * http(s) URL in its env or arguments (`GITLAB_API_URL=https://gitlab.example.com/api/v4`) —
 * the import proposes that allow-list; the admin confirms it with `quiver import --allow-egress`
 * or one `quiver plugin allow` per host. A server known to fetch whatever it is asked for
 * (puppeteer, fetch) gets no proposal, only the command to allow a host.
 */

/** What the import proposes for one entry's egress. */
export interface EgressProposal {
  /** `host` or `host:port` targets for `quiver plugin allow` (port 443 when none). */
  hosts: string[];
  /** Where they came from, for the table. */
  why: string;
}

/** npm package names (without scope) of servers with a fixed API host. */
const KNOWN_HOSTS: Record<string, string[]> = {
  'server-github': ['api.github.com'],
  'github-mcp-server': ['api.github.com'],
  'server-brave-search': ['api.search.brave.com'],
  'server-slack': ['slack.com'],
  'server-gitlab': ['gitlab.com'],
  'server-google-maps': ['maps.googleapis.com'],
  'server-everart': ['api.everart.ai'],
  'server-aws-kb-retrieval': ['bedrock-agent-runtime.us-east-1.amazonaws.com'],
  'server-sentry': ['sentry.io'],
};

/** Servers that reach whatever site they are asked to: no allow-list can be proposed. */
const OPEN_ENDED = new Set(['server-puppeteer', 'server-fetch', 'mcp-server-fetch', 'server-playwright', 'playwright-mcp']);

function packageBase(spec: string): string {
  const at = spec.indexOf('@', spec.startsWith('@') ? 1 : 0);
  return (at < 0 ? spec : spec.slice(0, at)).split('/').pop() ?? spec;
}

/** `https://host:8443/x` → `host:8443`; `https://host/x` → `host`; loopback and non-http values are skipped. */
function urlTarget(value: string): string | undefined {
  if (!/^https?:\/\//i.test(value.trim())) return undefined;
  try {
    const url = new URL(value.trim());
    if (url.hostname === '' || /^(localhost|127\.|\[::1\])/.test(url.hostname)) return undefined;
    const defaultPort = url.protocol === 'http:' ? '80' : '443';
    const port = url.port === '' ? defaultPort : url.port;
    return port === '443' ? url.hostname : `${url.hostname}:${port}`;
  } catch {
    return undefined;
  }
}

/**
 * The allow-list an entry's configuration calls for, or `open` for a server that fetches
 * anything, or undefined when nothing says it uses the network.
 */
export function proposedEgress(spec: string, args: readonly string[], env: Readonly<Record<string, string>>): EgressProposal | { open: true } | undefined {
  const base = packageBase(spec);
  if (OPEN_ENDED.has(base)) return { open: true };
  const fromUrls = [...Object.values(env), ...args].map(urlTarget).filter((target): target is string => target !== undefined);
  if (fromUrls.length > 0) return { hosts: [...new Set(fromUrls)], why: 'the URL in its configuration' };
  const known = KNOWN_HOSTS[base];
  if (known !== undefined) return { hosts: known, why: `the API ${base} calls` };
  return undefined;
}

/** The warning that names the next step for an entry's egress (the import table shows its command). */
export function egressStep(plugin: string, proposal: EgressProposal | { open: true }): string {
  if ('open' in proposal) return `it fetches whatever sites it is asked to; allow each with 'quiver plugin allow ${plugin} HOST'`;
  return `its sandbox reaches no network until allowed: proposed ${proposal.hosts.join(', ')} (${proposal.why}); run 'quiver plugin allow ${plugin} ${proposal.hosts[0]}'${proposal.hosts.length > 1 ? ' for each' : ''}, or import with --allow-egress`;
}
