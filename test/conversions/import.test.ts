import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { ImportRejected, importConversions, readRecords, type ImportFormat, type LineProblem, type SourceRecord } from '../../src/conversions/import.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { describeEachEngine, tempDir } from '../helpers/database.js';
import { CONVERSION_FIELDS, conversionRecord, variedText } from '../helpers/fixtures.js';

/**
 * The import path of conversions (docs/command-line.md, "Importing conversions"): every row is
 * checked, a file with any bad row imports nothing, and a row already present is skipped. The
 * command line `conversions import` on NDJSON and CSV files, run as a child process on the
 * suite's database, and `importConversions` in-process for the table of validation rules.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** What a command reads on standard input: text, or what writes it (and ends it) as it goes. */
type Input = string | ((stdin: Writable) => Promise<void>);

/** Runs `node --import tsx src/cli.ts ...args` with the given environment; resolves when it exits. */
function runCli(args: string[], env: Record<string, string>, input: Input = ''): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', BOOTSTRAP_API_KEY: '', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    if (typeof input === 'string') child.stdin.end(input);
    else input(child.stdin).catch(reject);
  });
}

/** Resolves once `text` is handed to the reader: more than a pipe holds is handed over only as the other end reads it. */
function writeAll(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (stream.write(text)) return resolve();
    stream.once('drain', resolve);
    stream.once('close', resolve);
  });
}

/** The fields an import takes: those of a conversion entry but its id. */
const IMPORT_FIELDS = CONVERSION_FIELDS.filter((field) => field !== 'id');
const ARRAY_FIELDS = new Set(['products', 'tracking_codes', 'affiliate_payouts']);

/** Three rows: every field set (with commas, quotes and non-ASCII), only the required ones, and edge values. */
const ROWS: Record<string, unknown>[] = [
  conversionRecord({
    created_at: '2026-03-01T09:15:00Z',
    cart_integration: 'clickbank',
    receipt: 'IMP-1',
    original_receipt: 'IMP-0',
    amount: 19.99,
    tax_amount: 1.6,
    shipping_amount: 4.95,
    mobile: true,
    country: 'US',
    currency: 'USD',
    products: [
      { sku: 'SKU-1', price: 19.99, qty: 1 },
      { sku: 'SKU "2", large', price: 0.01, qty: 3 },
    ],
    tracking_codes: ['a', 'b,c', 'd "e"'],
    affiliate_payouts: [1.5, 0.25],
    utm_campaign: 'spring, "sale"',
    first_name: 'Zoë',
    joint_venture_order: 'JV-1',
    page_version: 'a',
  }),
  { created_at: '2026-03-02T00:00:00Z', cart_integration: 'stickyio', receipt: 'IMP-2' },
  conversionRecord({
    created_at: '2026-03-01T10:00:00+02:00',
    cart_integration: 'svencart',
    receipt: 'IMP-3',
    amount: 0,
    tax_amount: 0,
    shipping_amount: 0,
    mobile: false,
    country: 'DE',
    currency: 'EUR',
    page_version: 'z',
    page_id: -1,
    upsell_step: 2.5,
    products: [{ sku: 'FREE', price: 0, qty: 0 }],
    tracking_codes: [],
    affiliate_payouts: [],
    payment_method: 'paypal',
  }),
];

/** The entry each row must read back as, without its id. */
function expectedEntry(row: Record<string, unknown>): Record<string, unknown> {
  const entry: Record<string, unknown> = {};
  for (const field of IMPORT_FIELDS) entry[field] = row[field] ?? (ARRAY_FIELDS.has(field) ? [] : null);
  entry.created_at = new Date(row.created_at as string).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return entry;
}

const toNdjson = (rows: object[]) => `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`;

/** CSV with a header of the given columns: every cell quoted, "" for a quote, arrays as JSON, booleans t/f, null empty. */
function toCsv(rows: Record<string, unknown>[], columns: string[]): string {
  const cell = (value: unknown) => {
    if (value === null || value === undefined) return '';
    const text = Array.isArray(value) ? JSON.stringify(value) : typeof value === 'boolean' ? (value ? 't' : 'f') : String(value);
    return `"${text.replaceAll('"', '""')}"`;
  };
  return `${[columns.join(','), ...rows.map((row) => columns.map((column) => cell(row[column])).join(','))].join('\r\n')}\r\n`;
}

const withoutId = ({ id: _id, ...rest }: Record<string, unknown>) => rest;

describeEachEngine('conversions import on the command line', (engine) => {
  let ctx: TestContext;
  let files: string;
  let env: Record<string, string>;
  const keys = new Map<string, string>();

  const write = (name: string, text: string) => {
    const file = path.join(files, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const importFile = (file: string, account: string, input?: Input) => runCli(['conversions', 'import', file, '--account', account], env, input);

  /** The account's whole listing (one page is enough here), through HTTP with a key of the account. */
  async function listing(account: string, query = '') {
    if (!keys.has(account)) keys.set(account, await ctx.accounts.createKey(account));
    const response = await ctx.app.inject({ url: `/api/v1/conversions${query ? `?${query}` : ''}`, headers: { 'x-api-key': keys.get(account)! } });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as { entries: Record<string, any>[]; totalEntries: number };
  }

  before(async () => {
    ctx = await startTestApp(engine);
    files = tempDir('acds-import-files-');
    env = { DATA_DIR: ctx.database.dataDir, DATABASE_URL: ctx.database.databaseUrl ?? '' };
  });
  after(async () => {
    await ctx.close();
    fs.rmSync(files, { recursive: true, force: true });
  });

  test('an NDJSON file imports every row, exits 0 and says how many it imported', async () => {
    const result = await importFile(write('rows.ndjson', toNdjson(ROWS)), 'nd');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported 3 conversions, skipped 0/);
    assert.equal(result.stderr, '', 'a short import prints only its result');
    const body = await listing('nd');
    assert.equal(body.totalEntries, 3);
    assert.deepEqual(body.entries.map(withoutId), ROWS.map(expectedEntry));
  });

  test('a file whose line is longer than any conversion (a JSON array) is refused as it is read, naming the line, and nothing is imported', async () => {
    const array = JSON.stringify(Array.from({ length: 10_000 }, (_, index) => ({ ...ROWS[0], receipt: `ARRAY-${index}` })));
    const result = await importFile(write('array.ndjson', `${toNdjson(ROWS)}${array}\n`), 'array');
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stderr, new RegExp(`line ${ROWS.length + 1} is longer than 4194304 characters`));
    assert.equal((await listing('array')).totalEntries, 0);
  });

  test("acds's own export (the API's entries, one a line, with their ids) re-imports into another account from NDJSON and CSV, each id ignored with one warning", async () => {
    const exported = (await listing('nd')).entries;
    assert.deepEqual(exported.map(withoutId), ROWS.map(expectedEntry));
    const warning = `warning: the id field of ${ROWS.length} rows was ignored: acds gives each imported conversion its own id`;
    const copies = [
      ['export-nd', write('export.ndjson', toNdjson(exported))],
      ['export-csv', write('export.csv', toCsv(exported, ['id', ...IMPORT_FIELDS]))],
    ] as const;
    for (const [account, file] of copies) {
      // The copy's ids are its own: a conversion of another account already holds each exported one.
      const result = await importFile(file, account);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /imported 3 conversions, skipped 0/);
      assert.deepEqual(
        result.stderr.split('\n').filter((line) => line.startsWith('warning')),
        [warning],
        result.stderr,
      );
      const copied = (await listing(account)).entries;
      assert.deepEqual(copied.map(withoutId), exported.map(withoutId), account);
      assert.ok(
        copied.every((entry) => !exported.some((original) => original.id === entry.id)),
        `${account}: new ids`,
      );
    }
    const again = await importFile(path.join(files, 'rows.ndjson'), 'export-nd');
    assert.doesNotMatch(again.stderr, /warning/, 'rows without an id warn of nothing');
  });

  test('a CSV file of the same rows (columns in another order) lists back identically to the NDJSON import', async () => {
    const columns = [...IMPORT_FIELDS].reverse();
    const result = await importFile(write('rows.csv', toCsv(ROWS, columns)), 'csv');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported 3 conversions, skipped 0/);
    const fromCsv = await listing('csv');
    const fromNdjson = await listing('nd');
    assert.deepEqual(fromCsv.entries.map(withoutId), fromNdjson.entries.map(withoutId));
    assert.deepEqual(fromCsv.entries.map(withoutId), ROWS.map(expectedEntry));
  });

  test('a CSV with a header naming only some fields imports them, the rest reading back null or []', async () => {
    const text =
      'receipt,created_at,cart_integration,mobile,tracking_codes\r\nPART-1,2026-05-01T00:00:00Z,digistore,1,"[""x""]"\r\nPART-2,2026-05-02T00:00:00Z,digistore,0,\r\n';
    const result = await importFile(write('partial.csv', text), 'partial');
    assert.equal(result.code, 0, result.stderr);
    const { entries } = await listing('partial');
    assert.deepEqual(entries.map(withoutId), [
      { ...expectedEntry({ created_at: '2026-05-01T00:00:00Z', cart_integration: 'digistore', receipt: 'PART-1' }), mobile: true, tracking_codes: ['x'] },
      { ...expectedEntry({ created_at: '2026-05-02T00:00:00Z', cart_integration: 'digistore', receipt: 'PART-2' }), mobile: false },
    ]);
  });

  test('imported array elements are filterable, from NDJSON and from CSV alike', async () => {
    for (const account of ['nd', 'csv']) {
      assert.deepEqual(
        (await listing(account, 'tracking_codes=b%2Cc')).entries.map((e) => e.receipt),
        ['IMP-1'],
        account,
      );
      assert.deepEqual((await listing(account, 'tracking_codes=b')).entries, [], account);
      assert.deepEqual(
        (await listing(account, 'amount=19.99')).entries.map((e) => e.receipt),
        ['IMP-1'],
        account,
      );
    }
  });

  test('re-importing the same NDJSON file adds nothing and says how many it skipped', async () => {
    const before = await listing('nd');
    const result = await importFile(path.join(files, 'rows.ndjson'), 'nd');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported 0 conversions, skipped 3/);
    assert.deepEqual(await listing('nd'), before);
  });

  test('re-importing the same CSV file adds nothing and says how many it skipped', async () => {
    const before = await listing('csv');
    const result = await importFile(path.join(files, 'rows.csv'), 'csv');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported 0 conversions, skipped 3/);
    assert.deepEqual(await listing('csv'), before);
  });

  test('a file of known and new rows adds only the new ones and counts the known as skipped', async () => {
    const fresh = conversionRecord({ cart_integration: 'buygoods', receipt: 'IMP-4', created_at: '2026-03-04T00:00:00Z' });
    // IMP-1 is known; IMP-2 under another cart is a different conversion.
    const otherCart = { created_at: '2026-03-02T00:00:00Z', cart_integration: 'konnektive', receipt: 'IMP-2' };
    const result = await importFile(write('mixed.ndjson', toNdjson([ROWS[0]!, fresh, otherCart])), 'nd');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported 2 conversions, skipped 1/);
    const { entries, totalEntries } = await listing('nd');
    assert.equal(totalEntries, 5);
    assert.deepEqual(
      entries.map((e) => `${e.cart_integration}/${e.receipt}`),
      ['clickbank/IMP-1', 'stickyio/IMP-2', 'svencart/IMP-3', 'buygoods/IMP-4', 'konnektive/IMP-2'],
    );
    // the known row kept its values: a skipped row does not overwrite
    assert.deepEqual(withoutId(entries[0]!), expectedEntry(ROWS[0]!));
  });

  test('a row repeated within one file is imported once; the first is kept and the repeat counted as skipped', async () => {
    const rows = [
      conversionRecord({ cart_integration: 'clickbank', receipt: 'DUP-1', amount: 1 }),
      conversionRecord({ cart_integration: 'clickbank', receipt: 'DUP-1', amount: 2 }),
      conversionRecord({ cart_integration: 'stickyio', receipt: 'DUP-1', amount: 3 }),
    ];
    const result = await importFile(write('dups.ndjson', toNdjson(rows)), 'dups');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported 2 conversions, skipped 1/);
    const { entries } = await listing('dups');
    assert.deepEqual(
      entries.map((e) => [e.cart_integration, e.receipt, e.amount]),
      [
        ['clickbank', 'DUP-1', 1],
        ['stickyio', 'DUP-1', 3],
      ],
    );
  });

  test('an NDJSON file with bad lines changes nothing, names every bad line with its reason on stderr and exits non-zero', async () => {
    const before = await listing('nd');
    const lines = [
      JSON.stringify(conversionRecord({ receipt: 'BAD-OK-1' })), // 1 good
      '{"created_at": "2026-03-01T00:00:00Z", "cart_integration": ', // 2 not JSON
      '', // 3 blank: skipped
      JSON.stringify(conversionRecord({ receipt: 'BAD-2', currency: 'usd' })), // 4
      JSON.stringify(conversionRecord({ receipt: 'BAD-OK-2' })), // 5 good
      JSON.stringify({ created_at: '2026-03-01T00:00:00Z', cart_integration: 'clickbank' }), // 6 no receipt
      JSON.stringify(conversionRecord({ receipt: 'BAD-3', products: [{ sku: 'S', price: 1, qty: -1 }] })), // 7
      JSON.stringify(conversionRecord({ receipt: 'BAD-4', cart_integration: 'amazon', email: 'not-an-address' })), // 8, two reasons
      JSON.stringify(conversionRecord({ receipt: 'IMP-1', cart_integration: 'clickbank' })), // 9 good, known
    ];
    const result = await importFile(write('bad.ndjson', `${lines.join('\n')}\n`), 'nd');
    assert.notEqual(result.code, 0);
    const named = [...result.stderr.matchAll(/^line (\d+):/gm)].map((match) => Number(match[1]));
    assert.deepEqual([...new Set(named)], [2, 4, 6, 7, 8], result.stderr);
    const reasons = (line: number) =>
      result.stderr
        .split('\n')
        .filter((text) => text.startsWith(`line ${line}:`))
        .join('\n');
    assert.match(reasons(2), /JSON/);
    assert.match(reasons(4), /currency/);
    assert.match(reasons(6), /receipt/);
    assert.match(reasons(7), /qty/);
    assert.match(reasons(8), /cart_integration/);
    assert.match(reasons(8), /email/);
    assert.match(result.stderr, /nothing was imported/);
    assert.doesNotMatch(result.stdout, /imported \d/);
    assert.deepEqual(await listing('nd'), before);
  });

  test('a CSV file with bad rows changes nothing and names every bad line, counting the header as line 1', async () => {
    const header = 'created_at,cart_integration,receipt,email,page_version,mobile,products';
    const text = `${[
      header,
      '2026-03-01T00:00:00Z,clickbank,CSV-OK-1,a@example.com,a,t,', // line 2 good
      '2026-03-01T00:00:00Z,clickbank,CSV-BAD-1,not-an-address,a,t,', // line 3 bad email
      '2026-03-01T00:00:00Z,clickbank,CSV-OK-2,b@example.com,b,f,', // line 4 good
      '2026-03-01T00:00:00Z,clickbank,CSV-BAD-2,c@example.com,A,yes,', // line 5 bad page_version and mobile
      '2026-03-01T00:00:00Z,clickbank,CSV-BAD-3,d@example.com,c,f,"[{""sku"":1}"', // line 6 products not JSON
      'yesterday,clickbank,CSV-BAD-4,e@example.com,d,f,', // line 7 bad created_at
    ].join('\n')}\n`;
    const before = await listing('csv');
    const result = await importFile(write('bad.csv', text), 'csv');
    assert.notEqual(result.code, 0);
    const named = [...result.stderr.matchAll(/^line (\d+):/gm)].map((match) => Number(match[1]));
    assert.deepEqual([...new Set(named)], [3, 5, 6, 7], result.stderr);
    assert.match(result.stderr, /^line 3:.*email/m);
    assert.match(result.stderr, /^line 5:.*page_version/m);
    assert.match(result.stderr, /^line 5:.*mobile/m);
    assert.match(result.stderr, /^line 6:.*products/m);
    assert.match(result.stderr, /^line 7:.*created_at/m);
    assert.deepEqual(await listing('csv'), before);
  });

  test('a file of 10,000 bad rows prints 20 of its problems, then how many more there are of each reason, and imports nothing', async () => {
    // Every row's currency is wrong, and every tenth row's country too.
    const rows = Array.from({ length: 10_000 }, (_, index) =>
      conversionRecord({ receipt: `MANY-${index}`, currency: 'usd', ...(index % 10 === 9 ? { country: 'usa' } : {}) }),
    );
    const result = await importFile(write('many-bad.ndjson', toNdjson(rows)), 'many');
    assert.equal(result.code, 1, result.stdout);
    // A slow machine may take long enough for a progress line.
    const printed = result.stderr
      .trimEnd()
      .split('\n')
      .filter((line) => !line.startsWith('reading: '));
    const currency = 'currency must be three upper-case letters such as USD';
    const country = 'country must be two upper-case letters such as US';
    assert.deepEqual(printed, [
      ...Array.from({ length: 9 }, (_, index) => `line ${index + 1}: ${currency}`),
      `line 10: ${country}`,
      `line 10: ${currency}`,
      ...Array.from({ length: 9 }, (_, index) => `line ${index + 11}: ${currency}`),
      '... and 10,980 more problems:',
      `  9,981 × ${currency}`,
      `    999 × ${country}`,
      'rejected: 10,000 bad lines; nothing was imported',
    ]);
    assert.equal((await listing('many')).totalEntries, 0);
  });

  test('an import that takes a while says on standard error what it is doing: reading, by a count on standard input, then committing', async () => {
    const rows = (from: number, count: number) => toNdjson(Array.from({ length: count }, (_, index) => conversionRecord({ receipt: `SLOW-${from + index}` })));
    const result = await importFile('-', 'slow', async (stdin) => {
      // 500 rows are more than a pipe holds: they are handed over once the import reads them.
      await writeAll(stdin, rows(0, 500));
      await sleep(2_500);
      stdin.end(rows(500, 1_000));
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported 1500 conversions/);
    const printed = result.stderr.trimEnd().split('\n');
    assert.equal(printed.at(-1), 'committing', result.stderr);
    const reading = printed.slice(0, -1);
    assert.ok(reading.length > 0 && reading.every((line) => /^reading: [\d,]+ rows$/.test(line)), result.stderr);
    assert.equal(reading.at(-1), 'reading: 1,000 rows');
  });

  test('a rejected import into a new account leaves nothing behind, not even the account', async () => {
    const result = await importFile(write('ghost.ndjson', toNdjson([conversionRecord({ currency: 'usd' })])), 'ghost');
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /^line 1:.*currency/m);
    const account = await ctx.database.db.selectFrom('accounts').select('id').where('name', '=', 'ghost').executeTakeFirst();
    assert.equal(account, undefined, 'the failed import created the account "ghost"');
  });

  test('- reads NDJSON from standard input', async () => {
    const rows = [conversionRecord({ receipt: 'STDIN-1' }), conversionRecord({ receipt: 'STDIN-2' })];
    const result = await importFile('-', 'stdin', toNdjson(rows));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported 2 conversions, skipped 0/);
    assert.deepEqual(
      (await listing('stdin')).entries.map((e) => e.receipt),
      ['STDIN-1', 'STDIN-2'],
    );
  });
});

describe('conversions import on the command line: files it cannot read', () => {
  let dataDir: string;
  before(() => {
    dataDir = tempDir('acds-import-data-');
  });
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test('a file whose name is not .ndjson, .jsonl or .csv is refused with a message saying which names work', async () => {
    const file = path.join(dataDir, 'rows.txt');
    fs.writeFileSync(file, toNdjson([conversionRecord()]));
    const result = await runCli(['conversions', 'import', file], { DATA_DIR: dataDir, DATABASE_URL: '' });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /\.ndjson/);
    assert.match(result.stderr, /\.csv/);
  });

  const UNREADABLE: { what: string; make: () => string; says: string; skip?: string }[] = [
    { what: 'a file that does not exist', make: () => path.join(dataDir, 'missing.ndjson'), says: 'no such file' },
    { what: 'a file in a folder that does not exist', make: () => path.join(dataDir, 'nowhere', 'rows.csv'), says: 'no such file' },
    {
      what: 'a folder named like a file',
      make: () => {
        const folder = path.join(dataDir, 'folder.ndjson');
        fs.mkdirSync(folder, { recursive: true });
        return folder;
      },
      says: 'it is a folder',
    },
  ];
  for (const { what, make, says } of UNREADABLE) {
    test(`${what} is one line on standard error, "cannot read FILE: ${says}", and exit status 1`, async () => {
      const file = make();
      const result = await runCli(['conversions', 'import', file], { DATA_DIR: dataDir, DATABASE_URL: '' });
      assert.equal(result.code, 1, result.stdout);
      assert.equal(result.stderr, `cannot read ${file}: ${says}\n`);
    });
  }
});

test('an input that fails as it is read ends the records with its error, not the process', async () => {
  for (const format of ['ndjson', 'csv'] as const) {
    let sent = false;
    const failing = new Readable({
      read() {
        if (sent) return this.destroy(new Error('EIO: i/o error, read'));
        sent = true;
        this.push(format === 'csv' ? 'created_at,cart_integration,receipt\n' : `${JSON.stringify(conversionRecord())}\n`);
      },
    });
    const read = async () => {
      for await (const _record of readRecords(failing, format));
    };
    await assert.rejects(read(), /EIO: i\/o error, read/, format);
  }
});

test("an NDJSON file's byte order mark, which Windows tools write, is no part of its first line", async () => {
  const records: SourceRecord[] = [];
  for await (const batch of readRecords(Readable.from([Buffer.from('\uFEFF{"a":1}\n{"b":2}\n')]), 'ndjson')) records.push(...batch);
  assert.deepEqual(records, [
    { line: 1, record: { value: { a: 1 } } },
    { line: 2, record: { value: { b: 2 } } },
  ]);
});

test('a CSV record is numbered by the line it starts on, whatever line breaks its quoted cells and the file use', async () => {
  const header = 'created_at,cart_integration,receipt,first_name';
  const row = (receipt: string, name = 'x') => `2026-01-01T00:00:00Z,clickbank,${receipt},${name}`;
  for (const newline of ['\n', '\r\n', '\r']) {
    const lines = [header, row('R2', '"a\r\nb\nc"'), '', row('R5'), row('R6', `"d${newline}e"`), row('R8')];
    const numbered: [number, unknown][] = [];
    for await (const batch of readRecords(Readable.from([lines.join(newline)]), 'csv')) {
      for (const { line, record } of batch) numbered.push([line, 'value' in record ? (record.value as { receipt: string }).receipt : record]);
    }
    assert.deepEqual(
      numbered,
      [
        [2, 'R2'],
        [6, 'R5'],
        [7, 'R6'],
        [9, 'R8'],
      ],
      JSON.stringify(newline),
    );
  }
});

test('NDJSON lines are read whole, each with its line number, however the input is cut into chunks', async () => {
  // Blank lines count, a CRLF ends a line as a LF does, characters of several bytes, and a last line without its newline.
  const text = '{"a":"Zoë"}\r\n\n{"b":"😀"}\n   \nnot json\n{"c":[1,2]}';
  const expected = [
    { line: 1, record: { value: { a: 'Zoë' } } },
    { line: 3, record: { value: { b: '😀' } } },
    { line: 5, record: { problems: ['the line is not valid JSON: NDJSON holds one JSON object a line'] } },
    { line: 6, record: { value: { c: [1, 2] } } },
  ];
  const bytes = Buffer.from(text);
  const readAll = async (chunks: Buffer[]) => {
    const records: SourceRecord[] = [];
    for await (const batch of readRecords(Readable.from(chunks), 'ndjson')) records.push(...batch);
    return records;
  };
  for (let cut = 0; cut <= bytes.length; cut++) {
    assert.deepEqual(await readAll([bytes.subarray(0, cut), bytes.subarray(cut)]), expected, `cut at byte ${cut}`);
  }
  assert.deepEqual(await readAll([...bytes].map((byte) => Buffer.from([byte]))), expected, 'a byte a chunk');
});

/** One bad field per case; each case's reason must name the field. */
const INVALID: { says: string; record: Record<string, unknown>; names: RegExp }[] = [
  { says: 'created_at is required', record: conversionRecord({ created_at: undefined }), names: /created_at/ },
  { says: 'cart_integration is required', record: conversionRecord({ cart_integration: undefined }), names: /cart_integration/ },
  { says: 'receipt is required', record: conversionRecord({ receipt: undefined }), names: /receipt/ },
  { says: 'created_at null is not a timestamp', record: conversionRecord({ created_at: null }), names: /created_at/ },
  { says: 'receipt null is not a receipt', record: conversionRecord({ receipt: null }), names: /receipt/ },
  { says: 'created_at must be a timestamp', record: conversionRecord({ created_at: 'yesterday' }), names: /created_at/ },
  // Both written in years 1 to 9999, neither is in UTC: their entries could not be written in RFC 3339.
  {
    says: 'created_at after 9999-12-31T23:59:59Z in UTC',
    record: conversionRecord({ created_at: '9999-12-31T23:00:00-05:00' }),
    names: /created_at must lie from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z/,
  },
  { says: 'created_at before year 1 in UTC', record: conversionRecord({ created_at: '0001-01-01T00:00:00+01:00' }), names: /created_at must lie/ },
  { says: 'created_at must be a real date', record: conversionRecord({ created_at: '2026-02-30T00:00:00Z' }), names: /created_at/ },
  { says: 'cart_integration from its list', record: conversionRecord({ cart_integration: 'amazon' }), names: /cart_integration/ },
  { says: 'cart_integration is case-sensitive', record: conversionRecord({ cart_integration: 'ClickBank' }), names: /cart_integration/ },
  { says: 'payment_method from its list', record: conversionRecord({ payment_method: 'bitcoin' }), names: /payment_method/ },
  { says: 'page_version is lower case', record: conversionRecord({ page_version: 'A' }), names: /page_version/ },
  { says: 'page_version is one letter', record: conversionRecord({ page_version: 'ab' }), names: /page_version/ },
  { says: 'page_version is a letter', record: conversionRecord({ page_version: '1' }), names: /page_version/ },
  { says: 'currency is upper case', record: conversionRecord({ currency: 'usd' }), names: /currency/ },
  { says: 'currency is three letters, not two', record: conversionRecord({ currency: 'US' }), names: /currency/ },
  { says: 'currency is three letters, not four', record: conversionRecord({ currency: 'USDT' }), names: /currency/ },
  { says: 'country is upper case', record: conversionRecord({ country: 'us' }), names: /country/ },
  { says: 'country is two letters', record: conversionRecord({ country: 'USA' }), names: /country/ },
  { says: 'products is an array', record: conversionRecord({ products: { sku: 'S', price: 1, qty: 1 } }), names: /products/ },
  { says: 'a product has a sku', record: conversionRecord({ products: [{ price: 1, qty: 1 }] }), names: /products|sku/ },
  { says: 'a product sku is a string', record: conversionRecord({ products: [{ sku: 7, price: 1, qty: 1 }] }), names: /sku/ },
  { says: 'a product price is a number', record: conversionRecord({ products: [{ sku: 'S', price: '1.00', qty: 1 }] }), names: /price/ },
  { says: 'a product qty is at least 0', record: conversionRecord({ products: [{ sku: 'S', price: 1, qty: -1 }] }), names: /qty/ },
  { says: 'a product qty is whole', record: conversionRecord({ products: [{ sku: 'S', price: 1, qty: 1.5 }] }), names: /qty/ },
  { says: 'email is shaped like an address', record: conversionRecord({ email: 'not-an-address' }), names: /email/ },
  { says: 'email has a domain', record: conversionRecord({ email: 'buyer@' }), names: /email/ },
  { says: 'tracking_codes are strings', record: conversionRecord({ tracking_codes: [1] }), names: /tracking_codes/ },
  { says: 'text is at most 2,048 bytes of UTF-8, here 683 characters', record: conversionRecord({ utm_campaign: variedText(683, 3) }), names: /utm_campaign/ },
  { says: 'at most 100 tracking codes', record: conversionRecord({ tracking_codes: Array.from({ length: 101 }, (_, i) => `t${i}`) }), names: /tracking_codes/ },
  {
    says: 'at most 100 products',
    record: conversionRecord({ products: Array.from({ length: 101 }, () => ({ sku: 'S', price: 1, qty: 1 })) }),
    names: /products/,
  },
  { says: 'at most 100 affiliate payouts', record: conversionRecord({ affiliate_payouts: Array(101).fill(1) }), names: /affiliate_payouts/ },
  { says: 'a product sku is at most 2,048 characters', record: conversionRecord({ products: [{ sku: 's'.repeat(2049), price: 1, qty: 1 }] }), names: /sku/ },
  { says: 'text without the NUL character (PostgreSQL cannot hold it)', record: conversionRecord({ utm_source: 'a\u0000b' }), names: /utm_source/ },
  { says: 'a tracking code without the NUL character', record: conversionRecord({ tracking_codes: ['\u0000'] }), names: /tracking_codes/ },
  { says: 'a tracking code is at most 2,048 bytes', record: conversionRecord({ tracking_codes: ['ok', 'x'.repeat(2049)] }), names: /tracking_codes/ },
  { says: 'affiliate_payouts are numbers', record: conversionRecord({ affiliate_payouts: ['1.5'] }), names: /affiliate_payouts/ },
  { says: 'amount is a number', record: conversionRecord({ amount: '19.99' }), names: /amount/ },
  { says: 'page_id is an integer', record: conversionRecord({ page_id: 1.5 }), names: /page_id/ },
  { says: 'page_id is a whole number JSON carries exactly (PostgreSQL refused 1e20)', record: conversionRecord({ page_id: 1e20 }), names: /page_id/ },
  { says: 'mobile is a boolean', record: conversionRecord({ mobile: 'yes' }), names: /mobile/ },
  { says: 'no unknown fields', record: conversionRecord({ colour: 'red' }), names: /colour/ },
  { says: 'a conversion is an object', record: [1, 2] as unknown as Record<string, unknown>, names: /object/ },
];

const FREE_TEXT_FIELDS = [
  'receipt',
  'original_receipt',
  'user_id',
  'upsell_flow_id',
  'upsell_session',
  'upsell_path',
  'upsell_group',
  'affiliate',
  'vendor',
  'role',
  'referrer',
  'referrer_name',
  'referrer_medium',
  'joint_venture_order',
  'hostname',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'first_name',
  'last_name',
  'zip_code',
];

/** Edge values the rules allow. */
const VALID: { says: string; record: Record<string, unknown> }[] = [
  ...['clickbank', 'stickyio', 'konnektive', 'buygoods', 'digistore', 'svencart'].map((cart) => ({
    says: `cart_integration ${cart}`,
    record: conversionRecord({ cart_integration: cart }),
  })),
  { says: 'payment_method paypal', record: conversionRecord({ payment_method: 'paypal' }) },
  { says: 'page_version z', record: conversionRecord({ page_version: 'z' }) },
  { says: 'a product qty of 0', record: conversionRecord({ products: [{ sku: 'S', price: 0, qty: 0 }] }) },
  { says: 'country DE and currency EUR', record: conversionRecord({ country: 'DE', currency: 'EUR' }) },
  { says: 'an address with a plus and a subdomain', record: conversionRecord({ email: 'a.b+c@mail.example.co.uk' }) },
  { says: 'a timestamp with an offset', record: conversionRecord({ created_at: '2026-03-01T10:00:00-05:00' }) },
  { says: 'null optional fields', record: conversionRecord({ email: null, country: null, currency: null, page_version: null, mobile: null }) },
  { says: 'an id, which is ignored', record: conversionRecord({ id: 5 }) },
  {
    // Within what PostgreSQL can index: each value goes into an index entry of its column.
    says: 'every free text field and a tracking code at 2,048 bytes, written outside ASCII, and 100 of each list',
    record: conversionRecord({
      ...Object.fromEntries(FREE_TEXT_FIELDS.map((field) => [field, variedText(1024, 2)])),
      tracking_codes: [`${variedText(682, 3)}ab`, ...Array.from({ length: 99 }, (_, i) => `t${i}`)],
      products: Array.from({ length: 100 }, (_, i) => ({ sku: `${i}${'s'.repeat(2040)}`.slice(0, 2048), price: 1, qty: 1 })),
      affiliate_payouts: Array(100).fill(1.5),
    }),
  },
];

const ndjsonSource = (lines: string[]) => readRecords(Readable.from([`${lines.join('\n')}\n`]), 'ndjson');

describeEachEngine('conversions import validation: every row checked, and a file with a bad row imports nothing', (engine) => {
  let ctx: TestContext;
  let accountId: number;
  let key: string;

  const total = async () => {
    const response = await ctx.app.inject({ url: '/api/v1/conversions', headers: { 'x-api-key': key } });
    return response.json().totalEntries as number;
  };

  /** Imports the lines; returns the problems and whether the import was rejected. */
  async function run(lines: string[], format: ImportFormat = 'ndjson', intoAccount = accountId) {
    const problems: LineProblem[] = [];
    const source = format === 'ndjson' ? ndjsonSource(lines) : readRecords(Readable.from([`${lines.join('\n')}\n`]), 'csv');
    try {
      const result = await importConversions(ctx.database, intoAccount, source, { onProblem: (p) => problems.push(p) });
      return { problems, result, error: undefined };
    } catch (error) {
      return { problems, result: undefined, error: error as Error };
    }
  }

  before(async () => {
    ctx = await startTestApp(engine);
    ({ accountId, key } = await accountWithKey(ctx.accounts, 'validation'));
  });
  after(() => ctx.close());

  for (const { says, record, names } of INVALID) {
    test(`rejected: ${says}; the whole file is refused and the bad line named`, async () => {
      const before = await total();
      const { problems, error } = await run([JSON.stringify(conversionRecord()), JSON.stringify(record), JSON.stringify(conversionRecord())]);
      assert.ok(error instanceof ImportRejected, `rejected: ${error}`);
      assert.ok(problems.length > 0);
      assert.deepEqual([...new Set(problems.map((p) => p.line))], [2]);
      assert.match(problems.map((p) => p.reason).join('; '), names);
      assert.equal(await total(), before, 'nothing was imported');
    });
  }

  for (const { says, record } of VALID) {
    test(`accepted: ${says}`, async () => {
      const { problems, result, error } = await run([JSON.stringify(record)]);
      assert.equal(error, undefined, problems.map((p) => p.reason).join('; '));
      assert.equal(result!.inserted, 1);
    });
  }

  test('a text field over 2,048 bytes is rejected', async () => {
    const { problems, error } = await run([JSON.stringify(conversionRecord({ utm_content: 'x'.repeat(2049) }))]);
    assert.ok(error instanceof ImportRejected);
    assert.match(problems[0]!.reason, /utm_content/);
  });

  test('a line longer than any conversion (a JSON array on one line) fails the import, naming it, and keeps nothing', async () => {
    const before = await total();
    const array = JSON.stringify(Array.from({ length: 10_000 }, () => conversionRecord()));
    for (const [format, lines, says] of [
      ['ndjson', [JSON.stringify(conversionRecord()), array], /line 2 is longer than 4194304 characters/],
      ['csv', ['receipt,cart_integration,created_at', 'R-1,clickbank,2026-03-01', `"${'x'.repeat(5_000_000)}",clickbank,2026-03-01`], /maximum/i],
    ] as const) {
      const { error } = await run([...lines], format);
      assert.match(String(error), says, format);
      assert.equal(await total(), before, `${format}: nothing was imported`);
    }
  });

  test('every problem of a bad line is reported, not only the first', async () => {
    const { problems, error } = await run([JSON.stringify(conversionRecord({ currency: 'usd', country: 'usa', page_version: 'AB' }))]);
    assert.ok(error instanceof ImportRejected);
    const reasons = problems.map((p) => p.reason).join('; ');
    for (const field of ['currency', 'country', 'page_version']) assert.match(reasons, new RegExp(field));
  });

  test('a batch the database refuses fails the import with its error while later batches are read, and nothing is kept', async () => {
    // A trigger refuses one row of the first batch while the next ones are read.
    const refuse =
      ctx.database.engine === 'sqlite'
        ? [
            sql`create trigger conv.refuse_test before insert on conversions when new.receipt = 'REFUSE-ME' begin select raise(abort, 'refused by the test'); end`,
          ]
        : [
            sql`create function refuse_test() returns trigger language plpgsql as $$ begin if new.receipt = 'REFUSE-ME' then raise exception 'refused by the test'; end if; return new; end $$`,
            sql`create trigger refuse_test before insert on conversions for each row execute function refuse_test()`,
          ];
    for (const statement of refuse) await statement.execute(ctx.database.db);
    try {
      const before = await total();
      const lines = Array.from({ length: 700 }, (_, index) => JSON.stringify(conversionRecord(index === 3 ? { receipt: 'REFUSE-ME' } : {})));
      const { problems, error } = await run(lines);
      assert.match(String(error), /refused by the test/);
      assert.ok(!(error instanceof ImportRejected));
      assert.deepEqual(problems, []);
      assert.equal(await total(), before);
    } finally {
      await sql`drop trigger ${sql.raw(ctx.database.engine === 'sqlite' ? 'conv.refuse_test' : 'refuse_test on conversions')}`.execute(ctx.database.db);
    }
  });

  test('an import into an account that does not exist fails saying so, and nothing is kept', async () => {
    const missingAccount = accountId + 1000;
    const { error } = await run([JSON.stringify(conversionRecord())], 'ndjson', missingAccount);
    assert.match(String(error), new RegExp(`there is no account ${missingAccount}`));
    const kept = await ctx.database.db
      .selectFrom('conversions')
      .where('account_id', '=', missingAccount)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(kept.n), 0);
  });

  test('a bad line after many good ones still rejects the good ones: nothing is imported', async () => {
    const before = await total();
    const good = Array.from({ length: 300 }, () => JSON.stringify(conversionRecord()));
    const { problems, error } = await run([...good, JSON.stringify(conversionRecord({ cart_integration: 'amazon' }))]);
    assert.ok(error instanceof ImportRejected);
    assert.deepEqual(
      problems.map((p) => p.line),
      [301],
    );
    assert.equal(await total(), before);
  });

  test('CSV: mobile takes t, f, true, false, 1 and 0', async () => {
    const header = 'created_at,cart_integration,receipt,mobile';
    const cells = ['t', 'f', 'true', 'false', '1', '0'];
    const { error, problems } = await run([header, ...cells.map((cell) => `2026-06-01T00:00:00Z,clickbank,MOB-${cell},${cell}`)], 'csv');
    assert.equal(error, undefined, problems.map((p) => p.reason).join('; '));
    const response = await ctx.app.inject({ url: '/api/v1/conversions?created_at=2026-06-01', headers: { 'x-api-key': key } });
    const mobile = Object.fromEntries(response.json().entries.map((e: { receipt: string; mobile: boolean }) => [e.receipt, e.mobile]));
    assert.deepEqual(mobile, { 'MOB-t': true, 'MOB-f': false, 'MOB-true': true, 'MOB-false': false, 'MOB-1': true, 'MOB-0': false });
  });

  test('CSV: a header with an unknown column is refused with a message naming it', async () => {
    const before = await total();
    const { error } = await run(['created_at,cart_integration,receipt,colour', '2026-06-02T00:00:00Z,clickbank,COL-1,red'], 'csv');
    assert.ok(error);
    assert.match(error.message, /colour/);
    assert.equal(await total(), before);
  });

  test('CSV: a header naming a column twice is refused with a message naming it, rather than one value silently kept', async () => {
    const before = await total();
    const { error } = await run(['created_at,cart_integration,receipt,amount,amount', '2026-06-02T00:00:00Z,clickbank,TWICE-1,5,7'], 'csv');
    assert.match(String(error?.message), /the CSV header names amount more than once/);
    assert.equal(await total(), before);
  });

  test('CSV: an array cell that is not JSON is a bad line', async () => {
    const { error, problems } = await run(['created_at,cart_integration,receipt,tracking_codes', '2026-06-03T00:00:00Z,clickbank,TC-1,a;b'], 'csv');
    assert.ok(error instanceof ImportRejected);
    assert.deepEqual(
      problems.map((p) => p.line),
      [2],
    );
    assert.match(problems[0]!.reason, /tracking_codes/);
  });
});
