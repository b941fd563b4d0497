import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it), driven by playwright-core: its own download fails here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Headless, with nothing that reaches out to the network or asks a first-run question. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
