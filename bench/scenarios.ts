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
}

export type Check =
  | { kind: 'conversions'; matches: (row: ConversionFacts) => boolean }
  | { kind: 'assets'; folder: string };

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
// Prices of the generator's products (and 100, a round threshold a person would type).
const PRICE_POINTS = [19.99, 27, 37, 39.5, 49, 59.95, 69, 100, 117, 177, 198];
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
