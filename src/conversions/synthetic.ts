import { randomBytes } from 'node:crypto';
import { formatTimestamp } from '../filters/timestamps.js';
import { CART_INTEGRATIONS } from './schema.js';

/**
 * Realistic synthetic conversions for demos and benchmarks: every cart, several currencies and
 * countries, skewed utm values, and upsell chains whose orders share `original_receipt`.
 * Records have the import shape, so they pass through the same validation as a real file.
 */

/** A small fast seeded generator (mulberry32), so that a benchmark can regenerate its data. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
/** Picks with weights: the first items are the common ones. */
const pickWeighted = <T>(random: Random, items: readonly (readonly [T, number])[]): T => {
  const total = items.reduce((sum, [, weight]) => sum + weight, 0);
  let roll = random() * total;
  for (const [item, weight] of items) {
    roll -= weight;
    if (roll < 0) return item;
  }
  return items[items.length - 1]![0];
};

const MARKETS = [
  ['US', 'USD', 40],
  ['GB', 'GBP', 10],
  ['DE', 'EUR', 10],
  ['CA', 'CAD', 8],
  ['AU', 'AUD', 6],
  ['FR', 'EUR', 6],
  ['NL', 'EUR', 4],
  ['BR', 'BRL', 4],
  ['IN', 'INR', 4],
  ['JP', 'JPY', 3],
  ['ES', 'EUR', 3],
  ['MX', 'MXN', 2],
] as const;
const UTM_SOURCES = [
  ['facebook', 45],
  ['google', 25],
  ['tiktok', 10],
  ['youtube', 8],
  ['newsletter', 6],
  ['bing', 3],
  ['instagram', 3],
] as const;
const UTM_MEDIUMS = ['cpc', 'email', 'social', 'video', 'display'] as const;
const CAMPAIGNS = ['spring-sale', 'black-friday', 'evergreen', 'retargeting', 'launch', 'vsl-a', 'vsl-b'] as const;
const REFERRERS = [
  ['https://www.google.com/', 'Google', 'search'],
  ['https://www.facebook.com/', 'Facebook', 'social'],
  ['https://www.youtube.com/', 'YouTube', 'social'],
  ['https://mail.google.com/', 'Gmail', 'email'],
  ['https://www.bing.com/', 'Bing', 'search'],
  ['https://t.co/', 'Twitter', 'social'],
] as const;
const FIRST_NAMES = [
  'James',
  'Mary',
  'John',
  'Patricia',
  'Robert',
  'Jennifer',
  'Michael',
  'Linda',
  'Anna',
  'Lukas',
  'Sofia',
  'Mateo',
  'Emma',
  'Noah',
  'Olivia',
  'Liam',
  'Yuki',
  'Priya',
] as const;
const LAST_NAMES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Muller',
  'Schmidt',
  'Martin',
  'Silva',
  'Tanaka',
  'Patel',
  'Wilson',
  'Taylor',
] as const;
const PRODUCTS = [
  ['KETO-1', 49],
  ['KETO-3', 117],
  ['KETO-6', 198],
  ['SLIM-1', 69],
  ['SLIM-3', 177],
  ['GUIDE-PDF', 19.99],
  ['VIP-CLUB', 37],
  ['BRAIN-BOOST', 59.95],
  ['SLEEP-WELL', 39.5],
  ['EBOOK-BUNDLE', 27],
] as const;
const HOSTS = ['shop.example.com', 'offer.example.net', 'get.example.org', 'try.example.io'] as const;
const AFFILIATES = ['aff_alpha', 'aff_bravo', 'aff_charlie', 'aff_delta', 'aff_echo', 'aff_foxtrot'] as const;

const START = Date.UTC(2025, 0, 1) / 1000;
const END = Date.UTC(2026, 10, 22) / 1000;

export interface SyntheticOptions {
  random?: Random;
  /** How many distinct buyers to draw from; fewer buyers means more repeat purchases. */
  buyers?: number;
}

/** Yields `count` conversions, grouped in upsell chains of one to four orders. */
export function* syntheticConversions(count: number, options: SyntheticOptions = {}): Generator<Record<string, unknown>> {
  const random = options.random ?? Math.random;
  const buyers = options.buyers ?? Math.max(1, Math.floor(count / 3));
  const runTag = randomBytes(4).toString('hex');
  let made = 0;
  while (made < count) {
    const chainLength = Math.min(
      count - made,
      pickWeighted(random, [
        [1, 55],
        [2, 25],
        [3, 14],
        [4, 6],
      ]),
    );
    const buyer = Math.floor(random() * buyers);
    const [country, currency] = pickWeighted(
      random,
      MARKETS.map(([c, cur, w]) => [[c, cur], w] as const),
    );
    const cart = pick(random, CART_INTEGRATIONS);
    const [referrer, referrerName, referrerMedium] = pick(random, REFERRERS);
    const utmSource = pickWeighted(random, UTM_SOURCES);
    const mobile = random() < 0.62;
    const affiliate = random() < 0.4 ? pick(random, AFFILIATES) : null;
    const pageId = 1000 + Math.floor(random() * 200);
    const start = START + Math.floor(random() * (END - START - 3600));
    const flowId = `flow-${Math.floor(random() * 40)}`;
    const session = `${runTag}-${made.toString(36)}`;
    const firstReceipt = receipt(cart, runTag, made);
    const path: string[] = [];
    for (let step = 0; step < chainLength; step++) {
      const [sku, price] = pick(random, PRODUCTS);
      const qty = 1 + (random() < 0.15 ? 1 : 0);
      const amount = Math.round(price * qty * 100) / 100;
      const tax = Math.round(amount * pick(random, [0, 0, 0.07, 0.19, 0.2]) * 100) / 100;
      path.push(String(step === 0 ? pageId : pageId + step));
      yield {
        created_at: formatTimestamp(start + step * (30 + Math.floor(random() * 300))),
        cart_integration: cart,
        receipt: step === 0 ? firstReceipt : receipt(cart, runTag, made + step),
        original_receipt: firstReceipt,
        amount,
        tax_amount: tax,
        shipping_amount: step === 0 && random() < 0.3 ? 4.95 : 0,
        products: [{ sku, price, qty }],
        email: `buyer${buyer}@example.com`,
        user_id: `u${buyer}`,
        page_id: pageId + step,
        page_version: String.fromCharCode(97 + Math.floor(random() * 4)),
        upsell_flow_id: flowId,
        upsell_session: session,
        upsell_path: path.join('>'),
        upsell_group: step === 0 ? 'front' : 'upsell',
        upsell_step: step,
        country,
        mobile,
        affiliate,
        vendor: pick(random, ['acme', 'globex', 'initech']),
        role: step === 0 ? 'front_end' : 'upsell',
        tracking_codes: random() < 0.7 ? [`tc-${utmSource}`, `tc-${Math.floor(random() * 50)}`] : [],
        referrer,
        referrer_name: referrerName,
        referrer_medium: referrerMedium,
        joint_venture_order: random() < 0.05 ? `jv-${Math.floor(random() * 10)}` : null,
        currency,
        hostname: pick(random, HOSTS),
        utm_source: utmSource,
        utm_medium: pick(random, UTM_MEDIUMS),
        utm_campaign: pick(random, CAMPAIGNS),
        utm_content: `ad-${Math.floor(random() * 30)}`,
        first_name: FIRST_NAMES[buyer % FIRST_NAMES.length],
        last_name: LAST_NAMES[(buyer * 7) % LAST_NAMES.length],
        zip_code: String(10000 + ((buyer * 7919) % 89999)),
        payment_method: random() < 0.8 ? 'creditcard' : 'paypal',
        affiliate_payouts: affiliate ? [Math.round(amount * 0.5 * 100) / 100] : [],
      };
    }
    made += chainLength;
  }
}

function receipt(cart: string, runTag: string, index: number): string {
  return `${cart.slice(0, 3).toUpperCase()}-${runTag}-${index.toString(36).padStart(6, '0')}`;
}
