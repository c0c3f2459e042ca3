// The team's own end-to-end test, unchanged but for where the browser comes from: Chromium
// installed on the machine (playwright-core downloads none), started with the flags
// `shepherd record` wrote, so every exchange and the page's trace are recorded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const site = process.env.SITE_URL;
// `shepherd record --browser-flags FILE` writes {"proxy", "spki", "args"}; without it the
// suite runs as it always did.
const flags = process.env.SHEPHERD_BROWSER_FLAGS
  ? JSON.parse(readFileSync(process.env.SHEPHERD_BROWSER_FLAGS, 'utf8'))
  : { args: [] };

let browser;
before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: flags.args,
  });
});
after(async () => {
  await browser?.close();
});

test('a coupon code takes 10 % off', async () => {
  const page = await browser.newPage();
  await page.goto(`${site}/index.html`);
  // The good order: the handler's script has run before the user clicks.
  await page.waitForFunction(() => window.couponReady === true);
  await page.fill('#code', 'SAVE10');
  await page.click('#apply');
  await assert.doesNotReject(page.waitForFunction(
    () => document.getElementById('total').textContent === '90.00'));
  // Leaving the page lets the controller send the rest of its trace.
  await page.goto('about:blank');
  await page.close();
});
