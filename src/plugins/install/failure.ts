/**
 * @module plugins/install/failure
 * How an install fails: one `install_failed` error whose `details.step` names the step
 * (`clone`, `checkout`, `npm-install`, `launch`, `discovery`, `validation`, `sync`, …) and whose
 * message names it once. Within one install every message passes through a redactor built
 * from the credential values given to it, so a value never reaches an error or a log.
 */
import { QuiverError } from '../../core/errors.ts';
import { createRedactor, type Redactor } from '../../runtime/redact.ts';

/** The steps an install goes through, as reported in `install_failed` details. */
export type InstallStep = 'clone' | 'checkout' | 'dependencies' | 'build' | 'npm-install' | 'fetch-spec' | 'launch' | 'discovery' | 'validation' | 'sync';

/** Extra details of a failed step. */
export interface FailureExtra {
  errors?: string[];
  warnings?: string[];
  cause?: unknown;
}

/** Builds the error of a failed step of one install (redacting its credential values). */
export type FailStep = (step: InstallStep, reason: string, extra?: FailureExtra) => QuiverError;

/** How a step reads in a message when its id is not plain words. */
const STEP_LABELS: Partial<Record<InstallStep, string>> = { 'npm-install': 'npm install', 'fetch-spec': 'reading the OpenAPI document' };

/** The error every failed install throws; the message names the step once ("clone failed: …"). */
export function installFailed(pluginName: string, step: InstallStep, reason: string, extra: FailureExtra = {}): QuiverError {
  const details: Record<string, unknown> = { step, reason, plugin: pluginName };
  if (extra.errors !== undefined) details['errors'] = extra.errors;
  if (extra.warnings !== undefined) details['warnings'] = extra.warnings;
  return new QuiverError('install_failed', `cannot install plugin '${pluginName}': ${STEP_LABELS[step] ?? step} failed: ${reason}`, {
    kind: 'user',
    details,
    cause: extra.cause,
  });
}

/** The `FailStep` of one install: reasons and errors are redacted of `secretValues`; also returns the redactor. */
export function installFailure(pluginName: string, secretValues: readonly string[]): { fail: FailStep; redact: Redactor } {
  const redact = createRedactor(secretValues);
  const fail: FailStep = (step, reason, extra = {}) =>
    installFailed(pluginName, step, redact(reason), {
      ...extra,
      ...(extra.errors === undefined ? {} : { errors: extra.errors.map(redact) }),
    });
  return { fail, redact };
}
