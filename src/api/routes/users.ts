/**
 * @module api/routes/users
 * Accounts of the built-in authorization server (admin only, issue #27): list, invite (the
 * one-time sign-up link is returned once), change organisation / roles / scopes, disable or
 * enable, send a new sign-up link, remove. Present only while the built-in server runs.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import { inviteSchema, userChangeSchema, type Invitation, type UserDirectory } from '../../access/authorization-server/users.ts';
import { principalWith, readJson, type ApiEnv } from '../http.ts';
import type { ApiRouteModule } from '../app.ts';

const disabledSchema = z.object({ disabled: z.boolean() }).strict();

/** Routes under /api/v1/users; `signupUrl` turns a sign-up token into the link a user opens. */
export function userRoutes(services: { users: UserDirectory; signupUrl(token: string): string }): ApiRouteModule {
  const withLink = (invitation: Invitation) => ({ user: invitation.user, signupUrl: services.signupUrl(invitation.token), expiresAt: invitation.expiresAt });
  return {
    register(app: Hono<ApiEnv>) {
      app.get('/api/v1/users', async (c) => {
        principalWith(c, 'admin');
        return c.json({ users: await services.users.list() });
      });
      app.post('/api/v1/users', async (c) => {
        principalWith(c, 'admin');
        return c.json(withLink(await services.users.invite(await readJson(c, inviteSchema, 'invitation'))), 201);
      });
      app.get('/api/v1/users/:id', async (c) => {
        principalWith(c, 'admin');
        return c.json({ user: await services.users.get(c.req.param('id')) });
      });
      app.patch('/api/v1/users/:id', async (c) => {
        principalWith(c, 'admin');
        return c.json({ user: await services.users.update(c.req.param('id'), await readJson(c, userChangeSchema, 'user change')) });
      });
      app.put('/api/v1/users/:id/disabled', async (c) => {
        principalWith(c, 'admin');
        const { disabled } = await readJson(c, disabledSchema, 'disabled flag');
        return c.json({ user: await services.users.setDisabled(c.req.param('id'), disabled) });
      });
      app.post('/api/v1/users/:id/invitation', async (c) => {
        principalWith(c, 'admin');
        return c.json(withLink(await services.users.reinvite(c.req.param('id'))), 201);
      });
      app.delete('/api/v1/users/:id', async (c) => {
        principalWith(c, 'admin');
        await services.users.remove(c.req.param('id'));
        return c.body(null, 204);
      });
    },
    openapi: {
      '/api/v1/users': {
        get: { summary: 'List the accounts of the built-in authorization server', tags: ['users'] },
        post: { summary: 'Invite a user; the one-time sign-up link is returned once', tags: ['users'], requestBody: inviteSchema, responses: { '201': 'Invited' } },
      },
      '/api/v1/users/:id': {
        get: { summary: 'One account (by id or email)', tags: ['users'] },
        patch: { summary: "Change an account's organisation, roles or scopes", tags: ['users'], requestBody: userChangeSchema },
        delete: { summary: 'Remove an account (its tokens stop working)', tags: ['users'], responses: { '204': 'Removed' } },
      },
      '/api/v1/users/:id/disabled': { put: { summary: 'Disable or enable an account', tags: ['users'], requestBody: disabledSchema } },
      '/api/v1/users/:id/invitation': { post: { summary: 'A new one-time sign-up link (a forgotten password)', tags: ['users'], responses: { '201': 'Link issued' } } },
    },
  };
}
