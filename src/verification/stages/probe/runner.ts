/**
 * @module verification/stages/probe/runner
 * One probe run per verification, shared by the sandbox-execution and compatibility stages
 * (issue #10): the runner memoises the run by subject object — the pipeline hands both stages
 * the same `VerificationSubject` — so the plugin is started once however many stages read
 * it. The host is probed (bubblewrap, cgroups, overlay) once per runner, on first use, when
 * the folders of probes whose process died are swept too.
 */
import { createHostProbe, type HostCapabilities } from '../../../runtime/host-detection.ts';
import type { StageContext } from '../../types.ts';
import { runProbe, type ProbeOptions } from './run-probe.ts';
import { createRemotePluginFetch, parseOAuthNetworkPolicy } from '../../../plugins/oauth/network-guard.ts';
import { sweepStaleProbeFolders } from './sandboxed-start.ts';
import type { ProbeResult } from './types.ts';

/** Options of a runner: the probe's limits, and the host when the caller already probed it. */
export type ProbeRunnerOptions = Omit<ProbeOptions, 'host' | 'signal' | 'progress'> & { host?: HostCapabilities };

/** Gives each verification subject its one probe result. */
export interface ProbeRunner {
  /** The probe of `context.subject`, run on first request (its progress goes to that stage). */
  probe(context: StageContext): Promise<ProbeResult>;
}

/** Creates a runner; nothing is started until a stage asks. */
export function createProbeRunner(options: ProbeRunnerOptions = {}): ProbeRunner {
  // Probed without blocking the event loop: verification runs in the background of a serving process.
  const given = options.host;
  const hostProbe = given === undefined ? createHostProbe({}, () => sweepStaleProbeFolders()) : { ready: () => Promise.resolve(given) };
  const runs = new WeakMap<object, Promise<ProbeResult>>();
  // One guarded fetch (one connection pool) per admitted-address setting.
  const guards = new Map<string, typeof fetch>();
  const guardFor = (allowAddresses: string | undefined): typeof fetch => {
    const key = allowAddresses ?? '';
    let guard = guards.get(key);
    if (!guard) guards.set(key, (guard = createRemotePluginFetch(parseOAuthNetworkPolicy(allowAddresses))));
    return guard;
  };
  return {
    probe(context) {
      let run = runs.get(context.subject);
      if (!run) {
        const network = context.settings.remoteNetwork;
        const remoteFetch = network === undefined ? undefined : guardFor(network.allowAddresses);
        run = hostProbe.ready().then((found) => runProbe(context.subject.launch, { ...options, host: found, signal: context.signal, progress: context.progress, ...(remoteFetch ? { remoteFetch } : {}) }));
        runs.set(context.subject, run);
      }
      return run;
    },
  };
}
