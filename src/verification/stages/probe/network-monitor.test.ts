import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { monitorNetwork, parseSnmp, parseSnmp6 } from './network-monitor.ts';

describe('probe network counters', () => {
  it('parses /proc/net/snmp header and value line pairs', () => {
    const text = 'Ip: Forwarding DefaultTTL OutNoRoutes\nIp: 2 64 3\nTcp: RtoAlgorithm ActiveOpens\nTcp: 1 5\nUdp: InDatagrams OutDatagrams\nUdp: 0 2\n';
    const counters = parseSnmp(text);
    assert.equal(counters.get('Ip.OutNoRoutes'), 3);
    assert.equal(counters.get('Tcp.ActiveOpens'), 5);
    assert.equal(counters.get('Udp.OutDatagrams'), 2);
  });

  it('parses /proc/net/snmp6 name value lines', () => {
    const counters = parseSnmp6('Ip6OutNoRoutes                  \t4\nUdp6OutDatagrams 1\n');
    assert.equal(counters.get('Ip6OutNoRoutes'), 4);
    assert.equal(counters.get('Udp6OutDatagrams'), 1);
  });

  it('reads the real counters of this host and finds no other namespace among our own pids', () => {
    const host = parseSnmp(readFileSync('/proc/self/net/snmp', 'utf8'));
    assert.ok(host.has('Tcp.ActiveOpens'));
    assert.equal(monitorNetwork([process.pid]), undefined, 'a process in Quiver\'s own namespace is not a sandbox');
  });
});
