/**
 * @module plugins/service
 * The plugins service's import path: the service is assembled in `service/index.ts` from parts
 * with one job each (install, re-install, lifecycle, enablement, secrets and settings,
 * intelligence documents, marketplace). This file only re-exports it.
 */
export * from './service/index.ts';
