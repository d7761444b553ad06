/**
 * @module plugins/install/credentials
 * Step 4 of an install, and how a plugin's credentials reach it at every start: the
 * credentials it declares (quiver.json, plus header and marketplace ones) split the stored
 * values into environment variables and HTTP headers, and required ones that are not set are named.
 */
import { z } from 'zod';
import { credentialSpecSchema, type CredentialSpec } from '../../core/plugin-metadata.ts';
import type { FailStep } from './failure.ts';

/** How credential values are delivered, and which required ones are missing. */
export interface CredentialDelivery {
  env: Record<string, string>;
  headers: Record<string, string>;
  missing: string[];
}

/** Splits credential values into env variables and headers following the declarations. */
export function credentialDelivery(credentials: readonly CredentialSpec[], values: Record<string, string>): CredentialDelivery {
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const declared = new Map(credentials.map((credential) => [credential.name, credential]));
  for (const [name, value] of Object.entries(values)) {
    const credential = declared.get(name);
    if (credential?.as === 'header' && credential.header !== undefined) headers[credential.header] = value;
    else env[name] = value;
  }
  const missing = credentials.filter((credential) => credential.required && values[credential.name] === undefined).map((c) => c.name);
  return { env, headers, missing };
}

/** The credentials quiver.json declares, then the extra ones (headers, marketplace); the first of a name wins. */
export function declaredCredentials(fileObject: Record<string, unknown> | undefined, extra: readonly CredentialSpec[]): CredentialSpec[] {
  const parsed = z.array(credentialSpecSchema).safeParse(fileObject?.['credentials'] ?? []);
  const declared: CredentialSpec[] = [];
  for (const credential of [...(parsed.success ? parsed.data : []), ...extra]) {
    if (!declared.some((known) => known.name === credential.name)) declared.push(credential);
  }
  return declared;
}

/** The delivery of an install's credential values; fails at `launch` naming the required ones not given. */
export function installDelivery(name: string, declared: readonly CredentialSpec[], values: Record<string, string>, fail: FailStep): CredentialDelivery {
  const delivery = credentialDelivery(declared, values);
  if (delivery.missing.length > 0) {
    throw fail(
      'launch',
      `missing required credential${delivery.missing.length > 1 ? 's' : ''} ${delivery.missing.map((m) => `'${m}'`).join(', ')}: ` +
        `pass ${delivery.missing.map((m) => `--secret ${m}=…`).join(' ')} (or set it with 'quiver plugin secret set ${name} KEY')`,
    );
  }
  return delivery;
}
