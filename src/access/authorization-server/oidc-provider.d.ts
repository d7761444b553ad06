/**
 * The slice of `oidc-provider` (a JavaScript package without types) Quiver uses: the provider
 * class, its Koa-style `callback()` for a Node HTTP server, the interaction helpers of the
 * login and consent pages, the Grant model, and its error classes. The tests' provider
 * (test/helpers/oidc-provider.ts) uses the same declarations.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown> & { client_id?: string; redirect_uri?: string; scope?: string };
    session?: { accountId?: string; uid?: string } | undefined;
    grantId?: string | undefined;
    lastSubmission?: Record<string, unknown> | undefined;
  }

  export interface GrantInstance {
    accountId?: string;
    clientId?: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(ttl?: number): Promise<string>;
  }

  export interface ClientInstance {
    clientId: string;
    clientName?: string;
    redirectUris: string[];
    grantTypeAllowed(grant: string): boolean;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    on(event: string, listener: (...args: unknown[]) => void): this;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<InteractionDetails>;
    interactionResult(request: IncomingMessage, response: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<string>;
    Grant: { new (properties: { accountId: string; clientId: string }): GrantInstance; find(id: string): Promise<GrantInstance | undefined> };
    Client: { find(id: string): Promise<ClientInstance | undefined> };
    issuer: string;
    proxy: boolean;
  }
  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    AccessDenied: new (description?: string) => Error;
  };
}
