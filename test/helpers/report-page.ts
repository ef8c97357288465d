import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface ReportPage {
  browser: Browser;
  page: Page;
  /** The page's uncaught errors, and every request beyond file:// (the report must need no network). */
  errors: string[];
}

/** An HTML report opened from file:// in Debian's chromium (driven by playwright-core; no browser download). */
export async function openReportPage(file: string): Promise<ReportPage> {
  expect(existsSync(CHROMIUM), `chromium not found at ${CHROMIUM} (apt-get install chromium)`).toBe(true);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1300, height: 1000 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.route(/^(?!file:)/, (route) => {
    errors.push(`network request: ${route.request().url()}`);
    return route.abort();
  });
  await page.goto(`file://${file}`);
  await page.waitForSelector('.card');
  return { browser, page, errors };
}
