/**
 * @module verification/isolated
 * Runs the pipeline in a child process of the same build as the hub (compiled `child.js`, or
 * `child.ts` through tsx from a source checkout), so a verification running in the background of
 * `quiver serve` never blocks the gateway's event loop and cannot take the hub's memory with
 * it. The child runs the stages of `stages/index.ts`; `options.stages` is not sent (functions do
 * not cross processes). Abort sends `abort`, then kills the child after a grace period; a child
 * that dies without a result rejects with its exit code.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../../core/logger.ts';
import type { PipelineResult, RunPipelineOptions } from '../pipeline.ts';
import { STAGE_ORDER } from '../types.ts';
import type { ChildMessage, ParentMessage } from './protocol.ts';

const build: 'dist' | 'src' = import.meta.url.endsWith('.js') ? 'dist' : 'src';
const ABORT_GRACE_MS = 5000;

/** Runs the registered stages on `options.subject` in a child process. */
export function runPipelineIsolated(options: RunPipelineOptions): Promise<PipelineResult> {
  const logger = options.logger ?? silentLogger;
  const file = fileURLToPath(new URL(`./child.${build === 'dist' ? 'js' : 'ts'}`, import.meta.url));
  const child = fork(file, [], { execArgv: build === 'src' ? ['--import', 'tsx'] : [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
  // Every stage has its own limit inside the child; this bounds the child itself.
  const hardLimit = setTimeout(() => child.kill('SIGKILL'), options.settings.stageTimeoutMs * (STAGE_ORDER.length + 1) + 30_000);
  return new Promise<PipelineResult>((resolve, reject) => {
    let result: PipelineResult | undefined;
    let failure: string | undefined;
    const onAbort = () => {
      child.send({ type: 'abort' } satisfies ParentMessage, () => undefined);
      setTimeout(() => child.kill('SIGKILL'), ABORT_GRACE_MS).unref();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'progress') options.onProgress?.(message.progress);
      else if (message.type === 'log') logger[message.level](message.context, message.message);
      else if (message.type === 'result') {
        result = message.result;
        resolve(result);
        // The child exits by itself once the result is sent; one that lingers is ended.
        setTimeout(() => child.kill('SIGKILL'), ABORT_GRACE_MS).unref();
      }
      else failure = message.message;
    });
    child.once('error', (error) => (failure ??= error.message));
    child.once('exit', (code, signal) => {
      clearTimeout(hardLimit);
      options.signal?.removeEventListener('abort', onAbort);
      if (result !== undefined) resolve(result);
      else reject(new Error(failure ?? `the verification process exited (${signal ?? `code ${code}`}) without a result${stderr ? `: ${stderr.trim().slice(-500)}` : ''}`));
    });
    child.send({ type: 'run', subject: options.subject, settings: options.settings } satisfies ParentMessage);
    if (options.signal?.aborted) onAbort();
  });
}
