/**
 * @module verification/stages/probe/network-monitor
 * Network attempts of a plugin in the strictest sandbox, which has its own empty network
 * namespace (bubblewrap `--unshare-net`: only a loopback). Nothing can leave it, but the
 * kernel still counts every try in that namespace's SNMP counters, which the plugin cannot
 * reset: a TCP connect sends a SYN (`Tcp ActiveOpens`, loopback ports included), a UDP send
 * (a DNS lookup falls back to 127.0.0.1:53 without a resolver) counts `OutDatagrams`, and
 * any other host fails route lookup (`Ip OutNoRoutes`). A fresh namespace starts at zero.
 *
 * The counters are read through a file descriptor opened while the plugin runs: it keeps the
 * namespace's counters readable after the plugin exits or crashes. Host names are not seen
 * here; an egress proxy (runtime/egress-proxy.ts) reports those when the launch uses one.
 */
import { closeSync, openSync, readlinkSync, readSync } from 'node:fs';

/** Attempt counts of one namespace. */
export interface NetworkCounts {
  tcpConnects: number;
  udpDatagrams: number;
  noRoute: number;
}

/** An open view on a plugin's namespace counters. */
export interface NetworkMonitor {
  /** Reads the counters now (works after the plugin exited) and releases the descriptors. */
  finish(): NetworkCounts;
}

function readAll(fd: number): string {
  const buffer = Buffer.alloc(64 * 1024);
  const length = readSync(fd, buffer, 0, buffer.length, 0);
  return buffer.subarray(0, length).toString('utf8');
}

/** Parses `/proc/net/snmp`'s header/value line pairs into `Proto.Field → value`. */
export function parseSnmp(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const lines = text.split('\n');
  for (let index = 0; index + 1 < lines.length; index += 2) {
    const [proto, ...names] = lines[index]!.trim().split(/\s+/);
    const values = lines[index + 1]!.trim().split(/\s+/).slice(1);
    names.forEach((name, position) => out.set(`${proto!.replace(/:$/, '')}.${name}`, Number(values[position] ?? 0)));
  }
  return out;
}

/** Parses `/proc/net/snmp6`'s `Name value` lines. */
export function parseSnmp6(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [name, value] = line.trim().split(/\s+/);
    if (name && value !== undefined) out.set(name, Number(value));
  }
  return out;
}

function netNamespace(pid: number | 'self'): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}

/**
 * Opens the counters of the first of `pids` that lives in a network namespace other than
 * Quiver's; undefined when none does (no sandbox, or the plugin already exited).
 */
export function monitorNetwork(pids: readonly number[]): NetworkMonitor | undefined {
  const own = netNamespace('self');
  const pid = pids.find((candidate) => {
    const namespace = netNamespace(candidate);
    return namespace !== undefined && namespace !== own;
  });
  if (pid === undefined) return undefined;
  let snmp: number;
  try {
    snmp = openSync(`/proc/${pid}/net/snmp`, 'r');
  } catch {
    return undefined;
  }
  let snmp6: number | undefined;
  try {
    snmp6 = openSync(`/proc/${pid}/net/snmp6`, 'r');
  } catch {
    snmp6 = undefined; // IPv6 disabled on this host
  }
  let result: NetworkCounts | undefined;
  return {
    finish() {
      if (result) return result;
      const v4 = parseSnmp(readAll(snmp));
      const v6 = snmp6 === undefined ? new Map<string, number>() : parseSnmp6(readAll(snmp6));
      closeSync(snmp);
      if (snmp6 !== undefined) closeSync(snmp6);
      result = {
        tcpConnects: v4.get('Tcp.ActiveOpens') ?? 0,
        udpDatagrams: (v4.get('Udp.OutDatagrams') ?? 0) + (v6.get('Udp6OutDatagrams') ?? 0),
        noRoute: (v4.get('Ip.OutNoRoutes') ?? 0) + (v6.get('Ip6OutNoRoutes') ?? 0),
      };
      return result;
    },
  };
}
