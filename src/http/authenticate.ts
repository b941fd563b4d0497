import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AccountService } from '../accounts/service.js';
import { unauthorized } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The account the request's API key belongs to; set for every /api/v1 route. */
    accountId: number;
    /** The account's data version when the request was authenticated (see accounts.data_version). */
    dataVersion: number;
    /** No conversion of the account had a larger id when the request was authenticated (see conversion_versions.newest_id). */
    newestConversionId: number;
  }
}

/**
 * Requires a valid X-API-Key: without one a 401 "missing API key", with an unknown or revoked
 * one a 401 "invalid API key" (docs/api.md, "Authentication"). It runs before the body is read,
 * and after the rate limit's onRequest hook, so that rejected requests are counted too.
 */
export const authenticate = fp(async (app: FastifyInstance, options: { accounts: AccountService }) => {
  app.decorateRequest('accountId', 0);
  app.decorateRequest('dataVersion', 0);
  app.decorateRequest('newestConversionId', 0);
  app.addHook('preParsing', async (request) => {
    const key = request.headers['x-api-key'];
    if (key === undefined || key === '') throw unauthorized('missing API key');
    const account = typeof key === 'string' ? await options.accounts.authenticate(key) : undefined;
    if (account === undefined) throw unauthorized('invalid API key');
    request.accountId = account.accountId;
    request.dataVersion = account.dataVersion;
    request.newestConversionId = account.newestConversionId;
  });
});
