/**
 * The slice of `oidc-provider` (a JavaScript package without types) the tests use: the provider
 * class, its Koa-style `callback()` for a Node HTTP server, and its error classes.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    issuer: string;
    proxy: boolean;
  }
  export const errors: { InvalidTarget: new (description?: string) => Error };
}
