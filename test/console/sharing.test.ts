/**
 * A pool shared with other namespaces, in the console in a real browser (Chromium through playwright-core)
 * against the local server: an operator creates a pool in `infra` shared with `acme` (at most 2 values)
 * and `globex`; the tenant `acme` sees it among its pools with its own usage and limit, claims from it
 * through the form until its limit makes a claim wait `QuotaExceeded`; the operator sees each holder with
 * its namespace. `UPDATE_DOCS=1` also writes the screenshots docs/console.md shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { LocalAllot } from '../../lib/local/server.ts';
import { claim, client, startTestAllot } from '../helpers/allot.ts';
import { browserMissing, docsShot, launchBrowser, readerText, type TestBrowser } from '../helpers/browser.ts';

const TIMEOUT = 90_000;

describe.skipIf(browserMissing !== undefined && process.env.CI !== 'true')(
  'a shared pool in the console',
  () => {
    let allot: LocalAllot;
    let browser: TestBrowser;
    let page: Page;

    beforeAll(async () => {
      if (browserMissing) throw new Error(`CI=true needs the browser tests to run: ${browserMissing}`);
      allot = await startTestAllot();
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
    const open = (hash: string) => page.goto(`${allot.url}/${hash}`);
    const claimButton = () => page.getByRole('button', { name: 'Claim', exact: true });
    const result = () => page.locator('#claim-result');

    it(
      'creates a pool shared with other namespaces from the form, its limit a field error until it is a number',
      async () => {
        await open('#/ns/infra/new');
        await page.getByLabel('Name', { exact: true }).fill('fip');
        await page.getByLabel('Ranges').fill('100..109');
        const sharedWith = page.getByLabel('Shared with (optional)');
        await sharedWith.fill('acme two\nglobex');
        await page.getByRole('button', { name: 'Create IndexPool' }).click();
        await poll(() => sharedWith.getAttribute('aria-invalid')).toBe('true');
        expect(await textOf(page.locator('#pool-shared-error'))).toMatch(/must be an integer/);
        await sharedWith.fill('acme 2\nglobex');
        await page.getByRole('button', { name: 'Create IndexPool' }).click();
        await page.getByRole('heading', { name: /fip/ }).waitFor();
        expect(page.url()).toContain('#/ns/infra/pools/indexpools/fip');

        const api = client(allot.url, 'infra');
        expect((await api.get('indexpools/fip')).body.spec.sharedWith).toEqual([
          { namespace: 'acme', maxAllocations: 2 },
          { namespace: 'globex' },
        ]);
        // The owner's page: whom it is shared with, each entry with its limit, and each one's holdings.
        const card = page.locator('.card', { has: page.getByRole('heading', { name: 'Shared with' }) });
        expect(
          await card.getByRole('list', { name: 'Shared with' }).getByRole('listitem').allTextContents(),
        ).toEqual(['acme (max 2)', 'globex']);
        const held = card.getByRole('table', { name: 'Held by namespace' });
        await poll(() => textOf(held.locator('tbody'))).toBe('acme 0 of 2 globex 0 (no limit)');
        // sharedWith is shown in its card, not as [object Object] among the spec's fields
        expect(await textOf(page.locator('dl.spec'))).not.toContain('sharedWith');
      },
      TIMEOUT,
    );

    it(
      "lists the pool among a tenant's pools, apart from its own, with its own usage and limit",
      async () => {
        // Another tenant holds one value: the pool's free count falls, acme's holdings do not rise.
        const globex = client(allot.url, 'globex');
        const made = await globex.post(
          'claims',
          claim('db', { kind: 'IndexPool', name: 'fip', namespace: 'infra' }),
        );
        expect(made.body.status?.value, JSON.stringify(made.body)).toBe('100');
        await open('#/ns/acme');
        const shared = page.getByRole('table', { name: 'Pools shared with acme' });
        const row = shared.getByRole('row', { name: /fip/ });
        // NAMESPACE NAME KIND HELD LIMIT FREE AVAILABLE, as the CLI shows them (the bar's percentage between)
        await poll(() => textOf(row)).toMatch(/^infra fip IndexPool \d+% 0 2 9 True HasCapacity Claim$/);
        expect(await row.getByRole('img').getAttribute('aria-label')).toBe(
          'infra/fip: 1 of 10 allocated (10%)',
        );
        expect(await page.getByRole('heading', { name: /Shared with acme/ }).count()).toBe(1);
        // acme has no pools of its own: the shared one is not among them
        expect(await page.getByRole('table', { name: 'Pools in acme' }).count()).toBe(0);
        // the filters apply to it as to its own pools
        await page.getByLabel('Kind').selectOption('IPAddressPool');
        await poll(() => shared.locator('tbody tr').count()).toBe(0);
        await page.getByLabel('Kind').selectOption('');
        await poll(() => shared.locator('tbody tr').count()).toBe(1);
        // a namespace it is not shared with sees nothing of it
        await open('#/ns/initech');
        await page.getByText('No pools in initech yet.').waitFor();
        expect(await page.getByRole('table', { name: /shared with/i }).count()).toBe(0);
      },
      TIMEOUT,
    );

    it(
      'claims from it through the form until the limit, where a claim waits QuotaExceeded as for any reason',
      async () => {
        await open('#/ns/acme');
        await page.getByRole('link', { name: 'Claim from infra/fip' }).click();
        await page.getByRole('heading', { name: /fip.*shared by infra/ }).waitFor();
        expect(page.url()).toContain('#/ns/acme/shared/infra/indexpools/fip');

        await page.getByLabel('Claim name').fill('web');
        await claimButton().click();
        await poll(() => textOf(result())).toMatch(/^claim\/web: 10[1-9]$/);
        await page.getByLabel('Claim name').fill('vpn');
        await claimButton().click();
        await poll(() => textOf(result())).toMatch(/^claim\/vpn: 10[1-9]$/);
        await page.getByLabel('Claim name').fill('cache');
        await claimButton().click();
        await poll(() => textOf(result())).toMatch(/^claim\/cache: waits \(QuotaExceeded: .*maxAllocations/);

        const acme = client(allot.url, 'acme');
        const web = (await acme.get('claims/web')).body;
        expect(web.spec.poolRef).toEqual({ kind: 'IndexPool', name: 'fip', namespace: 'infra' });
        expect(web.status.allocationRef.namespace).toBe('infra');
        // The tenant's share: 2 of its 2, and its claims on the pool.
        await poll(() => textOf(page.locator('dl.counts').first())).toBe('Held 2 Limit 2');
        const claims = page.locator('section', {
          has: page.getByRole('heading', { name: /Claims of acme/ }),
        });
        await poll(() => claims.locator('tbody tr').count()).toBe(3);
        await shot('shared-claim');

        await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Pools' }).click();
        await poll(() => textOf(page.getByRole('row', { name: /fip/ }))).toMatch(
          /^infra fip IndexPool \d+% 2 2 7 True HasCapacity Claim$/,
        );
        await shot('shared-pools');

        // The claims list names the pool with its namespace; the waiting claim shows its reason.
        await page
          .getByRole('navigation', { name: 'Sections' })
          .getByRole('link', { name: 'Claims' })
          .click();
        const webRow = page.getByRole('row', { name: /^web / });
        await poll(() => textOf(webRow)).toMatch(/^web infra\/fip 10\d True Allocated/);
        const cacheRow = page.getByRole('row', { name: /^cache / });
        await poll(() => textOf(cacheRow)).toMatch(/^cache infra\/fip – False QuotaExceeded/);
        expect(await webRow.getByRole('link', { name: 'infra/fip' }).getAttribute('href')).toBe(
          '#/ns/acme/shared/infra/indexpools/fip',
        );

        // The waiting claim's page: its pool and its condition.
        await cacheRow.getByRole('link', { name: 'cache', exact: true }).click();
        await page.getByRole('heading', { name: /cache/ }).waitFor();
        expect(await textOf(page.locator('.card', { hasText: 'Pool:' }).first())).toContain(
          'Pool: infra/fip IndexPool',
        );
        await poll(() => textOf(page.getByRole('table'))).toMatch(
          /Allocated False QuotaExceeded .*maxAllocations/,
        );

        // An allocated one is held by an object in the pool's namespace.
        await open('#/ns/acme/claims/web');
        const heldBy = page.getByRole('link', { name: /^Index infra\/fip-10\d$/ });
        await heldBy.waitFor();
        expect(await heldBy.getAttribute('href')).toMatch(/^#\/ns\/infra\/allocations\/indices\/fip-10\d$/);
      },
      TIMEOUT,
    );

    it(
      "shows the operator each holder with its namespace, and a release wakes the tenant's waiting claim",
      async () => {
        await open('#/ns/infra/pools/indexpools/fip');
        const held = page.getByRole('table', { name: 'Held by namespace' });
        await poll(() => textOf(held.locator('tbody'))).toBe('acme 2 of 2 globex 1 (no limit)');
        const objects = page.locator('section', {
          has: page.getByRole('heading', { name: 'Index objects' }),
        });
        await poll(() => objects.locator('tbody tr').count()).toBe(3);
        expect(await textOf(objects.locator('tbody'))).toMatch(/fip-100 Index 100 bound globex\/db/);
        for (const name of ['acme/web', 'acme/vpn', 'globex/db'])
          expect(await objects.getByRole('link', { name, exact: true }).count()).toBe(1);
        await shot('shared-pool');
        // The operator's pools list: whom each pool is shared with.
        await open('#/ns/infra');
        const row = page.getByRole('table', { name: 'Pools in infra' }).getByRole('row', { name: /fip/ });
        await poll(() => textOf(row)).toMatch(/ acme \(max 2\), globex True HasCapacity$/);
        expect(await textOf(page.locator('table.list thead'))).toContain('Shared with Available');

        // The allocation objects of infra: a holder's claim opens in its own namespace.
        await page
          .getByRole('navigation', { name: 'Sections' })
          .getByRole('link', { name: 'Allocations' })
          .click();
        await page.getByRole('searchbox', { name: 'Filter' }).fill('acme/');
        await poll(() => page.locator('main tbody tr').count()).toBe(2);
        await page.getByRole('link', { name: 'acme/web', exact: true }).click();
        await page.getByRole('heading', { name: /web/ }).waitFor();
        expect(page.url()).toContain('#/ns/acme/claims/web');

        // Released from the tenant's claims list, its place goes to the claim that waited.
        await page
          .getByRole('navigation', { name: 'Sections' })
          .getByRole('link', { name: 'Claims' })
          .click();
        await page.getByRole('button', { name: 'Release web' }).click();
        await page.getByRole('button', { name: 'Confirm: release web' }).click();
        await poll(() => page.getByRole('link', { name: 'web', exact: true }).count()).toBe(0);
        await poll(() => textOf(page.getByRole('row', { name: /^cache / }))).toMatch(
          /^cache infra\/fip 10\d True Allocated/,
        );
      },
      TIMEOUT,
    );
  },
);
