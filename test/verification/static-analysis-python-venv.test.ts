/**
 * Static analysis of a `pypi:` plugin's own code (issue #26): its code lives only inside its venv
 * (`.quiver-venv`), which the folder walk skips like node_modules, so before this change its
 * Python was never analysed (0 own files, score 100). A real install: two hand-built wheels
 * (test/helpers/python-wheel.ts) in a find-links folder, installed by name into the plugin's
 * venv by the real pip inside the real sandbox (installPythonPlugin, as `plugin add
 * pypi:NAME==VERSION` does), with no index and no network. The plugin's code runs
 * subprocess(shell=True) on its input and reads ~/.ssh: flagged as its own code and capped at
 * UNVERIFIED; its dependency's network use is a dependency issue; pip and setuptools, which every
 * venv holds, are not counted as dependencies. No database is involved.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installPythonPlugin } from '../../src/plugins/python/install.ts';
import { runOneShot } from '../../src/runtime/one-shot.ts';
import { detectHost } from '../../src/runtime/host-detection.ts';
import { staticAnalysisStage } from '../../src/verification/stages/static-analysis/index.ts';
import type { StageResult, VerificationSubject } from '../../src/verification/types.ts';
import { buildWheel } from '../helpers/python-wheel.ts';
import { skipUnless } from '../helpers/requirements.ts';
import { contextFor } from './stage-corpus.ts';

const host = detectHost();
const skip = skipUnless(!host.bubblewrap && `bubblewrap is not usable here: ${host.bubblewrapProblem}`);

const SERVER = `import os
import subprocess

from py_fetcher_helper import fetch


def run(command):
    return subprocess.run(command, shell=True, capture_output=True)


def key():
    with open(os.path.expanduser("~/.ssh/id_rsa")) as handle:
        return handle.read()


def main():
    print(fetch("https://example.invalid/"))
`;

const HELPER = `import urllib.request


def fetch(url):
    return urllib.request.urlopen(url).read()
`;

describe('static analysis of a pypi: plugin reads its venv (issue #26)', { skip }, () => {
  let root: string;
  let tree: string;
  let result: StageResult;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'quiver-pyvenv-sa-'));
    chmodSync(root, 0o755);
    const wheels = join(root, 'wheels');
    buildWheel(wheels, { name: 'py-fetcher', version: '1.0.0', files: { 'py_fetcher/__init__.py': '', 'py_fetcher/server.py': SERVER }, requires: ['py-fetcher-helper>=1', 'rich; extra == "pretty"'], consoleScripts: { 'py-fetcher': 'py_fetcher.server:main' } });
    buildWheel(wheels, { name: 'py-fetcher-helper', version: '1.0.0', files: { 'py_fetcher_helper/__init__.py': HELPER } });
    tree = join(root, 'pypi', 'tree');
    mkdirSync(tree, { recursive: true, mode: 0o755 });
    const installed = await installPythonPlugin(tree, '.', { kind: 'index', requirement: 'py-fetcher==1.0.0', name: 'py-fetcher' }, {
      label: 'py-fetcher',
      // No index at all: the wheels folder is the only source, so nothing is fetched.
      commandEnv: { PATH: process.env.PATH, HOME: root, PIP_NO_INDEX: '1', PIP_FIND_LINKS: wheels, PIP_RETRIES: '0' },
      timeoutMs: 300_000,
      runSandboxed: (request) => runOneShot(request, { host, dangerouslyAllowUnsandboxed: false }),
    });
    assert.equal(installed.distribution?.name, 'py-fetcher');
    const subject: VerificationSubject = {
      pluginId: 'id-py-fetcher', pluginName: 'py-fetcher', version: '1.0.0', sourceType: 'pypi',
      source: { requirement: 'py-fetcher==1.0.0', packageName: 'py-fetcher', version: '1.0.0' },
      codeDir: tree, manifest: null, intelligence: null, tools: [], otherToolNames: [], launch: null,
    };
    result = await staticAnalysisStage(contextFor(subject));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("flags the plugin's own shell=True subprocess and ~/.ssh read, located in site-packages, and caps it at UNVERIFIED", { timeout: 600_000 }, () => {
    const byCode = new Map(result.issues.map((issue) => [issue.code, issue]));
    const process = byCode.get('dynamic-process');
    const secret = byCode.get('secret-path');
    assert.ok(process !== undefined && secret !== undefined, JSON.stringify(result.issues));
    assert.match(process.location!, /^\.quiver-venv\/lib\/python3\.\d+\/site-packages\/py_fetcher\/server\.py:8$/);
    assert.match(secret.location!, /py_fetcher\/server\.py:12$/);
    assert.ok(!process.message.startsWith('dependency') && !secret.message.startsWith('dependency'), 'own code, not a dependency');
    assert.equal(secret.severity, 'critical');
    assert.equal(result.cap?.level, 'UNVERIFIED');
    assert.match(result.cap!.reason, /py_fetcher\/server\.py:12/);
    assert.ok(result.score <= 45, `score ${result.score}`);
  });

  it('reads the dependency tree from Requires-Dist: the helper is a dependency, extras and the venv tools are not', () => {
    assert.equal(result.metrics?.['ownFiles'], 2, JSON.stringify(result.metrics));
    assert.equal(result.metrics?.['dependencies'], 1, JSON.stringify(result.metrics));
    const network = result.issues.find((issue) => issue.code === 'network' && issue.message.startsWith('dependency py-fetcher-helper'));
    assert.ok(network !== undefined, JSON.stringify(result.issues));
    assert.match(network.location!, /site-packages\/py_fetcher_helper\/__init__\.py:1$/);
    // rich is only an extra's requirement: neither installed nor missing.
    assert.ok(!result.issues.some((issue) => issue.code === 'missing-dependencies'), JSON.stringify(result.issues));
    assert.ok(!result.issues.some((issue) => /dependency (pip|setuptools)/.test(issue.message)), JSON.stringify(result.issues));
  });
});
