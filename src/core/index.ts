/**
 * @module core
 * Pure domain: schemas, errors, hashing, tokens and names. No I/O.
 */
export * from './errors.ts';
export * from './validation.ts';
export * from './names.ts';
export * from './hash.ts';
export * from './tokens.ts';
export * from './tool.ts';
export * from './logger.ts';
export * from './manifest.ts';
export * from './pid.ts';
export * from './plugin-metadata.ts';
export * from './version.ts';
