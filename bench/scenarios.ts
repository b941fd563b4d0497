/**
 * The benchmark's scenarios. Each is a FAMILY of URLs built from the generated data, and every
 * request of a run picks one of them at random, so that no single cached answer can serve a
 * scenario. Each URL carries what it should match, so that a sample of answers can be checked
 * against the data rather than trusted.
 */
import { CART_INTEGRATIONS } from '../src/conversions/schema.js';

/** The fields of a generated conversion that the filters below look at. */
export interface ConversionFacts {
  receipt: string;
  created_at: string;
  cart_integration: string;
  amount: number;
  utm_source: string;
  user_id: string;
  zip_code: string;
  country: string;
}

export type Check = { kind: 'conversions'; matches: (row: ConversionFacts) => boolean } | { kind: 'assets'; folder: string };

export interface Member {
  path: string;
  page: number;
  check: Check;
}

export interface Scenario {
  id: string;
  title: string;
  members: Member[];
}

/** What the generator saw, for building families: how many rows and a sample of buyers. */
export interface DataSummary {
  conversions: number;
  buyers: { user_id: string; zip_code: string }[];
}

/** How many URLs a family has, where it is not fixed by the scenario itself. */
const FAMILY_SIZE = 50;
const PAGE_SIZE = 100;
// Common sources of the generator's skewed utm_source (facebook 45%, google 25%, tiktok 10%, youtube 8%).
const COMMON_UTM_SOURCES = ['facebook', 'google', 'tiktok', 'youtube'];
// Common countries of the generator's markets (US 40%, GB 10%, DE 10%, CA 8%, FR 6%).
const COMMON_COUNTRIES = ['US', 'GB', 'DE', 'CA', 'FR'];
// Prices of the generator's products (and 100, a round threshold a person would type).
const PRICE_POINTS = [19.99, 27, 37, 39.5, 49, 59.95, 69, 100, 117, 177, 198];
// The generator's created_at runs from 2025-01-01 to 2026-11-22: that many days.
const DAYS = 690;
// The generator's created_at runs from 2025-01-01 to 2026-11-22: its months.
const MONTHS = Array.from({ length: 23 }, (_, index) => ({ year: 2025 + Math.floor(index / 12), month: (index % 12) + 1 }));

const LIST = '/api/v1/conversions';
const all = (): Check => ({ kind: 'conversions', matches: () => true });
const pageParam = (page: number) => (page === 1 ? '' : `&page=${page}`);

export function conversionScenarios(summary: DataSummary, random: () => number): Scenario[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const family = (make: () => Member): Member[] => {
    // Distinct URLs only; stop trying when the data allows fewer than FAMILY_SIZE of them.
    const members = new Map<string, Member>();
    for (let tries = 0; members.size < FAMILY_SIZE && tries < FAMILY_SIZE * 20; tries++) {
      const member = make();
      members.set(member.path, member);
    }
    return [...members.values()];
  };

  const totalPages = Math.max(1, Math.ceil(summary.conversions / PAGE_SIZE));
  const middle = Math.ceil(totalPages / 2);
  const spread = Math.max(1, Math.floor(totalPages / 10));

  return [
    {
      id: 'S1',
      title: 'unfiltered, pages 1-50',
      members: Array.from({ length: 50 }, (_, index) => ({ path: `${LIST}?page=${index + 1}`, page: index + 1, check: all() })),
    },
    {
      id: 'S2',
      title: `unfiltered, pages around the middle (${Math.max(1, middle - spread)}-${middle + spread})`,
      members: family(() => {
        const page = Math.max(1, middle - spread + Math.floor(random() * (2 * spread + 1)));
        return { path: `${LIST}?page=${page}`, page, check: all() };
      }),
    },
    {
      id: 'S3',
      title: 'created_at in a month + utm_source',
      members: family(() => {
        const { year, month } = pick(MONTHS);
        const from = `${year}-${String(month).padStart(2, '0')}-01`;
        const next = month === 12 ? `${year + 1}-01-01` : `${year}-${String(month + 1).padStart(2, '0')}-01`;
        const source = pick(COMMON_UTM_SOURCES);
        // Stored timestamps are formatted YYYY-MM-DDTHH:MM:SSZ, so they compare as strings.
        const [start, end] = [`${from}T00:00:00Z`, `${next}T00:00:00Z`];
        return {
          path: `${LIST}?created_at.gte=${from}&created_at.lt=${next}&utm_source=${source}`,
          page: 1,
          check: { kind: 'conversions', matches: (row) => row.created_at >= start && row.created_at < end && row.utm_source === source },
        };
      }),
    },
    {
      id: 'S4',
      title: 'cart_integration.in two carts + amount.gte, page 1-20',
      members: family(() => {
        const first = pick(CART_INTEGRATIONS);
        const second = pick(CART_INTEGRATIONS.filter((cart) => cart !== first));
        const price = pick(PRICE_POINTS);
        const page = 1 + Math.floor(random() * 20);
        return {
          path: `${LIST}?cart_integration.in=${first},${second}&amount.gte=${price}${pageParam(page)}`,
          page,
          check: {
            kind: 'conversions',
            matches: (row) => (row.cart_integration === first || row.cart_integration === second) && row.amount >= price,
          },
        };
      }),
    },
    {
      id: 'S5',
      title: 'user_id= or zip_code= of a buyer',
      members: family(() => {
        const buyer = pick(summary.buyers);
        return random() < 0.5
          ? { path: `${LIST}?user_id=${buyer.user_id}`, page: 1, check: { kind: 'conversions', matches: (row) => row.user_id === buyer.user_id } }
          : { path: `${LIST}?zip_code=${buyer.zip_code}`, page: 1, check: { kind: 'conversions', matches: (row) => row.zip_code === buyer.zip_code } };
      }),
    },
  ];
}

/** S6: every folder the assets are in, with image=t, every page of each (at least the first). */
export function assetScenario(folders: { folder: string; images: number }[]): Scenario {
  const members = folders.flatMap(({ folder, images }) =>
    Array.from({ length: Math.max(1, Math.ceil(images / PAGE_SIZE)) }, (_, index) => ({
      path: `/api/v1/assets?folder=${folder}&image=t${pageParam(index + 1)}`,
      page: index + 1,
      check: { kind: 'assets' as const, folder },
    })),
  );
  return { id: 'S6', title: 'assets by folder with image=t', members };
}

/**
 * A question a reporting client asks: `query` (after `?`), the page it asks for, what it should
 * match, and `key`, the question without its page and however it is spelled (a count the service
 * has made for one page of a question serves all its pages), for telling new questions apart.
 */
export interface NewQuestion {
  query: string;
  page: number;
  key: string;
  matches: (row: ConversionFacts) => boolean;
}

/** The date `offset` days after the generator's first, 2025-01-01, as YYYY-MM-DD. */
export const day = (offset: number) => new Date(Date.UTC(2025, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10);

/** A window of whole days, `from` to `to` both included (created_at.between on dates), of `min` to `max` days. */
function dayWindow(random: () => number, min: number, max: number): { from: string; to: string; matches: (row: ConversionFacts) => boolean } {
  const days = min + Math.floor(random() * (max - min + 1));
  const first = Math.floor(random() * (DAYS - days + 1));
  const [from, to] = [day(first), day(first + days - 1)];
  // Stored timestamps are formatted YYYY-MM-DDTHH:MM:SSZ, so they compare as strings.
  const [start, end] = [`${from}T00:00:00Z`, `${to}T23:59:59Z`];
  return { from, to, matches: (row) => row.created_at >= start && row.created_at <= end };
}

/**
 * The questions a reporting client asks, each drawn anew (a new date window, a new price), so that
 * no cache can have its answer: a 7-90 day window and one source; two carts and a minimum amount
 * (never one of the warm S4's price points), pages 1-5; one country in a 30-180 day window.
 * bench/run.ts asks each once and checks it; bench/hostile.ts asks them beside an import.
 */
export const NEW_QUESTION_FAMILIES: Record<string, (random: () => number) => NewQuestion> = {
  'window + utm_source': (random) => {
    const window = dayWindow(random, 7, 90);
    const source = COMMON_UTM_SOURCES[Math.floor(random() * COMMON_UTM_SOURCES.length)]!;
    const query = `created_at.between=${window.from},${window.to}&utm_source=${source}`;
    return { query, page: 1, key: query, matches: (row) => window.matches(row) && row.utm_source === source };
  },
  'two carts + amount.gte': (random) => {
    const first = CART_INTEGRATIONS[Math.floor(random() * CART_INTEGRATIONS.length)]!;
    const others = CART_INTEGRATIONS.filter((cart) => cart !== first);
    const second = others[Math.floor(random() * others.length)]!;
    let price: number;
    do price = Math.round(random() * 15_000) / 100;
    while (PRICE_POINTS.includes(price));
    const page = 1 + Math.floor(random() * 5);
    return {
      query: `cart_integration.in=${first},${second}&amount.gte=${price.toFixed(2)}${pageParam(page)}`,
      page,
      key: `cart_integration.in=${[first, second].sort().join(',')}&amount.gte=${price}`,
      matches: (row) => (row.cart_integration === first || row.cart_integration === second) && row.amount >= price,
    };
  },
  'country + window': (random) => {
    const window = dayWindow(random, 30, 180);
    const country = COMMON_COUNTRIES[Math.floor(random() * COMMON_COUNTRIES.length)]!;
    const query = `country=${country}&created_at.between=${window.from},${window.to}`;
    return { query, page: 1, key: query, matches: (row) => window.matches(row) && row.country === country };
  },
};

/**
 * `count` new questions of each family, interleaved (one of each in turn), none with the key of
 * another nor of any in `asked` (which gets theirs added).
 */
export function newQuestions(random: () => number, count: number, asked: Set<string>): (NewQuestion & { family: string })[] {
  const questions: (NewQuestion & { family: string })[] = [];
  for (let round = 0; round < count; round++) {
    for (const [family, make] of Object.entries(NEW_QUESTION_FAMILIES)) {
      for (let tries = 0; ; tries++) {
        if (tries === 1000) throw new Error(`${family}: no new question in 1,000 tries`);
        const question = make(random);
        if (asked.has(question.key)) continue;
        asked.add(question.key);
        questions.push({ ...question, family });
        break;
      }
    }
  }
  return questions;
}
