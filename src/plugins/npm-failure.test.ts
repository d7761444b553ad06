import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { npmFailureReason } from './npm-failure.ts';

// npm 10's stderr, as printed for these failures.
const notFound = `npm error code E404
npm error 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fdoes-not-exist-xyz - Not found
npm error 404
npm error 404  The requested resource '@modelcontextprotocol/does-not-exist-xyz@*' could not be found or you do not have permission to access it.
npm error 404
npm error 404 Note that you can also install from a
npm error 404 tarball, folder, http url, or git url.
npm error A complete log of this run can be found in: /root/.npm/_logs/2026-11-29T15_15_17_470Z-debug-0.log
`;
const noVersion = `npm error code ETARGET
npm error notarget No matching version found for @modelcontextprotocol/server-memory@99.0.0.
npm error notarget In most cases you or one of your dependencies are requesting
npm error notarget a package version that doesn't exist.
npm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log
`;

describe('the reason of a failed npm install', () => {
  it('a package the registry does not have is one line naming it', () => {
    assert.equal(
      npmFailureReason(notFound),
      "the registry has no package @modelcontextprotocol/does-not-exist-xyz (npm E404, GET https://registry.npmjs.org/@modelcontextprotocol%2fdoes-not-exist-xyz)",
    );
  });

  it('a version the registry does not have is one line naming it', () => {
    assert.equal(npmFailureReason(noVersion), 'the registry has no version matching @modelcontextprotocol/server-memory@99.0.0 (npm ETARGET)');
  });

  it("any other failure keeps npm's words, without warnings or the log-file line, credentials masked", () => {
    const stderr = 'npm warn deprecated x@1\nnpm error code ECONNREFUSED\nnpm error request to https://ci:s3cret@registry.example/x failed\nnpm error A complete log of this run can be found in: /root/.npm/_logs/y.log\n';
    assert.equal(npmFailureReason(stderr), 'npm error code ECONNREFUSED\nnpm error request to https://ci:***@registry.example/x failed');
  });

  it('keeps the last lines when npm says a lot', () => {
    const stderr = Array.from({ length: 30 }, (_, i) => `npm error line ${i}`).join('\n');
    const reason = npmFailureReason(stderr, 12).split('\n');
    assert.equal(reason.length, 12);
    assert.equal(reason.at(-1), 'npm error line 29');
  });
});
