/**
 * @module verification/isolated/child
 * The verification child process: receives one subject over IPC, runs every registered stage
 * (stages/index.ts) and sends progress, log lines and the result back. Parsing a plugin's whole
 * dependency tree and watching its sandbox run take seconds of CPU and hundreds of MB; here
 * they never stall the hub's event loop, and a stage that exhausts memory kills only this process.
 */
import type { Logger } from '../../core/logger.ts';
import { runPipeline } from '../pipeline.ts';
import { stageRegistry } from '../stages/index.ts';
import type { VerificationSettings, VerificationSubject } from '../types.ts';
import type { ChildMessage, ParentMessage } from './protocol.ts';

const send = (message: ChildMessage) =>
  new Promise<void>((resolve) => {
    if (process.send === undefined) resolve();
    else process.send(message, undefined, {}, () => resolve());
  });

/** Log lines go to the parent's logger (the child has no stderr of its own worth reading). */
function ipcLogger(bindings: object): Logger {
  const line = (level: 'debug' | 'info' | 'warn' | 'error') => (context: object, message?: string) => {
    if (level !== 'debug') void send({ type: 'log', level, context: { ...bindings, ...context }, ...(message === undefined ? {} : { message }) });
  };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error'), child: (more) => ipcLogger({ ...bindings, ...more }) };
}

const controller = new AbortController();

async function run(subject: VerificationSubject, settings: VerificationSettings): Promise<void> {
  try {
    const result = await runPipeline({
      subject,
      settings,
      stages: stageRegistry,
      logger: ipcLogger({}),
      signal: controller.signal,
      onProgress: (progress) => void send({ type: 'progress', progress }),
    });
    await send({ type: 'result', result });
  } catch (error) {
    await send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  } finally {
    // Sent: leave, whatever a stage may have left running (the parent kills a child that lingers).
    process.exit(0);
  }
}

process.on('message', (message: ParentMessage) => {
  if (message.type === 'run') void run(message.subject, message.settings);
  else if (message.type === 'abort') controller.abort(new Error('verification aborted'));
});
// The parent went away: nothing left to report to.
process.on('disconnect', () => controller.abort(new Error('parent gone')));
