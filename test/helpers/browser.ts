/**
 * A real browser for the console's tests: Debian's Chromium driven by playwright-core (which downloads
 * nothing), headless, with a throwaway profile. Where there is no Chromium the tests are skipped with
 * one line saying why; under CI=true that is a failure instead (.ci/run installs the package).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = process.env.ALLOT_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when they can. */
export const browserMissing: string | undefined = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (apt-get install chromium)`;

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(options: { colorScheme?: 'light' | 'dark' } = {}): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'allot-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 860 },
    colorScheme: options.colorScheme ?? 'light',
    reducedMotion: 'reduce',
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where the console's tests write the screenshots docs/console.md shows. */
export const SHOTS = 'docs/console';

/** A screenshot for docs/console.md, written only when UPDATE_DOCS=1. */
export async function docsShot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_DOCS !== '1') return;
  mkdirSync(SHOTS, { recursive: true });
  await page.evaluate('document.activeElement?.blur()'); // no focus ring in the docs
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true, animations: 'disabled' });
}

/** A locator's text with its whitespace runs made single spaces, as a reader sees it. */
export const readerText = async (locator: Locator): Promise<string> =>
  ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
