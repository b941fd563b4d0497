import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { documentationOnly, ErrorMessage, ListEnvelope, sendListPage, listQueryDocs, NotModified } from '../http/list-schema.js';
import type { Metrics } from '../http/operations.js';
import { registerRateLimit, type RateLimitOptions } from '../http/rate-limit.js';
import { RECEIVERS } from './notification.js';
import { CartEventEntry, CartReceiverEntry, cartEventCatalogue } from './schema.js';
import { type CartService, isReceiverName } from './service.js';

// A notification is a few kilobytes; a ClickBank one with many line items some tens.
const HOOK_BODY_LIMIT = 1024 * 1024;

/** What a receiver answers, by status; each cart's own words are in docs/carts.md. */
const HOOK_ANSWERS = {
  200: Type.String({
    description:
      'Kept, or recognised as a repeat: what the cart expects, `OK` (the generic receiver: `{"ok":true}`, with `"duplicate":true` for a repeat). Digistore24 and SvenCart are answered 200 `ERROR: invalid sha signature` when the signature does not match',
  }),
  400: Type.String({ description: 'Not a notification this receiver can read, or (ClickBank) one that does not decrypt' }),
  401: Type.String({ description: 'The generic receiver: a missing, wrong or stale X-Signature' }),
  404: Type.String({ description: 'No receiver of this cart has this token' }),
  405: Type.String({ description: 'This cart does not send with this method' }),
  413: Type.String({ description: 'A body over 1 MiB: no notification is that large' }),
  429: Type.Null({ description: "Over this receiver's limit (HOOK_RATE_LIMIT_PER_MINUTE): an empty body; the cart retries later" }),
  500: Type.String({ description: 'The service failed; the cart sends the notification again' }),
  503: Type.String({
    description:
      'The embedded database was busy with another write (a conversions import) for 5 s: nothing was kept, and the cart sends it again (Retry-After: 5)',
  }),
};

/**
 * The receivers, `/hooks/{cart}/{token}`: outside the API, without an API key (the token in the
 * URL, and the cart's signature where it signs, are the checks), counted per token rather than
 * per IP, since carts send from few addresses.
 */
export async function cartHookRoutes(
  app: FastifyInstance,
  { carts, metrics, rateLimit }: { carts: CartService; metrics: Metrics; rateLimit: RateLimitOptions },
) {
  // Counted by the token's hash: tokens are secrets, and counters may live in a shared Redis.
  const keyOf = (request: FastifyRequest) =>
    createHash('sha256')
      .update(String((request.params as { token?: string }).token))
      .digest('base64url');
  await registerRateLimit(app, { ...rateLimit, keyOf });
  // Signatures are over the bytes as sent: every body is kept whole, whatever its type says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: HOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  // A route per method, each an operation of its own in the OpenAPI document.
  for (const method of ['GET', 'POST', 'PUT'] as const)
    app.route({
      method,
      url: '/hooks/:cart/:token',
      schema: {
        summary: `Receive a cart's notification sent by ${method}`,
        operationId: `receiveCartNotificationBy${method[0]}${method.slice(1).toLowerCase()}`,
        description: `Where a cart sends its server-to-server notifications: one of ${RECEIVERS.join(', ')}, and the token printed by \`carts connect\`. Answers what each cart expects. See docs/carts.md.`,
        tags: ['carts'],
        // No API key: the token in the path, and the cart's signature where it signs.
        security: [],
        params: Type.Object({ cart: Type.String({ enum: [...RECEIVERS] }), token: Type.String() }),
        // Documentation only: the answers are text the receivers write, which Fastify sends as it is.
        produces: ['text/plain', 'application/json'],
        response: HOOK_ANSWERS,
      },
      validatorCompiler: documentationOnly,
      handler: async (request, reply) => {
        const { cart, token } = request.params as { cart: string; token: string };
        const counted = (outcome: string) => metrics.cartNotifications.inc({ cart: isReceiverName(cart) ? cart : 'unknown', outcome });
        const received = carts.receive(cart, token, {
          method: request.method,
          query: request.query as Record<string, string | string[] | undefined>,
          rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          headers: request.headers,
          receivedAt: Math.floor(Date.now() / 1000),
        });
        // Not stored (the database busy, or failing): answered by the error handler, and counted.
        const {
          reply: answer,
          outcome,
          reason,
        } = await received.catch((error: unknown) => {
          counted('failed');
          throw error;
        });
        counted(outcome);
        // Never the token or the secret: the receiver and why, so that a misconfigured cart can be found.
        if (outcome === 'refused' || outcome === 'invalid') request.log.warn({ cart, outcome, reason }, 'cart notification not accepted');
        return reply
          .code(answer.status as keyof typeof HOOK_ANSWERS)
          .type(answer.contentType)
          .send(answer.body);
      },
    });
}

/**
 * GET /api/v1/cart-events: the notifications carts sent, with the list's envelope, paging and filters.
 * GET /api/v1/cart-receivers: the carts connected, each with its receiver's path, never its token or secret.
 */
export const cartEventRoutes: FastifyPluginAsyncTypebox<{ carts: CartService }> = async (app, { carts }) => {
  app.get(
    '/cart-events',
    {
      schema: {
        summary: 'List cart events',
        operationId: 'listCartEvents',
        description:
          'Every notification a connected cart sent and the service accepted, purchase or not, one page of 100 in ascending id order, filtered by column. See the API reference.',
        tags: ['carts'],
        querystring: listQueryDocs(cartEventCatalogue),
        response: {
          200: ListEnvelope(CartEventEntry, 'A page of the matching cart events, with their exact count'),
          304: NotModified,
          400: ErrorMessage,
          401: ErrorMessage,
        },
      },
      validatorCompiler: documentationOnly,
    },
    async (request, reply) => {
      return sendListPage(request, reply, carts.events(request.accountId, request.dataVersion, request.query));
    },
  );

  app.get(
    '/cart-receivers',
    {
      schema: {
        summary: 'List connected carts',
        operationId: 'listCartReceivers',
        description:
          "Every cart connected to the account (the command line's `carts connect`), by cart, with the path of the receiver it sends to: only the token's first characters, never the token or the secret. See the API reference.",
        tags: ['carts'],
        response: {
          200: Type.Object(
            { receivers: Type.Array(CartReceiverEntry, { description: 'The connected carts, by cart; empty when none is' }) },
            { additionalProperties: false, description: 'The connected carts' },
          ),
          401: ErrorMessage,
        },
      },
    },
    async (request) => ({ receivers: await carts.receivers(request.accountId) }),
  );
};
