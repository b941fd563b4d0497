import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AccountService } from '../accounts/service.js';
import { unauthorized } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account the request's API key belongs to; set for every /api/v1 route. */
    accountId: number;
  }
}

/**
 * Requires a valid X-API-Key (decisions §5). It runs before the body is read, and after the
 * rate limit's onRequest hook, so that rejected requests are counted too.
 */
export const authenticate = fp(async (app: FastifyInstance, options: { accounts: AccountService }) => {
  app.decorateRequest('accountId', 0);
  app.addHook('preParsing', async (request) => {
    const key = request.headers['x-api-key'];
    if (key === undefined || key === '') throw unauthorized('missing API key');
    const accountId = typeof key === 'string' ? await options.accounts.authenticate(key) : undefined;
    if (accountId === undefined) throw unauthorized('invalid API key');
    request.accountId = accountId;
  });
});
