/**
 * A value's page in the console, in a real browser (Chromium through playwright-core) against the local
 * server: a value claimed, released and claimed again shows its two holdings newest first (the claim,
 * the owner, from → until or now, how it ended), the pool's page links to it from its allocation objects
 * and its map, a value never held says so, a malformed one shows the API's error, and a value held more
 * often than a page pages with "Older holdings". `UPDATE_DOCS=1` also writes the screenshot
 * docs/console.md shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { LocalAllot } from '../../lib/local/server.ts';
import { claim, client, indexPool, startTestAllot } from '../helpers/allot.ts';
import { browserMissing, docsShot, launchBrowser, readerText, type TestBrowser } from '../helpers/browser.ts';

const TIMEOUT = 90_000;
const POOL = { kind: 'IndexPool', name: 'vlan-history' };
/** Holdings a page on a value's page (lib/console/app/views/value.ts, HISTORY_PAGE). */
const HISTORY_PAGE = 25;

describe.skipIf(browserMissing !== undefined && process.env.CI !== 'true')(
  "a value's holdings in the console",
  () => {
    let allot: LocalAllot;
    let browser: TestBrowser;
    let page: Page;
    let api: ReturnType<typeof client>;

    beforeAll(async () => {
      if (browserMissing) throw new Error(`CI=true needs the browser tests to run: ${browserMissing}`);
      allot = await startTestAllot();
      api = client(allot.url);
      browser = await launchBrowser();
      page = await browser.context.newPage();
      page.on('pageerror', (error) => {
        throw error;
      });
    }, TIMEOUT);

    afterAll(async () => {
      await browser?.close();
      await allot?.close();
    });

    const shot = (name: string) => docsShot(page, name);

    /** Waits for a page to show something: the console polls every 2 s and the stream lags a little. */
    const poll = <T>(check: () => Promise<T> | T) => expect.poll(check, { timeout: 15_000, interval: 100 });
    const textOf = readerText;
    /** A value's holdings as the API answers them: [claim name or null, ended or null], newest first. */
    const history = async (value: number) => {
      const answer = await api.get(`indexpools/vlan-history/history?value=${value}&limit=100`);
      expect(answer.status).toBe(200);
      return (answer.body.items as any[]).map((h) => [h.claim?.name ?? null, h.ended ?? null]);
    };
    const holdings = () => page.getByRole('list', { name: /^Holdings of / }).getByRole('listitem');

    it(
      'shows a value claimed, released and claimed again as two holdings, newest first, reached from the pool',
      async () => {
        expect((await api.post('indexpools', indexPool('vlan-history', ['100..109']))).status).toBe(201);
        const first = await api.post(
          'claims',
          claim('first-holder', POOL, { value: 105, owner: { kind: 'VirtualMachine', name: 'vm-a' } }),
        );
        expect(first.status).toBe(201);
        expect((await api.delete('claims/first-holder')).status).toBe(200);
        expect((await api.post('claims', claim('second-holder', POOL, { value: 105 }))).status).toBe(201);
        // the history function has read both records
        await poll(() => history(105)).toEqual([
          ['second-holder', null],
          ['first-holder', 'Released'],
        ]);

        // The pool's page links the value from its allocation objects and from its map.
        await page.goto(`${allot.url}/#/ns/default/pools/indexpools/vlan-history`);
        await page.getByRole('heading', { name: /vlan-history/ }).waitFor();
        const valueHref = '#/ns/default/pools/indexpools/vlan-history/values/105';
        const cell = page.locator('.cells button[data-within="105"]');
        await poll(() => cell.getAttribute('class')).toContain('full');
        await cell.click();
        const fromMap = page.locator('.picked').getByRole('link', { name: 'Who held 105 when' });
        expect(await fromMap.getAttribute('href')).toBe(valueHref);
        const row = page.getByRole('row', { name: /vlan-history-105/ });
        await row.getByRole('link', { name: '105', exact: true }).click();

        await page.getByRole('heading', { name: /105 in vlan-history/ }).waitFor();
        expect(page.url()).toContain(valueHref);
        await poll(() => holdings().count()).toBe(2);
        const [now, before] = [holdings().nth(0), holdings().nth(1)];
        expect(await textOf(now.getByRole('heading'))).toBe('default/second-holder');
        expect(await textOf(now)).toMatch(/Held now .* → now \(so far /);
        expect(await textOf(before.getByRole('heading'))).toBe('default/first-holder');
        expect(await textOf(before)).toMatch(/Released .* → .*the claim was released/);
        expect(await textOf(before)).toContain('Owner VirtualMachine vm-a');
        expect(await textOf(before)).toContain('Object vlan-history-105');
        // an ended holding's claim is gone: named, not linked; the one that lasts opens its claim
        expect(await before.getByRole('link').count()).toBe(0);
        expect(await now.getByRole('link', { name: 'default/second-holder' }).getAttribute('href')).toBe(
          '#/ns/default/claims/second-holder',
        );
        // the times are the API's, to the millisecond
        const items = (await api.get('indexpools/vlan-history/history?value=105')).body.items;
        expect(await before.locator('time').nth(0).getAttribute('datetime')).toBe(items[1].from);
        expect(await before.locator('time').nth(1).getAttribute('datetime')).toBe(items[1].until);
        expect(await page.getByRole('button', { name: 'Older holdings' }).count()).toBe(0);
        await shot('value-history');

        // A release shows by itself, as every page is polled.
        expect((await api.delete('claims/second-holder')).status).toBe(200);
        await poll(() => textOf(holdings().nth(0))).toMatch(/^default\/second-holder Released/);
      },
      TIMEOUT,
    );

    it(
      'says so of a value never held, and shows the API’s error for a malformed one',
      async () => {
        await page.goto(`${allot.url}/#/ns/default/pools/indexpools/vlan-history/values/101`);
        await poll(() => textOf(page.locator('main'))).toContain('Nothing has held 101 in vlan-history');
        expect(await page.getByRole('list', { name: /^Holdings of / }).count()).toBe(0);
        await page.goto(`${allot.url}/#/ns/default/pools/indexpools/vlan-history/values/not-a-vlan`);
        await poll(() => textOf(page.getByRole('alert'))).toMatch(/^400 /);
      },
      TIMEOUT,
    );

    it(
      'pages through a value held more often than a page, with "Older holdings"',
      async () => {
        const times = HISTORY_PAGE + 1;
        for (let i = 0; i < times; i++) {
          expect((await api.post('claims', claim(`often-${i}`, POOL, { value: 107 }))).status).toBe(201);
          // A released value is freed a moment after the release answers: the claim waits (ValueTaken)
          // until it is, and is released only once it holds the value.
          await poll(async () => (await api.get(`claims/often-${i}`)).body.status?.value).toBe('107');
          if (i < times - 1) expect((await api.delete(`claims/often-${i}`)).status).toBe(200);
        }
        await poll(async () => (await history(107)).length).toBe(times);
        await page.goto(`${allot.url}/#/ns/default/pools/indexpools/vlan-history/values/107`);
        await poll(() => holdings().count()).toBe(HISTORY_PAGE);
        expect(await textOf(holdings().nth(0).getByRole('heading'))).toBe(`default/often-${times - 1}`);
        await page.getByRole('button', { name: 'Older holdings' }).click();
        await poll(() => holdings().count()).toBe(times);
        expect(
          await textOf(
            holdings()
              .nth(times - 1)
              .getByRole('heading'),
          ),
        ).toBe('default/often-0');
        expect(await page.getByRole('button', { name: 'Older holdings' }).count()).toBe(0);
      },
      TIMEOUT,
    );
  },
);
