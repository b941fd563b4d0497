import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type TestContext, accountWithKey, startTestApp } from '../helpers/app.js';
import { describeEachEngine } from '../helpers/database.js';
import { conversionRecord, insertConversions } from '../helpers/fixtures.js';

/**
 * GET /api/v1/conversions/summary: every sum is checked against sums worked out here from the
 * very records imported, for every kind of group key, in a time zone across both changes of
 * daylight-saving time.
 */

type Conversion = Record<string, any>;
type Key = Record<string, string | number | boolean | null>;

const SOURCES = ['facebook', 'google', 'tiktok', null];
const HOUR = 3600 * 1000;

/** Records over a month around the start of daylight-saving time in New York, and some around its end. */
function records(count: number, seed: number): Conversion[] {
  const start = Date.parse('2026-02-25T00:00:00Z');
  const made: Conversion[] = [];
  for (let index = 0; index < count; index++) {
    const n = index * 7919 + seed;
    made.push(
      conversionRecord({
        created_at: new Date(start + index * 1.7 * HOUR).toISOString().replace(/\.\d+Z$/, 'Z'),
        receipt: `S${seed}-${index}`,
        amount: index % 11 === 0 ? null : ((n % 9000) + 100) / 100,
        tax_amount: (n % 700) / 100,
        shipping_amount: index % 3 === 0 ? 4.95 : 0,
        email: index % 13 === 0 ? null : `buyer${n % 37}@example.com`,
        utm_source: SOURCES[n % SOURCES.length],
        page_id: 1000 + (n % 3),
        mobile: index % 5 === 0 ? null : n % 2 === 0,
        tracking_codes: [[], ['tc-a'], ['tc-a', 'tc-b'], ['tc-c']][n % 4],
        cart_integration: index % 4 === 0 ? 'digistore' : 'clickbank',
      }),
    );
  }
  // Both sides of each change in New York: 2026-03-08 07:00Z (02:00 EST becomes 03:00 EDT) and 2026-11-01 06:00Z (02:00 EDT becomes 01:00 EST).
  for (const [at, receipt] of [
    ['2026-03-08T06:59:59Z', 'DST-1'],
    ['2026-03-08T07:00:00Z', 'DST-2'],
    ['2026-11-01T05:30:00Z', 'DST-3'],
    ['2026-11-01T06:30:00Z', 'DST-4'],
    ['2026-11-02T04:59:00Z', 'DST-5'],
    ['2026-11-02T05:00:00Z', 'DST-6'],
  ]) {
    made.push(conversionRecord({ created_at: at, receipt: `${receipt}-${seed}`, amount: 10, utm_source: 'dst' }));
  }
  return made;
}

/** The local start of a record's time bucket as the API writes it, worked out with Intl. */
function bucketOf(createdAt: string, bucket: string, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', hourCycle: 'h23' })
      .formatToParts(new Date(createdAt))
      .map((part) => [part.type, part.value]),
  );
  const day = `${parts.year}-${parts.month}-${parts.day}`;
  if (bucket === 'hour') return `${day}T${parts.hour}:00`;
  if (bucket === 'day') return day;
  if (bucket === 'month') return `${parts.year}-${parts.month}-01`;
  // ISO week: the Monday on or before the local day.
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7));
  return date.toISOString().slice(0, 10);
}

/** A money value in millionths, exact for the values these tests use (at most 6 places, well below 2^53 millionths). */
const millionths = (value: number) => BigInt(Math.round(value * 1_000_000));
/** A sum of millionths over `count`, rounded to cents half away from zero, as the exact decimal sum is: what the API answers. */
function cents(sum: bigint, count = 1n): number {
  const divisor = 10_000n * count;
  const magnitude = (2n * (sum < 0n ? -sum : sum) + divisor) / (2n * divisor);
  return Number(sum < 0n ? -magnitude : magnitude) / 100;
}

/** The summary worked out from the records: one group per key, or per element of an array key. */
function expectedSummary(conversions: Conversion[], groupBy: string[], timeZone: string) {
  const keysOf = (record: Conversion): Key[] => {
    let keys: Key[] = [{}];
    for (const name of groupBy) {
      const values: (string | number | boolean | null)[] = ['hour', 'day', 'week', 'month'].includes(name)
        ? [bucketOf(record.created_at, name, timeZone)]
        : Array.isArray(record[name])
          ? record[name].length > 0
            ? record[name]
            : [null]
          : [record[name] ?? null];
      keys = keys.flatMap((key) => values.map((value) => ({ ...key, [name]: value })));
    }
    return keys;
  };
  const measures = (members: Conversion[]) => {
    const amounts = members.map((m) => m.amount).filter((a): a is number => a !== null && a !== undefined);
    const total = (values: (number | null | undefined)[]) => values.reduce((sum: bigint, value) => sum + millionths(value ?? 0), 0n);
    const sum = (field: string) => cents(total(members.map((m) => m[field])));
    return {
      conversions: members.length,
      amount: sum('amount'),
      tax_amount: sum('tax_amount'),
      shipping_amount: sum('shipping_amount'),
      average_amount: amounts.length === 0 ? null : cents(total(amounts), BigInt(amounts.length)),
      buyers: new Set(members.map((m) => m.email).filter((email) => email !== null)).size,
    };
  };
  const groups = new Map<string, { key: Key; members: Conversion[] }>();
  for (const record of conversions) {
    for (const key of keysOf(record)) {
      const id = JSON.stringify(key);
      if (!groups.has(id)) groups.set(id, { key, members: [] });
      groups.get(id)!.members.push(record);
    }
  }
  return { groups: [...groups.values()].map(({ key, members }) => ({ key, ...measures(members) })), totals: measures(conversions) };
}

/** Key order: each key's values ascending, null last. */
function compareKeys(groupBy: string[]) {
  return (a: { key: Key }, b: { key: Key }) => {
    for (const name of groupBy) {
      const x = a.key[name] ?? null;
      const y = b.key[name] ?? null;
      if (x === y) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      return x < y ? -1 : 1;
    }
    return 0;
  };
}

describeEachEngine('conversion summaries', (engine) => {
  let ctx: TestContext;
  let key: string;
  let otherKey: string;
  let shopId: number;
  const mine = records(400, 1);
  before(async () => {
    ctx = await startTestApp(engine);
    const account = await accountWithKey(ctx.accounts, 'shop');
    key = account.key;
    shopId = account.accountId;
    const other = await accountWithKey(ctx.accounts, 'other');
    otherKey = other.key;
    await insertConversions(ctx.database, account.accountId, mine);
    await insertConversions(ctx.database, other.accountId, records(60, 2));
  });
  after(() => ctx?.close());

  const get = (query: string, apiKey = key) => ctx.app.inject({ url: `/api/v1/conversions/summary${query}`, headers: { 'x-api-key': apiKey } });

  /** Asks and checks the answer against the records: sums exact to the cent, groups in key order. */
  async function assertSummary(query: string, groupBy: string[], timeZone: string, matching: (record: Conversion) => boolean = () => true): Promise<any> {
    const response = await get(query);
    assert.equal(response.statusCode, 200, response.body);
    const answer = response.json();
    const expected = expectedSummary(mine.filter(matching), groupBy, timeZone);
    if (groupBy.length > 0) expected.groups.sort(compareKeys(groupBy));
    assert.deepEqual(
      answer.groups.map((group: { key: Key }) => group.key),
      expected.groups.map((group) => group.key),
      'the groups, in key order',
    );
    assert.deepEqual(answer, expected);
    return answer;
  }

  test('without group_by: one group of every conversion of the account, the same as the totals', async () => {
    const answer = await assertSummary('', [], 'UTC');
    assert.equal(answer.totals.conversions, mine.length);
  });

  for (const bucket of ['hour', 'day', 'week', 'month']) {
    test(`by ${bucket} in New York: each bucket the local start of its period, across both daylight-saving changes`, async () => {
      await assertSummary(`?group_by=${bucket}&tz=America/New_York`, [bucket], 'America/New_York');
    });
  }

  test("a day is the seller's day: the same conversions by day in UTC and in Tokyo fall on other dates", async () => {
    const utc = await assertSummary('?group_by=day', ['day'], 'UTC');
    const tokyo = await assertSummary('?group_by=day&tz=Asia/Tokyo', ['day'], 'Asia/Tokyo');
    assert.notDeepEqual(utc.groups, tokyo.groups);
  });

  test('by a text, a whole-number and a boolean column, null values in a group of their own, last', async () => {
    const bySource = await assertSummary('?group_by=utm_source', ['utm_source'], 'UTC');
    assert.equal(bySource.groups.at(-1).key.utm_source, null);
    await assertSummary('?group_by=page_id', ['page_id'], 'UTC');
    const byMobile = await assertSummary('?group_by=mobile', ['mobile'], 'UTC');
    assert.deepEqual(
      byMobile.groups.map((group: { key: Key }) => group.key.mobile),
      [false, true, null],
    );
  });

  test('by tracking_codes: a conversion counts in the group of each of its codes, once in the totals', async () => {
    const answer = await assertSummary('?group_by=tracking_codes', ['tracking_codes'], 'UTC');
    const inGroups = answer.groups.reduce((total: number, group: { conversions: number }) => total + group.conversions, 0);
    assert.ok(inGroups > answer.totals.conversions, 'conversions with two codes are in two groups');
  });

  test("by three keys, with the filters of the list, and totals equal to the list's totalEntries", async () => {
    const matching = (r: Conversion) => r.cart_integration === 'clickbank' && r.amount !== null && r.amount >= 30;
    const answer = await assertSummary(
      '?group_by=week,utm_source,mobile&tz=Europe/Berlin&cart_integration=clickbank&amount.gte=30',
      ['week', 'utm_source', 'mobile'],
      'Europe/Berlin',
      matching,
    );
    const list = await ctx.app.inject({ url: '/api/v1/conversions?cart_integration=clickbank&amount.gte=30', headers: { 'x-api-key': key } });
    assert.equal(answer.totals.conversions, list.json().totalEntries);
  });

  test('by two time buckets and a column: each conversion in the month and the day of its local time', async () => {
    await assertSummary('?group_by=month,day&tz=America/New_York', ['month', 'day'], 'America/New_York');
    await assertSummary('?group_by=week,hour,utm_source&tz=Asia/Kolkata', ['week', 'hour', 'utm_source'], 'Asia/Kolkata');
  });

  test('money that is not whole cents is summed exactly and rounded half away from zero, the totals the same in every grouping', async () => {
    const seller = await accountWithKey(ctx.accounts, 'fils');
    // Doubles just below the half cent (1.255 is 1.25499999...), three-place currencies, a negative half cent.
    const amounts = [1.255, 0.105, 2.675, 1.005, 12.345, -0.005, 0.07, 0.7, 19.99];
    await insertConversions(
      ctx.database,
      seller.accountId,
      amounts.map((amount, index) =>
        conversionRecord({
          receipt: `FILS-${index}`,
          amount,
          tax_amount: amount / 10,
          utm_source: index % 2 === 0 ? 'even' : 'odd',
          tracking_codes: index % 3 === 0 ? ['a', 'b'] : [],
        }),
      ),
    );
    const ask = async (query: string) => {
      const response = await get(query, seller.key);
      assert.equal(response.statusCode, 200, response.body);
      return response.json();
    };
    const alone = await ask('?receipt=FILS-0');
    assert.deepEqual([alone.totals.amount, alone.totals.average_amount], [1.26, 1.26], '1.255 is 1.26');
    assert.equal((await ask('?receipt=FILS-5')).totals.amount, -0.01, '-0.005 is -0.01');
    const exact = cents(amounts.reduce((sum, amount) => sum + millionths(amount), 0n));
    const totals = await Promise.all(
      ['', '?group_by=utm_source', '?group_by=tracking_codes', '?group_by=day,utm_source'].map(async (query) => (await ask(query)).totals),
    );
    for (const total of totals) assert.deepEqual(total, totals[0]);
    assert.equal(totals[0].amount, exact);
    const bySource = await ask('?group_by=utm_source');
    for (const group of bySource.groups) {
      const members = amounts.filter((_, index) => (index % 2 === 0 ? 'even' : 'odd') === group.key.utm_source);
      assert.equal(group.amount, cents(members.reduce((sum, amount) => sum + millionths(amount), 0n)), group.key.utm_source);
      assert.equal(group.tax_amount, cents(members.reduce((sum, amount) => sum + millionths(amount / 10), 0n)), group.key.utm_source);
      assert.equal(
        group.average_amount,
        cents(
          members.reduce((sum, amount) => sum + millionths(amount), 0n),
          BigInt(members.length),
        ),
      );
    }
  });

  test('money that is not whole cents arriving after a summary of whole cents is summed exactly in the next', async () => {
    const seller = await accountWithKey(ctx.accounts, 'later-fils');
    await insertConversions(ctx.database, seller.accountId, [conversionRecord({ receipt: 'WHOLE-1', amount: 10 })]);
    assert.equal((await get('?group_by=day', seller.key)).json().totals.amount, 10);
    await insertConversions(ctx.database, seller.accountId, [
      conversionRecord({ receipt: 'FILS-1', amount: 1.251 }),
      conversionRecord({ receipt: 'FILS-2', amount: 0.101 }),
    ]);
    const { totals } = (await get('?group_by=day', seller.key)).json();
    // 11.352 and 3.784: the ranks alone (whole cents and a half) would say 11.36 and 3.79.
    assert.deepEqual([totals.amount, totals.average_amount], [11.35, 3.78]);
  });

  test('nothing matching: no groups, zero totals and no average', async () => {
    const response = await get('?group_by=day&utm_source=nobody');
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), {
      groups: [],
      totals: { conversions: 0, amount: 0, tax_amount: 0, shipping_amount: 0, average_amount: null, buyers: 0 },
    });
  });

  test("another account's conversions are never in the sums", async () => {
    const response = await get('', otherKey);
    assert.equal(response.json().totals.conversions, 60 + 6);
  });

  test('conversions imported after a summary are in the next one', async () => {
    assert.equal((await get('?utm_source=late')).json().totals.conversions, 0);
    await insertConversions(ctx.database, shopId, [conversionRecord({ utm_source: 'late', receipt: 'LATE-1', amount: 12.34 })]);
    const after = (await get('?utm_source=late')).json().totals;
    assert.equal(after.conversions, 1);
    assert.equal(after.amount, 12.34);
  });

  test("conversions arriving months after an account's others are bucketed in that season's local time", async () => {
    const seller = await accountWithKey(ctx.accounts, 'seasons');
    const byHour = async () =>
      (await get('?group_by=hour&tz=America/New_York', seller.key)).json().groups.map((group: { key: { hour: string } }) => group.key.hour);
    await insertConversions(ctx.database, seller.accountId, [conversionRecord({ receipt: 'WINTER', created_at: '2026-01-15T15:30:00Z' })]);
    assert.deepEqual(await byHour(), ['2026-01-15T10:00'], 'EST, five hours behind UTC');
    await insertConversions(ctx.database, seller.accountId, [conversionRecord({ receipt: 'SUMMER', created_at: '2026-07-01T15:30:00Z' })]);
    assert.deepEqual(await byHour(), ['2026-01-15T10:00', '2026-07-01T11:00'], 'EDT, four hours behind UTC');
  });

  test('conversions before 1970 are in the buckets of their own local time', async () => {
    const seller = await accountWithKey(ctx.accounts, 'sixties');
    await insertConversions(
      ctx.database,
      seller.accountId,
      ['1969-12-28T12:00:00Z', '1969-12-31T23:30:00Z', '1970-01-01T00:30:00Z'].map((at, index) =>
        conversionRecord({ receipt: `OLD-${index}`, created_at: at }),
      ),
    );
    const keys = async (query: string) =>
      (await get(query, seller.key)).json().groups.map((group: { key: Key; conversions: number }) => [Object.values(group.key)[0], group.conversions]);
    assert.deepEqual(await keys('?group_by=hour'), [
      ['1969-12-28T12:00', 1],
      ['1969-12-31T23:00', 1],
      ['1970-01-01T00:00', 1],
    ]);
    assert.deepEqual(await keys('?group_by=day'), [
      ['1969-12-28', 1],
      ['1969-12-31', 1],
      ['1970-01-01', 1],
    ]);
    assert.deepEqual(await keys('?group_by=week'), [
      ['1969-12-22', 1],
      ['1969-12-29', 2],
    ]);
    assert.deepEqual(await keys('?group_by=month'), [
      ['1969-12-01', 2],
      ['1970-01-01', 1],
    ]);
    assert.deepEqual(await keys('?group_by=day&tz=America/New_York'), [
      ['1969-12-28', 1],
      ['1969-12-31', 2],
    ]);
  });

  test('time buckets at the edges: year 1, the first second of a 30-day window, a zone 45 minutes off the hour', async () => {
    // The key of each group, for each query, of an account of one conversion.
    const bucketsOf = async (name: string, createdAt: string, ...queries: string[]) => {
      const seller = await accountWithKey(ctx.accounts, name);
      await insertConversions(ctx.database, seller.accountId, [conversionRecord({ receipt: name, created_at: createdAt })]);
      const keys = async (query: string) => (await get(query, seller.key)).json().groups.map((group: { key: Key }) => Object.values(group.key).join(' '));
      return Promise.all(queries.map(keys));
    };
    // New York's local mean time was 4:56:02 behind UTC: the first second of year 1 is in year 0 there.
    const inNewYork = (bucket: string) => `?group_by=${bucket}&tz=America/New_York`;
    assert.deepEqual(await bucketsOf('year-one', '0001-01-01T00:00:00Z', inNewYork('hour'), inNewYork('day'), inNewYork('week'), inNewYork('month')), [
      ['0000-12-31T19:00'],
      ['0000-12-31'],
      ['0000-12-25'],
      ['0000-12-01'],
    ]);
    // 30 days after 1970-01-01, where the windows the offsets are found over begin: the day before in New York.
    assert.deepEqual(await bucketsOf('window-edge', '1970-01-31T00:00:00Z', inNewYork('day'), inNewYork('month')), [['1970-01-30'], ['1970-01-01']]);
    assert.deepEqual(await bucketsOf('kathmandu', '2026-03-01T00:30:00Z', '?group_by=hour&tz=Asia/Kathmandu'), [['2026-03-01T06:00']]);
  });

  test('an account whose conversions span centuries is summed by month all the same', async () => {
    const seller = await accountWithKey(ctx.accounts, 'centuries');
    await insertConversions(ctx.database, seller.accountId, [
      conversionRecord({ receipt: 'OLDEST', created_at: '1700-03-15T12:00:00Z' }),
      conversionRecord({ receipt: 'NEWEST', created_at: '2026-03-31T23:59:59Z' }),
    ]);
    const groups = (await get('?group_by=month', seller.key)).json().groups;
    assert.deepEqual(
      groups.map((group: { key: Key }) => group.key.month),
      ['1700-03-01', '2026-03-01'],
    );
  });

  for (const [query, message] of [
    ['?group_by=a,b,c,d', /at most 3 comma-separated keys/],
    ['?group_by=amount', /unknown key amount; use a time bucket \(hour, day, week, month\) or one of: /],
    ['?group_by=utm_source,utm_source', /names utm_source twice/],
    ['?group_by=day,', /empty key/],
    ['?tz=Mars/Olympus', /tz must be an IANA time zone such as Europe\/Berlin/],
    ['?page=2', /page is not a known parameter; use group_by, tz or a filter on one of: /],
    ['?amount.gte=cheap', /amount/],
    ['?group_by=day&group_by=month', /group_by is given more than once/],
  ] as const) {
    test(`${query} is a 400 saying what to fix`, async () => {
      const response = await get(query);
      assert.equal(response.statusCode, 400, response.body);
      assert.match(response.json(), message);
    });
  }

  test('more than 10,000 groups is a 400 that says to narrow the filter', async () => {
    const many = await accountWithKey(ctx.accounts, 'many');
    const rows = Array.from({ length: 10_001 }, (_, index) => ({ created_at: '2026-01-01T00:00:00Z', cart_integration: 'buygoods', receipt: `M-${index}` }));
    await insertConversions(ctx.database, many.accountId, rows);
    const response = await get('?group_by=receipt', many.key);
    assert.equal(response.statusCode, 400, response.body);
    assert.match(response.json(), /more than 10000 groups; narrow the filters/);
    const fewer = await get('?group_by=receipt&receipt.lt=M-5', many.key);
    assert.equal(fewer.statusCode, 200, fewer.body);
  });
});
