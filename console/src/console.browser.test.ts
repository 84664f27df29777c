import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { openBrowser, type OpenBrowser } from './browser.test-support';
import { startConsole, type RunningConsole } from './console-server';

// Real services, a real Redis and a real browser on a shared 2-core machine: every wait is on the page's state, bounded generously.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 600_000 });
/** One checkout: its policy's services may start first (three Node processes), then the press settles. */
const CHECKOUT_BOUND_MS = 240_000;
/** Four policies, each on a fresh lab, as `npm run scenarios` plays them. */
const WRITE_UP_BOUND_MS = 480_000;

/** Where the end states are saved (git-ignored; CI keeps them as artifacts). */
const ARTIFACTS = join(__dirname, '..', 'artifacts');

let running: RunningConsole;
let browser: OpenBrowser;
let page: Page;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  running = await startConsole({ port: 0 });
  browser = await openBrowser();
  page = await browser.context.newPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(running.url);
});

afterAll(async () => {
  await browser?.close();
  await running?.close();
});

/** The number of the last action the page shows (0 before any). */
async function shownAction(): Promise<number> {
  return Number((await page.locator('#ledger').getAttribute('data-action')) || 0);
}

/** Do `press` once the console is free, then wait until the page shows a newer action settled. */
async function pressAndSettle(press: () => Promise<void>): Promise<void> {
  await page.locator('#pay[aria-disabled="false"]').waitFor({ timeout: CHECKOUT_BOUND_MS });
  const before = await shownAction();
  await press();
  await page.waitForFunction(
    (after) => {
      const ledger = document.getElementById('ledger');
      return Number(ledger?.dataset.action || 0) > after && ledger?.dataset.phase === 'settled';
    },
    before,
    { timeout: CHECKOUT_BOUND_MS, polling: 100 },
  );
}

async function chargeCount(): Promise<number> {
  return Number(await page.locator('#charge-count').textContent());
}

async function answers(): Promise<Array<{ text: string; replayed: boolean; pending: boolean }>> {
  return page.locator('#answers li').evaluateAll((items) =>
    items.map((item) => ({
      text: item.textContent ?? '',
      replayed: (item as HTMLElement).dataset.replayed === 'true',
      pending: (item as HTMLElement).dataset.pending === 'true',
    })),
  );
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

describe('the lab console, in a browser', () => {
  it('none: one press of Pay, with the write-up faults, is charged 4 times', async () => {
    await page.getByRole('radio', { name: /^none/ }).check();
    await pressAndSettle(() => page.getByRole('button', { name: 'Pay', exact: true }).click());
    await screenshot('none-pay');
    expect(await chargeCount()).toBe(4);
    expect(await page.locator('#diagram li.charge').count()).toBe(4);
    expect(await page.locator('#diagram li.lost').count()).toBeGreaterThan(0);
  });

  it('propagated: Pay, then "press again" from the keyboard, is charged once, the second answer replayed', async () => {
    await page.getByRole('radio', { name: /^propagated/ }).check();
    await pressAndSettle(() => page.getByRole('button', { name: 'Pay', exact: true }).click());
    expect(await chargeCount()).toBe(1);

    const again = page.getByRole('button', { name: 'Press again' });
    await pressAndSettle(async () => {
      await again.focus();
      await page.keyboard.press('Enter');
    });
    await screenshot('propagated-press-again');
    expect(await chargeCount()).toBe(1);
    const [first, second] = await answers();
    expect(first).toMatchObject({ pending: false });
    expect(second).toMatchObject({ pending: false, replayed: true });
    expect(second?.text).toMatch(/^Press again: 201 .*replayed from (gateway's|orders'|payments') store/);
    // The button kept the focus while the console was busy: nothing threw it away.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('again');
  });

  it('propagated: a double-click of 20 is charged once', async () => {
    await page.getByLabel('clicks').fill('20');
    await pressAndSettle(() => page.getByRole('button', { name: 'Double-click ×20' }).click());
    await screenshot('propagated-double-click-20');
    expect(await chargeCount()).toBe(1);
    const clicks = await answers();
    expect(clicks).toHaveLength(20);
    expect(clicks.filter((click) => click.pending)).toEqual([]);
  });

  it('fits a phone without sideways scrolling, and keeps still when motion is reduced', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await screenshot('phone');
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      const animation = () =>
        page.evaluate(() => {
          const row = document.createElement('li');
          row.className = 'step request fresh';
          document.getElementById('diagram')?.append(row);
          const name = getComputedStyle(row).animationName;
          row.remove();
          return name;
        });
      expect(await animation()).toBe('arrive');
      await page.emulateMedia({ reducedMotion: 'reduce' });
      expect(await animation()).toBe('none');
    } finally {
      await page.emulateMedia({ reducedMotion: null });
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('"Run the write-up" plays the four policies and ends on the 4 / 2 / 1 / 1 table', async () => {
    await page.locator('#write-up[aria-disabled="false"]').waitFor({ timeout: CHECKOUT_BOUND_MS });
    await page.getByRole('button', { name: 'Run the write-up' }).click();
    await page
      .locator('#write-up-section[data-phase="done"], #write-up-section[data-phase="failed"]')
      .waitFor({ timeout: WRITE_UP_BOUND_MS });
    await screenshot('write-up');
    const rows = await page
      .locator('#write-up-rows tr')
      .evaluateAll((trs) =>
        trs.map((tr) => ({ policy: tr.querySelector('th')?.textContent, charges: Number(tr.querySelectorAll('td')[0]?.textContent) })),
      );
    expect(rows).toEqual([
      { policy: 'none', charges: 4 },
      { policy: 'per-attempt', charges: 2 },
      { policy: 'propagated', charges: 1 },
      { policy: 'fingerprint', charges: 1 },
    ]);
  });
});
