/**
 * @module runtime/sandbox-egress
 * An enforced per-plugin egress allow-list for a sandboxed process (issue #10, DESIGN §3.6).
 *
 * The sandbox has its own network namespace with only a loopback interface; the one way out is
 * the egress proxy's Unix socket (egress-proxy.ts), which opens a connection from the host only
 * when the allow-list says so and records every decision. Inside the sandbox a small bridge
 * (`sandboxBridgeScript`, plain Node) makes the allowed destinations look like themselves:
 *
 * - an IP rule (`127.0.0.1:5432`, `10.0.0.5:443`) gets a listener on that very address and port
 *   (non-loopback addresses are added to the sandbox's `lo` first), forwarding through the proxy
 *   to the same destination on the host: a database client connects as it always does;
 * - a host-name rule (`api.github.com:443`) gets a private loopback address (127.77.x.y) in a
 *   generated `/etc/hosts`, and a listener there forwarding to the real `host:port` through the
 *   proxy (TLS stays end to end, SNI intact);
 * - `HTTP(S)_PROXY` points at a bridge listener for proxy-aware clients (any allowed host);
 * - a DNS stub on the sandbox's 127.0.0.1:53 (the generated `resolv.conf` points there) answers
 *   allowed names with their private address and every other name with NXDOMAIN, and reports
 *   each refused name to the proxy: "phones home" attempts are logged as denied (port 0).
 *
 * Connections to an IP address and port not on the list find no listener and are refused by
 * the sandbox's own kernel; they are not logged (there is no packet filter to see them).
 *
 * Binding ports below 1024 and adding addresses needs privileges the sandbox never has: the
 * launch chain creates the network namespace one step before bubblewrap (`unshare --user
 * --map-root-user --net`, as the sandbox user), raises `lo`, allows unprivileged low ports and
 * adds the addresses there, then execs bubblewrap, whose sandbox joins that namespace without
 * any capability (sandbox.ts).
 */
import { mkdtempSync, chmodSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Logger } from '../core/logger.ts';
import { startEgressProxy, type EgressDecision, type EgressProxy, type EgressRule } from './egress-proxy.ts';

/** One listener of the bridge: `address:port` inside the sandbox → `target` through the proxy. */
export interface BridgeListener {
  address: string;
  port: number;
  target: EgressRule;
}

/** What the bridge does and what the sandbox's `lo` must carry (a pure plan of the allow-list). */
export interface SandboxEgressPlan {
  listeners: BridgeListener[];
  /** Host name → private loopback address (for `/etc/hosts` and the DNS stub). */
  names: Record<string, string>;
  /** Addresses added to the sandbox's `lo` (CIDR, e.g. `10.0.0.5/32`), besides 127/8 and ::1. */
  addresses: string[];
}

/** What a launch binds into the sandbox (all in one folder, bound read-only at the same path). */
export interface EgressMount {
  folder: string;
  /** The folder of the proxy's Unix socket (bound read-only too). */
  socketFolder: string;
  /** The bridge's configuration (JSON), given to the bridge as its first argument. */
  configPath: string;
  hostsFile: string;
  resolvFile: string;
  /** Addresses the launch chain adds to the sandbox's `lo`. */
  addresses: string[];
}

/** A running allow-list for one sandboxed process: its mount, its decisions, how to stop it. */
export interface SandboxEgress {
  readonly mount: EgressMount;
  readonly decisions: readonly EgressDecision[];
  close(): Promise<void>;
}

export interface SandboxEgressOptions {
  /** Names the process in logs and decisions (e.g. the plugin name). */
  label: string;
  /** Where it may go; empty: nowhere (every attempt that can be seen is logged as denied). */
  allow: readonly EgressRule[];
  logger?: Logger;
  onDecision?: (decision: EgressDecision) => void;
}

/** First private address given to host names; 127/8 is all loopback on Linux. */
const namePrefix = '127.77';

/** Plans listeners, names and addresses for an allow-list (pure; duplicates collapse). */
export function planSandboxEgress(allow: readonly EgressRule[]): SandboxEgressPlan {
  const listeners = new Map<string, BridgeListener>();
  const names: Record<string, string> = {};
  const addresses = new Set<string>();
  for (const rule of allow) {
    const host = rule.host.toLowerCase();
    let address: string;
    if (host === 'localhost') address = '127.0.0.1';
    else if (isIP(host) === 4) {
      address = host;
      if (!host.startsWith('127.')) addresses.add(`${host}/32`);
    } else if (isIP(host) === 6) {
      address = host;
      if (host !== '::1') addresses.add(`${host}/128`);
    } else {
      const index = Object.keys(names).length + 1;
      names[host] ??= `${namePrefix}.${Math.floor(index / 250)}.${(index % 250) + 1}`;
      address = names[host];
    }
    listeners.set(`${address}|${rule.port}`, { address, port: rule.port, target: { host, port: rule.port } });
  }
  return { listeners: [...listeners.values()], names, addresses: [...addresses] };
}

/** The generated `/etc/hosts`: localhost plus each allowed name on its private address. */
export function hostsFileFor(plan: SandboxEgressPlan): string {
  const lines = ['127.0.0.1 localhost', '::1 localhost ip6-localhost ip6-loopback'];
  for (const [name, address] of Object.entries(plan.names)) lines.push(`${address} ${name}`);
  return `${lines.join('\n')}\n`;
}

/** Starts the proxy for one sandboxed process and writes the files its sandbox binds. */
export async function startSandboxEgress(options: SandboxEgressOptions): Promise<SandboxEgress> {
  const plan = planSandboxEgress(options.allow);
  const proxy: EgressProxy = await startEgressProxy({
    label: options.label,
    allow: options.allow.map((rule) => ({ host: rule.host.toLowerCase(), port: rule.port })),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onDecision ? { onDecision: options.onDecision } : {}),
  });
  const folder = mkdtempSync(join(tmpdir(), 'quiver-sandbox-net-'));
  try {
    chmodSync(folder, 0o755);
    const mount: EgressMount = {
      folder,
      socketFolder: dirname(proxy.socketPath),
      configPath: join(folder, 'bridge.json'),
      hostsFile: join(folder, 'hosts'),
      resolvFile: join(folder, 'resolv.conf'),
      addresses: plan.addresses,
    };
    const config = { socket: proxy.socketPath, listeners: plan.listeners, names: plan.names };
    writeFileSync(mount.configPath, JSON.stringify(config), { mode: 0o644 });
    writeFileSync(mount.hostsFile, hostsFileFor(plan), { mode: 0o644 });
    writeFileSync(mount.resolvFile, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n', { mode: 0o644 });
    let closed = false;
    return {
      mount,
      decisions: proxy.decisions,
      async close() {
        if (closed) return;
        closed = true;
        await proxy.close();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await proxy.close();
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}
