import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { CartService } from '../../src/carts/service.js';
import { CONSOLE_DIR } from '../../src/console/routes.js';
import { formatOfPath, importConversions, readRecords } from '../../src/conversions/import.js';
import { accountWithKey, startTestApp, type TestContext } from '../helpers/app.js';
import { genericEvent, genericSignatureHeader, randomSecret } from '../helpers/carts.js';
import { launchChromium } from '../helpers/chromium.js';
import { png } from '../helpers/images.js';

/**
 * The web console end to end, in Debian's Chromium driven by playwright-core, against the
 * service on the embedded default holding the tour's example data: sign in, upload two files
 * by the file chooser, rename and move one, copy its URL and fetch it, filter conversions and
 * compare the total with the API's, and compare a report's sums with the summary endpoint's.
 * With CONSOLE_SCREENSHOTS set (npm run console:screenshots) it keeps a screenshot of each tab in docs/console/.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS ? path.join(ROOT, 'docs/console') : undefined;

const UPLOAD_LIMIT = 64 * 1024;

// Built once for the file, as `npm run build` builds it.
before(() => build({ configFile: path.join(ROOT, 'console/vite.config.ts'), logLevel: 'warn' }));

describe('the web console', () => {
  let ctx: TestContext;
  let baseUrl: string;
  let key: string;
  let accountId: number;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ctx = await startTestApp('sqlite', { maxUploadBytes: UPLOAD_LIMIT });
    baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const account = await accountWithKey(ctx.accounts, 'console');
    key = account.key;
    accountId = account.accountId;
    for (const file of ['examples/conversions.ndjson', 'examples/conversions.csv']) {
      await importConversions(ctx.database, account.accountId, readRecords(fs.createReadStream(path.join(ROOT, file)), formatOfPath(file)), {
        onProblem: (problem) => assert.fail(`${file}:${problem.line}: ${problem.reason}`),
      });
    }
    browser = await launchChromium();
    // Numbers as the assertions write them (the page formats them in the browser's locale).
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', locale: 'en-US' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseUrl });
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await ctx?.close();
  });

  const api = async (url: string) => {
    const response = await fetch(`${baseUrl}${url}`, { headers: { 'x-api-key': key } });
    assert.equal(response.status, 200, url);
    return response.json();
  };
  const screenshot = async (name: string) => {
    if (SCREENSHOTS) await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  };

  test('adds at most 300 KB of compressed JavaScript and CSS', () => {
    const files = fs.readdirSync(path.join(CONSOLE_DIR, 'assets')).filter((name) => /\.(js|css)$/.test(name));
    const compressed = files.reduce((sum, name) => sum + gzipSync(fs.readFileSync(path.join(CONSOLE_DIR, 'assets', name))).length, 0);
    assert.ok(compressed <= 300 * 1024, `${compressed} bytes gzipped`);
  });

  test("a wrong key is refused with the API's message, and the right one signs in", async () => {
    await page.goto(`${baseUrl}/console/`);
    await page.getByLabel('API key').fill('acds_not-a-key-of-anyone-here-0000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'invalid API key' }).waitFor();
    await screenshot('sign-in');
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    for (const name of ['Assets', 'Conversions', 'Reports', 'Cart events']) await page.getByRole('link', { name }).waitFor();
  });

  test('cart events of an account that has none say so', async () => {
    await page.getByRole('link', { name: 'Cart events' }).click();
    await page.getByText('0 notifications received').waitFor();
    await page.getByText(/^No cart is connected/).waitFor();
    assert.equal(await page.getByRole('alert').count(), 0);
    await page.getByRole('link', { name: 'Assets' }).click();
  });

  test('uploads two files by the file chooser into a new folder, renames one and moves it, and its copied URL serves its bytes', async () => {
    await page.getByLabel('New folder').fill('landing');
    await page.getByRole('button', { name: 'Create folder' }).click();
    const image = png(40, 30);
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Upload' }).click();
    await (await chooser).setFiles([
      { name: 'hero.png', mimeType: 'image/png', buffer: image },
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('order bump copy, v2') },
    ]);
    const grid = page.getByRole('list', { name: 'Assets in this folder' });
    await grid.getByRole('button', { name: /hero\.png/ }).waitFor();
    await grid.getByRole('button', { name: /notes\.txt/ }).waitFor();
    const folderOf = async () =>
      Object.fromEntries(((await api('/api/v1/assets')).entries as { name: string; folder: string }[]).map((entry) => [entry.name, entry.folder]));
    assert.deepEqual(await folderOf(), { 'hero.png': 'landing', 'notes.txt': 'landing' });

    await grid.getByRole('button', { name: /hero\.png/ }).click();
    const hero = page.getByRole('complementary', { name: 'Asset hero.png' });
    await hero.getByLabel('Name').fill('hero-v2.png');
    await hero.getByRole('button', { name: 'Rename' }).click();
    const renamed = page.getByRole('complementary', { name: 'Asset hero-v2.png' });
    await renamed.getByLabel('Folder').selectOption('');
    await renamed.getByRole('button', { name: 'Move' }).click();
    await grid.getByRole('button', { name: /hero-v2\.png/ }).waitFor({ state: 'detached' });
    assert.deepEqual(await folderOf(), { 'hero-v2.png': '', 'notes.txt': 'landing' });

    await page.getByRole('button', { name: '(root)' }).click();
    await grid.getByRole('button', { name: /hero-v2\.png/ }).click();
    await renamed.getByRole('button', { name: 'Copy URL' }).click();
    await renamed.getByRole('button', { name: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, (await api('/api/v1/assets?name=hero-v2.png')).entries[0].public_url);
    const served = await fetch(copied);
    assert.equal(served.status, 200);
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), image);
    await screenshot('assets');
  });

  test("an upload the API refuses shows the API's message beside its name and adds nothing", async () => {
    const before = (await api('/api/v1/assets')).totalEntries;
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Upload' }).click();
    await (await chooser).setFiles([{ name: 'too-big.mp4', mimeType: 'video/mp4', buffer: Buffer.alloc(UPLOAD_LIMIT + 1) }]);
    const refused = await page
      .getByRole('listitem')
      .filter({ hasText: /^too-big\.mp4: (?!waiting|sending)/ })
      .textContent();
    const expected = await fetch(`${baseUrl}/api/v1/assets`, {
      method: 'POST',
      headers: { 'x-api-key': key },
      body: (() => {
        const form = new FormData();
        form.set('name', 'too-big.mp4');
        form.set('file', new Blob([Buffer.alloc(UPLOAD_LIMIT + 1)], { type: 'video/mp4' }), 'too-big.mp4');
        return form;
      })(),
    });
    assert.equal(expected.status, 400);
    assert.equal(refused, `too-big.mp4: ${await expected.json()}`);
    assert.equal((await api('/api/v1/assets')).totalEntries, before);
  });

  test('filters conversions by the query text and shows the total the API counts', async () => {
    await page.getByRole('link', { name: 'Conversions' }).click();
    await page.getByLabel('Query').fill('amount.gt=20&cart_integration.in=clickbank,buygoods');
    await page.getByRole('button', { name: 'Apply' }).click();
    const expected = (await api('/api/v1/conversions?amount.gt=20&cart_integration.in=clickbank,buygoods')).totalEntries;
    assert.ok(expected > 0);
    await page
      .getByRole('status', { name: 'Total' })
      .filter({ hasText: new RegExp(`^${expected} conversions?$`) })
      .waitFor();
    await screenshot('conversions');
    await page
      .getByRole('button', { name: /^Open conversion / })
      .first()
      .click();
    await page.getByRole('dialog').getByText('original_receipt', { exact: true }).waitFor();
    await screenshot('conversion-entry');
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
  });

  test("a report's chart and top values sum as the summary endpoint does, by day in the chosen time zone", async () => {
    await page.getByRole('link', { name: 'Reports' }).click();
    // The Reports tab's own query, not the Conversions tab's still shown as the link is followed.
    const reports = page.getByRole('region', { name: 'Reports' });
    await reports.getByLabel('Query').fill('');
    await reports.getByRole('button', { name: 'Apply' }).click();
    await page.getByLabel('Time zone').selectOption('America/New_York');
    await page.getByLabel('From', { exact: true }).fill('2026-03-01');
    await page.getByLabel('To', { exact: true }).fill('2026-04-30');
    await page.getByLabel('Stack by').selectOption('cart_integration');
    // New York's March 1 starts at 05:00 UTC (EST); the day after April 30 at 04:00 UTC (EDT).
    const range = 'created_at.gte=2026-03-01T05:00:00Z&created_at.lt=2026-05-01T04:00:00Z';
    type Group = { key: { day?: string; cart_integration: string }; amount: number; conversions: number };
    const byCart: Group[] = (await api(`/api/v1/conversions/summary?group_by=cart_integration&${range}`)).groups;
    const byDay: Group[] = (await api(`/api/v1/conversions/summary?group_by=day,cart_integration&tz=America/New_York&${range}`)).groups;
    assert.ok(byDay.length > 1);

    const top = page.getByRole('table', { name: 'Top cart values' });
    for (const group of byCart) {
      const row = top.getByRole('row', { name: new RegExp(`^${group.key.cart_integration} `) });
      await row.waitFor();
      assert.deepEqual(
        (await row.getByRole('cell').allTextContents()).slice(0, 2),
        [group.amount.toFixed(2), String(group.conversions)],
        group.key.cart_integration,
      );
    }
    await page
      .getByRole('img', { name: /Revenue per day/ })
      .locator('canvas')
      .waitFor();
    await page.getByText('Chart data').click();
    const chart = page.getByRole('table', { name: 'Chart data' });
    const carts = (await chart.getByRole('columnheader').allTextContents()).slice(1);
    const shown = new Map<string, string>();
    for (const row of await chart.locator('tbody tr').all()) {
      const day = (await row.getByRole('rowheader').textContent())!;
      const cells = await row.getByRole('cell').allTextContents();
      for (const [index, cart] of carts.entries()) shown.set(`${day} ${cart}`, cells[index]!);
    }
    const expected = new Map(byDay.map((group) => [`${group.key.day} ${group.key.cart_integration}`, group.amount.toFixed(2)]));
    for (const [key, amount] of shown) assert.equal(amount, expected.get(key) ?? '0.00', key);
    for (const [key, amount] of expected) assert.equal(shown.get(key), amount, key);
    await screenshot('reports');
  });

  test("cart events show each connected cart's path without its token, and the latest 100 notifications, newest first", async () => {
    const secret = randomSecret();
    const hookPath = await new CartService(ctx.database).connect(accountId, 'generic', secret);
    const token = hookPath.split('/').at(-1)!;
    // 150 notifications: the latest 100 span the list's last two pages.
    const kinds = [{ event: 'sale' }, { event: 'upsell' }, { event: 'refund' }, { event: 'test', test: true }];
    for (let index = 1; index <= 150; index++) {
      const body = JSON.stringify(genericEvent(`evt-console-${index}`, `R-CONSOLE-${index}`, kinds[index % kinds.length]));
      const sent = await fetch(`${baseUrl}${hookPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-signature': genericSignatureHeader(secret, body) },
        body,
      });
      assert.equal(sent.status, 200, await sent.text());
    }
    await page.getByRole('link', { name: 'Cart events' }).click();
    const row = page.getByRole('table', { name: 'Connected carts' }).getByRole('row', { name: /^generic / });
    const shown = (await row.getByRole('cell').first().textContent()) ?? '';
    assert.ok(shown.startsWith('/hooks/generic/') && shown.endsWith('…'), shown);
    assert.ok(!shown.includes(token), 'the token is never shown whole');
    await page.getByText('150 notifications received').waitFor();
    const receipts = await page.getByRole('table', { name: 'Latest notifications' }).locator('tbody tr td:nth-child(5)').allTextContents();
    assert.deepEqual(
      receipts,
      Array.from({ length: 100 }, (_, index) => `R-CONSOLE-${150 - index}`),
    );
    await screenshot('cart-events');
  });

  test('"Export CSV" downloads what the export endpoint answers for the query', async () => {
    await page.getByRole('link', { name: 'Conversions' }).click();
    await page.getByLabel('Query').fill('country=US');
    await page.getByRole('button', { name: 'Apply' }).click();
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const file = await (await download).path();
    const expected = await fetch(`${baseUrl}/api/v1/conversions/export?country=US&format=csv`, { headers: { 'x-api-key': key } });
    assert.equal(expected.status, 200);
    const text = await expected.text();
    assert.ok(text.split('\n').length > 2, text);
    assert.equal(fs.readFileSync(file, 'utf8'), text);
  });

  test("every tab fits a phone's width, in the dark theme when the system's is dark", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark', locale: 'en-US', isMobile: true, hasTouch: true });
    const small = await phone.newPage();
    try {
      await small.goto(`${baseUrl}/console/`);
      await small.getByLabel('API key').fill(key);
      await small.getByRole('button', { name: 'Sign in' }).click();
      const background = await small.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const [red, green, blue] = background.match(/\d+/g)!.map(Number);
      assert.ok(red! + green! + blue! < 3 * 64, `a dark page, not ${background}`);
      const shownWhenReady = {
        Assets: small.getByRole('list', { name: 'Assets in this folder' }).getByRole('button').first(),
        Conversions: small.getByRole('button', { name: /^Open conversion / }).first(),
        Reports: small.getByRole('table', { name: 'Top source values' }).getByRole('row').nth(1),
        'Cart events': small.getByRole('table', { name: 'Latest notifications' }).getByRole('row').nth(1),
      };
      for (const [tab, ready] of Object.entries(shownWhenReady)) {
        await small.getByRole('link', { name: tab }).click();
        if (tab === 'Reports') {
          await small.getByLabel('From', { exact: true }).fill('2026-03-01');
          await small.getByLabel('To', { exact: true }).fill('2026-04-30');
        }
        await ready.waitFor();
        // Wide tables scroll inside their frames; the page itself never scrolls sideways.
        const overflow = await small.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.equal(overflow, 0, `${tab} is ${overflow} px wider than the phone`);
        if (SCREENSHOTS) await small.screenshot({ path: path.join(SCREENSHOTS, `phone-${tab.toLowerCase().replace(' ', '-')}.png`) });
      }
    } finally {
      await phone.close();
    }
  });
});

describe('the web console under the rate limit', () => {
  let ctx: TestContext;
  let browser: Browser;

  before(async () => {
    ctx = await startTestApp('sqlite', { rateLimit: { max: 2, windowMs: 2_000 } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await ctx?.close();
  });

  test('a 429 is shown as "too many requests, retrying in N s", and the page answers once it has waited', async () => {
    const baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { key } = await accountWithKey(ctx.accounts, 'limited');
    const page = await browser.newPage({ locale: 'en-US' });
    await page.goto(`${baseUrl}/console/#reports`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signing in, then the report's two summaries: the third request of the window is refused.
    await page
      .getByRole('status')
      .filter({ hasText: /^too many requests, retrying in \d+ s$/ })
      .waitFor();
    await page.getByRole('table', { name: 'Top source values' }).waitFor({ timeout: 10_000 });
  });

  test('signing in while the limit is spent says so, waits it out and signs in', async () => {
    const baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
    const { key } = await accountWithKey(ctx.accounts, 'spent');
    const page = await browser.newPage({ locale: 'en-US' });
    await page.goto(`${baseUrl}/console/`);
    await page.getByLabel('API key').fill(key);
    // The window's two requests, spent from this address just before the sign-in.
    for (let i = 0; i < 3; i++) await fetch(`${baseUrl}/api/v1/assets`, { headers: { 'x-api-key': key } });
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^too many requests, retrying in \d+ s$/ })
      .waitFor();
    await page.getByRole('link', { name: 'Assets' }).waitFor({ timeout: 10_000 });
  });
});
