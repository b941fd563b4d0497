/**
 * The web console against a running service holding the benchmark's data (bench/run.ts calls it
 * after the reports), in Debian's Chromium driven by playwright-core: how long a fresh browser
 * (no cache) takes from opening /console/ to a usable sign-in form, and, once signed in, how long
 * each tab takes to show its answer: the assets tab its folders (the whole library read), the
 * conversions tab its exact total (checked against the API's), the reports tab its top values for
 * the last 30 days, the cart events tab its notifications.
 */
import fs from 'node:fs';
import { CHROMIUM_PATH, launchChromium } from '../test/helpers/chromium.js';
import { BenchFailure } from './service.js';

const FIRST_PAGE_RUNS = 5;

export interface ConsoleResult {
  /** From navigation to the "API key" field visible, in a fresh browser context each run. */
  firstPageMs: number[];
  /** From "Sign in" or a tab's link clicked to its answer shown. */
  tabsMs: { tab: string; ms: number }[];
}

/** Undefined when there is no Chromium to run it in. */
export async function measureConsole(baseUrl: string, apiKey: string): Promise<ConsoleResult | undefined> {
  if (!fs.existsSync(CHROMIUM_PATH)) return undefined;
  const browser = await launchChromium();
  try {
    const firstPageMs: number[] = [];
    for (let run = 0; run < FIRST_PAGE_RUNS; run++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const began = performance.now();
      await page.goto(`${baseUrl}/console/`, { waitUntil: 'commit' });
      await page.getByLabel('API key').waitFor();
      firstPageMs.push(performance.now() - began);
      await context.close();
    }

    const counted = await fetch(`${baseUrl}/api/v1/conversions`, { headers: { 'x-api-key': apiKey } });
    const { totalEntries } = (await counted.json()) as { totalEntries: number };
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/console/`);
    const tabsMs: ConsoleResult['tabsMs'] = [];
    const timed = async (tab: string, act: () => Promise<void>, shown: () => Promise<void>) => {
      const began = performance.now();
      await act();
      await shown();
      tabsMs.push({ tab, ms: performance.now() - began });
    };
    await page.getByLabel('API key').fill(apiKey);
    await timed(
      'assets (signing in)',
      () => page.getByRole('button', { name: 'Sign in' }).click(),
      // The library read whole: the seeded assets are in folders, which the tree shows once it is.
      () => page.getByRole('list', { name: 'Folders' }).getByRole('listitem').nth(1).waitFor(),
    );
    await timed(
      'conversions',
      () => page.getByRole('link', { name: 'Conversions' }).click(),
      () =>
        page
          .getByRole('status', { name: 'Total' })
          .filter({ hasText: new RegExp(`^${totalEntries.toLocaleString('en-US')} conversions?$`) })
          .waitFor(),
    );
    await timed(
      'reports',
      () => page.getByRole('link', { name: 'Reports' }).click(),
      () => page.getByRole('table', { name: 'Top source values' }).locator('tfoot').waitFor(),
    );
    await timed(
      'cart events',
      () => page.getByRole('link', { name: 'Cart events' }).click(),
      () => page.getByText(/notifications? received$/).waitFor(),
    );
    const problems = await page.getByRole('alert').allTextContents();
    if (problems.length > 0) throw new BenchFailure(`the console showed: ${problems.join('; ')}`);
    return { firstPageMs, tabsMs };
  } finally {
    await browser.close();
  }
}
