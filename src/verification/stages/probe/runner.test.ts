import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../core/logger.ts';
import { detectHost } from '../../../runtime/host-detection.ts';
import type { StageContext, VerificationSubject } from '../../types.ts';
import { createProbeRunner } from './runner.ts';

function contextFor(subject: VerificationSubject): StageContext {
  return { subject, settings: { registryUrl: '', licenseAllowList: [], stageTimeoutMs: 1_000 }, logger: silentLogger, signal: new AbortController().signal, progress: () => undefined };
}

const remote = (name: string): VerificationSubject => ({
  pluginId: name,
  pluginName: name,
  version: '1',
  sourceType: 'url',
  source: {},
  codeDir: null,
  manifest: null,
  intelligence: null,
  tools: [],
  otherToolNames: [],
  launch: { transport: 'http', pluginId: name, pluginName: name, version: '1', trustLevel: 'UNVERIFIED', url: 'https://example.com/mcp' },
});

describe('probe runner', () => {
  it('runs one probe per subject, shared by every stage that asks', async () => {
    const runner = createProbeRunner({ host: detectHost({ bubblewrapPath: null, useCgroups: false, codeOverlay: false }) });
    const subject = { ...remote('one'), launch: null };
    const first = runner.probe(contextFor(subject));
    assert.equal(runner.probe(contextFor(subject)), first);
    assert.notEqual(runner.probe(contextFor({ ...remote('two'), launch: null })), first);
    const result = await first;
    assert.equal(result.started, false);
    assert.match(result.startError ?? '', /no launch/);
  });

  it('never runs a local plugin without the sandbox', async () => {
    const runner = createProbeRunner({ host: detectHost({ bubblewrapPath: null, useCgroups: false, codeOverlay: false }) });
    const subject: VerificationSubject = { ...remote('local'), launch: { transport: 'stdio', pluginId: 'local', pluginName: 'local', version: '1', trustLevel: 'OFFICIAL', command: '/bin/true' } };
    const result = await runner.probe(contextFor(subject));
    assert.equal(result.started, false);
    assert.match(result.startError ?? '', /needs the bubblewrap sandbox/);
  });
});
