import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { TestContext } from './context.js';
import { scaled } from './wait.js';

/** Headless Chromium (the system's), closed on teardown. */
export async function launchChromium(t: TestContext): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox'],
  });
  t.teardown(() => browser.close());
  return browser;
}

/**
 * A fresh page (its own cookies) `width` px wide, every wait bounded (5 s, scaled); a script
 * error or a Content-Security-Policy refusal on it is collected in `errors`.
 */
export async function newPage(
  browser: Browser,
  width = 1000,
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  context.setDefaultTimeout(scaled(5000));
  context.setDefaultNavigationTimeout(scaled(5000));
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    // The browser's own guess at /favicon.ico (the gateway serves none) is not the page's doing.
    if (m.type() === 'error' && !m.location().url.endsWith('/favicon.ico')) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, errors };
}
