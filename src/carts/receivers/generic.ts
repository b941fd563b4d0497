// Our own signed webhook, for a checkout with no usable notification of its own and for
// forwarders (a Zapier or n8n step between a cart and us): one JSON event per POST, signed as
// Stripe signs its webhooks, with an HMAC over a timestamp and the exact body.
import { createHmac } from 'node:crypto';
import { type CartRequest, EVENT_TYPES, type EventType, type Receiver, type Verdict } from '../notification.js';
import {
  type ConversionRecord,
  conversionFor,
  epochOfIso8601,
  isObject,
  jsonReply,
  numberOf,
  PASS_THROUGH,
  pageIdOf,
  parseJsonObject,
  sameSecret,
  textOf,
  timesOf,
} from './fields.js';

/** The signature of a body sent at `t` (epoch seconds, as written in the header): hex HMAC-SHA256 of `<t>.<body>`. */
export function genericSignature(secret: string, t: number | string, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
}

/** How far the signing time may be from the time received: a captured request cannot be replayed later. */
const TOLERANCE_SECONDS = 300;
const HEADER_FORMAT = 't=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the webhook secret>';

/** The header's time, as written, and its signatures: `t=<unix>,v1=<hex>`, with several `v1` while a secret is being changed. */
function parseSignatureHeader(header: string): { t: string; signatures: string[] } | undefined {
  let t: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [name, value = ''] = part.trim().split('=', 2) as [string, string?];
    if (name === 't' && /^\d{1,12}$/.test(value)) t = value;
    else if (name === 'v1' && /^[0-9a-fA-F]{64}$/.test(value)) signatures.push(value.toLowerCase());
  }
  return t === undefined || signatures.length === 0 ? undefined : { t, signatures };
}

/** Why the request is not one signed with the secret just now, or undefined when it is. */
function signatureProblem(request: CartRequest, secret: string): string | undefined {
  const raw = request.headers['x-signature'];
  const header = Array.isArray(raw) ? raw.join(',') : raw;
  if (header === undefined || header === '') return `the X-Signature header is missing: send ${HEADER_FORMAT}`;
  const parsed = parseSignatureHeader(header);
  if (parsed === undefined) return `the X-Signature header is not ${HEADER_FORMAT}`;
  const expected = genericSignature(secret, parsed.t, request.rawBody);
  if (!parsed.signatures.some((signature) => sameSecret(signature, expected))) {
    return 'the X-Signature does not match: sign "<t>.<the body exactly as sent>" with the webhook secret given when the source was connected';
  }
  if (Math.abs(request.receivedAt - Number(parsed.t)) > TOLERANCE_SECONDS) {
    return 'the X-Signature timestamp is more than 5 minutes from now: sign each request when it is sent';
  }
  return undefined;
}

/** The events a sender may name: ours, but `other`, which says nothing a sender should send. */
const EVENTS: readonly EventType[] = EVENT_TYPES.filter((event) => event !== 'other');
/** The event's own keys; every other key is a field of the conversion. */
const EVENT_KEYS = ['event_id', 'event', 'occurred_at', 'test', 'passthrough'];
const EXAMPLE = '{"event_id":"evt_1","event":"sale","occurred_at":"2026-03-02T11:15:30Z","receipt":"R-1","amount":49}';

/** The event's fields, or what is wrong with them. */
function eventOf(body: Record<string, unknown>): { eventId: string; event: EventType } | { problem: string } {
  const eventId = textOf(body.event_id);
  if (eventId === undefined) return { problem: 'event_id is missing: give each event an id of its own, the same when it is sent again' };
  const event = EVENTS.find((name) => name === body.event);
  if (event === undefined) return { problem: `event must be one of ${EVENTS.join(', ')}` };
  if (body.passthrough !== undefined && body.passthrough !== null && !isObject(body.passthrough)) return { problem: 'passthrough must be a JSON object' };
  if (body.test !== undefined && body.test !== null && typeof body.test !== 'boolean') return { problem: 'test must be true or false' };
  return { eventId, event };
}

function read(request: CartRequest, secret: string | null): Verdict {
  if (!secret) return { kind: 'refused', reason: 'no webhook secret was given when the source was connected: connect it again with one' };
  const problem = signatureProblem(request, secret);
  if (problem !== undefined) return { kind: 'refused', reason: problem };
  const payload = request.rawBody.toString('utf8');
  const body = parseJsonObject(payload);
  if (body === undefined) return { kind: 'invalid', reason: `the body must be one JSON object, such as ${EXAMPLE}` };
  const checked = eventOf(body);
  if ('problem' in checked) return { kind: 'invalid', reason: checked.problem };

  const record = recordOf(body);
  const { createdAt, occurredAt } = timesOf(textOf(body.occurred_at) ?? textOf(record.created_at), epochOfIso8601, request.receivedAt);
  record.created_at = createdAt;
  return {
    kind: 'notification',
    notification: {
      eventKey: checked.eventId,
      event: checked.event,
      cartEvent: checked.event,
      receipt: typeof record.receipt === 'string' ? record.receipt : null,
      originalReceipt: typeof record.original_receipt === 'string' ? record.original_receipt : null,
      // An event of type test is one whatever its flag says, as every cart's test notification is.
      test: body.test === true || checked.event === 'test',
      occurredAt,
      payload,
      conversion: conversionFor(checked.event, record),
    },
  };
}

/**
 * The conversion: the body's fields as the import takes them (a key it does not know stays, so
 * that the import's checks name it), over those of `passthrough`.
 */
function recordOf(body: Record<string, unknown>): ConversionRecord {
  const fields = Object.fromEntries(Object.entries(body).filter(([name]) => !EVENT_KEYS.includes(name)));
  const record: ConversionRecord = { ...withoutPrefixes(isObject(body.passthrough) ? body.passthrough : {}), ...withoutPrefixes(fields) };
  for (const name of ['amount', 'tax_amount', 'shipping_amount', 'upsell_step']) record[name] = numberOf(record[name]);
  record.page_id = pageIdOf(record.page_id);
  return record;
}

/** The funnel's values under their names, a `__` prefixed one winning over the plain one. */
function withoutPrefixes(fields: Record<string, unknown>): ConversionRecord {
  const record: ConversionRecord = { ...fields };
  for (const name of PASS_THROUGH) {
    const prefixed = record[`__${name}`];
    delete record[`__${name}`];
    if (prefixed !== undefined && prefixed !== null && prefixed !== '') record[name] = prefixed;
  }
  return record;
}

export const generic: Receiver = {
  name: 'generic',
  methods: ['POST'],
  needsSecret: true,
  read,
  accepted: (duplicate) => jsonReply(200, duplicate ? { ok: true, duplicate: true } : { ok: true }),
  refused: (reason) => jsonReply(401, reason),
};
