/**
 * The console in a real browser (Chromium through playwright-core) against the local server: every
 * page and action, a field's validation error, the map of a /16 and of a 2^32 index pool, and a claim
 * made from the CLI showing up by itself. `UPDATE_DOCS=1` also writes the screenshots docs/console.md
 * shows.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { run } from '../../lib/cli/main.ts';
import { startSigningProxy } from '../../lib/cli/proxy.ts';
import { consoleAssets, serveConsole } from '../../lib/console/serve.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { claim, client, indexPool, startTestAllot } from '../helpers/allot.ts';
import { browserMissing, launchBrowser, type TestBrowser } from '../helpers/browser.ts';
import { startVerifier, VERIFIER_CREDENTIALS, VERIFIER_REGION } from '../helpers/sigv4-verifier.ts';

const UPDATE_DOCS = process.env.UPDATE_DOCS === '1';
const SHOTS = 'docs/console';
const TIMEOUT = 90_000;

if (browserMissing && process.env.CI !== 'true') {
  console.warn(`browser tests skipped: ${browserMissing}`);
}

describe('docs/console.md', () => {
  it('shows every screenshot the browser tests take, and each is there', () => {
    const source = readdirSync('test/console')
      .filter((file) => file.endsWith('.test.ts'))
      .map((file) => readFileSync(`test/console/${file}`, 'utf8'))
      .join('\n');
    const taken = [...source.matchAll(/await shot\('([\w-]+)'/g)].map((m) => m[1]).sort();
    const shown = [...readFileSync('docs/console.md', 'utf8').matchAll(/\]\(console\/([\w-]+)\.png\)/g)]
      .map((m) => m[1])
      .sort();
    expect(taken.length).toBeGreaterThan(5);
    expect(shown).toEqual(taken);
    for (const name of shown) expect(existsSync(`${SHOTS}/${name}.png`), name).toBe(true);
  });
});

describe.skipIf(browserMissing !== undefined && process.env.CI !== 'true')('the console in Chromium', () => {
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

  /** A screenshot for docs/console.md, written only when UPDATE_DOCS=1. */
  async function shot(name: string, target: Page = page) {
    if (!UPDATE_DOCS) return;
    mkdirSync(SHOTS, { recursive: true });
    await target.evaluate('document.activeElement?.blur()'); // no focus ring in the docs
    await target.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true, animations: 'disabled' });
  }

  /** Waits for a page to show something: the console polls every 2 s and the stream lags a little. */
  const poll = <T>(check: () => Promise<T> | T) => expect.poll(check, { timeout: 15_000, interval: 100 });
  /** A locator's text with its whitespace runs made single spaces, as a reader sees it. */
  const textOf = async (locator: ReturnType<Page['locator']>) =>
    ((await locator.textContent()) ?? '').replace(/\s+/g, ' ');
  const cell = (within: string) => page.locator(`.cells button[data-within="${within}"]`);

  it(
    'serves one small bundle at / that loads nothing from elsewhere',
    async () => {
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      await page.goto(`${allot.url}/`);
      await poll(() => page.getByRole('heading', { name: /Pools/ }).count()).toBe(1);
      expect(requests.every((url) => url.startsWith(allot.url))).toBe(true);
      const { gzippedBytes } = await consoleAssets();
      console.log(`[console] bundle: ${(gzippedBytes / 1024).toFixed(1)} KB gzipped (page and script)`);
      expect(gzippedBytes).toBeLessThan(150 * 1024);
    },
    TIMEOUT,
  );

  it(
    'lists pools with kind, use and availability, and loads the seed example from an empty namespace',
    async () => {
      await page.getByRole('button', { name: 'Load the seed example' }).click();
      const row = page.getByRole('row', { name: /asn-pool/ });
      await row.waitFor();
      await poll(() => row.textContent()).toMatch(/IndexPool.*\b\d+\b.*95\.0M.*True/s);
      await poll(() => row.getByRole('img').getAttribute('aria-label')).toMatch(
        /asn-pool: \d+ of 94968318 allocated/,
      );
    },
    TIMEOUT,
  );

  it(
    'creates pools from pasted YAML: the seed manifests paste unchanged',
    async () => {
      await page.getByRole('link', { name: 'New pool' }).click();
      await page.getByRole('tab', { name: 'Paste YAML or JSON' }).click();
      await page.getByLabel('Manifests').fill(readFileSync('docs/examples/ip-pools.yaml', 'utf8'));
      await page.getByRole('button', { name: 'Apply' }).click();
      const applied = page.getByRole('list', { name: 'What was applied' });
      await poll(() => applied.textContent()).toMatch(
        /ipaddresspool\/public-zone-a created.*ipaddresspool\/vpc-main created.*ipprefixpool\/v6-subnets created/s,
      );
    },
    TIMEOUT,
  );

  it(
    'shows a validation error at the field it names, then creates the pool',
    async () => {
      await page.getByRole('tab', { name: 'Form' }).click();
      await page.getByLabel('Name', { exact: true }).fill('vlans');
      await page.getByLabel('Ranges').fill('100..200\n150..250');
      await page.getByRole('button', { name: 'Create IndexPool' }).click();
      const ranges = page.getByLabel('Ranges');
      await poll(() => ranges.getAttribute('aria-invalid')).toBe('true');
      const error = page.locator('#pool-ranges-error');
      expect(await error.textContent()).toMatch(/overlaps with spec\.ranges\[0\] \(100\.\.200\)/);
      expect(await ranges.getAttribute('aria-describedby')).toContain('pool-ranges-error');
      expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('false');
      await shot('field-error');
      await ranges.fill('100..199');
      await page.getByRole('button', { name: 'Create IndexPool' }).click();
      await page.getByRole('heading', { name: /vlans/ }).waitFor();
      expect(page.url()).toContain('/pools/indexpools/vlans');
    },
    TIMEOUT,
  );

  it(
    'filters pools by name, kind and availability',
    async () => {
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Pools' }).click();
      await page.getByRole('row', { name: /vpc-main/ }).waitFor();
      await page.getByLabel('Kind').selectOption('IPAddressPool');
      await poll(() => page.getByRole('row', { name: /asn-pool/ }).count()).toBe(0);
      expect(await page.getByRole('row', { name: /public-zone-a/ }).count()).toBe(1);
      await page.getByLabel('Kind').selectOption('');
      await page.getByLabel('Name', { exact: true }).fill('v6');
      await poll(() => page.locator('tbody tr').count()).toBe(1);
      await page.getByLabel('Name', { exact: true }).fill('');
      await page.getByLabel('Availability').selectOption('exhausted');
      await poll(() => page.locator('tbody tr').count()).toBe(0);
      await page.getByLabel('Availability').selectOption('');
      await poll(() => page.locator('tbody tr').count()).toBe(5);
      await shot('pools');
    },
    TIMEOUT,
  );

  it(
    'claims the next free value, a given value and one within a range, and shows field errors',
    async () => {
      await page.getByRole('link', { name: 'asn-pool' }).click();
      await page.getByRole('heading', { name: /asn-pool/ }).waitFor();
      const result = page.locator('#claim-result');

      await page.getByLabel('Claim name').fill('spine1-asn');
      await page.getByRole('button', { name: 'Claim', exact: true }).click();
      await poll(() => textOf(result)).toMatch(/claim\/spine1-asn: \d{5}/);

      await page.getByLabel('this value').check();
      await page.getByLabel('Claim name').fill('spine2-asn');
      await page.getByLabel('Value', { exact: true }).fill('64600');
      await page.getByRole('button', { name: 'Claim', exact: true }).click();
      await poll(() => textOf(result)).toMatch(/claim\/spine2-asn: 64600/);

      await page.getByLabel('within').check();
      await page.getByLabel('Claim name').fill('spine3-asn');
      await page.getByLabel('Within (a..b)').fill('65100..65110');
      await page.getByRole('button', { name: 'Claim', exact: true }).click();
      await poll(() => textOf(result)).toMatch(/claim\/spine3-asn: 6510\d|claim\/spine3-asn: 65110/);
      await shot('claim');

      await page.getByLabel('Claim name').fill('spine4-asn');
      await page.getByLabel('Within (a..b)').fill('65110..65100');
      await page.getByRole('button', { name: 'Claim', exact: true }).click();
      const within = page.getByLabel('Within (a..b)');
      await poll(() => within.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#claim-within-error').textContent()).toMatch(/starts after it ends/);

      await page.getByLabel('Claim name').fill('Not_A_Name');
      await within.fill('65100..65110');
      await page.getByRole('button', { name: 'Claim', exact: true }).click();
      await poll(() => page.getByLabel('Claim name').getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator('#claim-name-error').textContent()).toMatch(/lowercase/);
      expect((await api.get('claims/spine4-asn')).status).toBe(404);
    },
    TIMEOUT,
  );

  it(
    'releases a claim after a confirming second press',
    async () => {
      const row = page
        .getByRole('row')
        .filter({ has: page.getByRole('button', { name: 'Release spine2-asn' }) });
      await row.waitFor();
      await row.getByRole('button', { name: 'Release spine2-asn' }).click();
      await row.getByRole('button', { name: 'Confirm: release spine2-asn' }).click();
      await poll(() => page.getByRole('link', { name: 'spine2-asn', exact: true }).count()).toBe(0);
      expect((await api.get('claims/spine2-asn')).status).toBe(404);
    },
    TIMEOUT,
  );

  it(
    'shows a claim made from the CLI within seconds, by itself',
    async () => {
      const out: string[] = [];
      const code = await run(['claim', 'cli-made', '--pool', 'indexpool/asn-pool', '--endpoint', allot.url], {
        out: (line) => out.push(line),
        err: (line) => out.push(line),
        readStdin: async () => '',
        env: {},
      });
      expect(code, out.join('\n')).toBe(0);
      await page.getByRole('link', { name: 'cli-made', exact: true }).first().waitFor({ timeout: 10_000 });
    },
    TIMEOUT,
  );

  it(
    'draws an index pool as runs, one per range',
    async () => {
      const maps = page.locator('figure.run-map');
      await poll(() => maps.count()).toBe(2);
      expect(await maps.nth(0).locator('figcaption').textContent()).toContain('64512..65534');
      expect(await maps.nth(1).locator('figcaption').textContent()).toContain('4200000000..4294967294');
      const first = maps.nth(0).locator('.cells button').first();
      await poll(() => first.getAttribute('aria-label')).toMatch(/^64512\.\.64527: [1-9]\d* of 16 held/);
    },
    TIMEOUT,
  );

  it(
    "shows a lease's end and renews it with a press",
    async () => {
      const made = await api.post(
        'claims',
        claim('lease-web', { kind: 'IndexPool', name: 'asn-pool' }, { leaseSeconds: 3600 }),
      );
      expect(made.status).toBe(201);
      await page.goto(`${allot.url}/#/ns/default/claims`);
      const row = page
        .getByRole('row')
        .filter({ has: page.getByRole('button', { name: 'Renew lease-web' }) });
      await row.waitFor();
      await poll(async () => textOf(row.locator('time'))).toMatch(/^in (60m|1h)$/);
      await page.goto(`${allot.url}/#/ns/default/claims/lease-web`);
      await poll(async () => textOf(page.locator('.card', { hasText: 'Lease ends' }))).toContain(
        made.body.status.leaseExpiresAt,
      );
      // Ends are whole seconds (rounded up): once the clock is past the end's second less the lease, a
      // renewal moves the end.
      const takenBy = Date.parse(made.body.status.leaseExpiresAt) - 3600_000;
      await poll(() => Date.now()).toBeGreaterThan(takenBy);
      await page.getByRole('button', { name: 'Renew lease-web' }).click();
      await poll(async () => (await api.get('claims/lease-web')).body.status.leaseExpiresAt).not.toBe(
        made.body.status.leaseExpiresAt,
      );
      const renewed = (await api.get('claims/lease-web')).body.status.leaseExpiresAt;
      await poll(async () => textOf(page.locator('.card', { hasText: 'Lease ends' }))).toContain(renewed);
      await api.delete('claims/lease-web');
    },
    TIMEOUT,
  );

  it(
    'maps a /16 as 256 /24 cells, marks excluded addresses, and opens a cell to its addresses',
    async () => {
      for (const [name, owner] of [
        ['web-1', 'web-01'],
        ['web-2', 'web-01'],
        ['db-1', 'db-01'],
      ] as const) {
        const answer = await api.post(
          'claims',
          claim(
            name,
            { kind: 'IPAddressPool', name: 'vpc-main' },
            { within: '10.42.1.0/24', owner: { kind: 'VirtualMachine', name: owner } },
          ),
        );
        expect(answer.status).toBe(201);
      }
      await page.goto(`${allot.url}/#/ns/default/pools/ipaddresspools/vpc-main`);
      await poll(() => page.locator('.cells button').count()).toBe(256);
      await poll(() => cell('10.42.1.0/24').getAttribute('aria-label')).toBe('10.42.1.0/24: 3 of 256 held');
      // network and broadcast are left out: the first and last cells have one address fewer
      expect(await cell('10.42.0.0/24').getAttribute('aria-label')).toBe(
        '10.42.0.0/24: 0 of 255 held, 1 excluded',
      );
      expect(await cell('10.42.255.0/24').getAttribute('class')).toContain('excluded-some');
      await shot('map-ipv4-16');

      await cell('10.42.1.0/24').click();
      await poll(() => page.locator('.cells button').count()).toBe(256);
      expect(page.url()).toContain('within=10.42.1.0%2F24');
      await poll(() => cell('10.42.1.1/32').getAttribute('class')).toContain('full');
      await cell('10.42.1.1/32').click();
      const picked = page.locator('.picked');
      await poll(() => textOf(picked)).toMatch(
        /10\.42\.1\.1 is held by vpc-main-10-42-1-1\s+\(claim\s+web-1\)/,
      );
      await shot('map-ipv4-24');

      // the keyboard: one tab stop, arrows move, Enter opens
      await cell('10.42.1.1/32').focus();
      await page.keyboard.press('ArrowDown');
      expect(await page.locator(':focus').getAttribute('data-within')).toBe('10.42.1.17/32');
      await page.keyboard.press('Enter');
      await poll(() => textOf(picked)).toMatch(/10\.42\.1\.17 is free/);
      expect(await page.locator('.cells button[tabindex="0"]').count()).toBe(1);
      await picked.getByRole('button', { name: 'Claim 10.42.1.17' }).click();
      await page.getByLabel('Claim name').fill('web-3');
      await page.getByRole('button', { name: 'Claim', exact: true }).click();
      await poll(() => textOf(page.locator('#claim-result'))).toMatch(/claim\/web-3: 10\.42\.1\.17/);
      await poll(() => cell('10.42.1.17/32').getAttribute('class')).toContain('full');
    },
    TIMEOUT,
  );

  it(
    'maps a 2^32 index pool in 64 cells and opens one',
    async () => {
      expect((await api.post('indexpools', indexPool('vni-space', ['0..4294967295']))).status).toBe(201);
      expect(
        (
          await api.post(
            'claims',
            claim('vni-1', { kind: 'IndexPool', name: 'vni-space' }, { value: 3000000000 }),
          )
        ).status,
      ).toBe(201);
      await page.goto(`${allot.url}/#/ns/default/pools/indexpools/vni-space`);
      await poll(() => page.locator('.cells button').count()).toBe(64);
      const bucket = cell('2952790016..3019898879');
      await poll(() => bucket.getAttribute('aria-label')).toBe('2952790016..3019898879: 1 of 67.1M held');
      await shot('map-index-2-32');
      await bucket.click();
      await poll(() => cell('2998927360..2999975935').getAttribute('aria-label')).toBe(
        '2998927360..2999975935: 0 of 1.05M held',
      );
      await poll(() => cell('2999975936..3001024511').getAttribute('aria-label')).toBe(
        '2999975936..3001024511: 1 of 1.05M held',
      );
    },
    TIMEOUT,
  );

  it(
    'shows a quarantining pool’s quarantined count, and draws quarantined values apart in its map',
    async () => {
      const pool = { kind: 'IndexPool', name: 'quiet-vlans' };
      expect(
        (await api.post('indexpools', indexPool('quiet-vlans', ['3000..3255'], { quarantineSeconds: 300 })))
          .status,
      ).toBe(201);
      const kept = await api.post('claims', claim('quiet-keep', pool, { value: 3001 }));
      expect(kept.status).toBe(201);
      const freed = await api.post('claims', claim('quiet-gone', pool, { value: 3000 }));
      expect(freed.status).toBe(201);
      expect((await api.delete('claims/quiet-gone')).status).toBe(200);
      await poll(async () => (await api.get('indexpools/quiet-vlans')).body.status.quarantined).toBe('1');

      // The pools list gains a Quarantined column, as there is a pool that quarantines.
      await page.goto(`${allot.url}/#/ns/default/pools`);
      const row = page.locator('table.list tr', { has: page.locator('a', { hasText: /^quiet-vlans$/ }) });
      await poll(() => textOf(row)).toMatch(/quiet-vlans IndexPool .* 1 256 254 1 /);
      expect(await textOf(page.locator('table.list thead'))).toContain('Free Quarantined Available');

      await page.goto(`${allot.url}/#/ns/default/pools/indexpools/quiet-vlans`);
      // held is 2 (one object, one quarantine), so free is 256 − 2; the quarantined one is not allocated
      await poll(() => textOf(page.locator('dl.counts'))).toMatch(
        /Allocated 1 Total 256 Free 254 Quarantined 1/,
      );
      await poll(() => page.locator('.cells button').count()).toBe(64);
      const bucket = cell('3000..3003');
      await poll(() => bucket.getAttribute('aria-label')).toBe(
        '3000..3003: 2 of 4 held, 1 of them quarantined',
      );
      expect(await bucket.getAttribute('title')).toBe('3000..3003: 2 of 4 held, 1 of them quarantined');
      expect(await bucket.getAttribute('class')).toMatch(/\bpartial\b.*\bquarantined\b/);
      // only the bucket that holds a quarantine is drawn so
      expect(await page.locator('.cells button.quarantined').count()).toBe(1);
      expect(await textOf(page.locator('figure.run-map figcaption'))).toContain(
        '2 of 256 held (<1%), 1 of them quarantined',
      );
      expect(await textOf(page.locator('figure.run-map .legend'))).toContain('quarantined');
      // The quarantined segment has a colour of its own (style.css --quarantined), not the held one.
      // (the page's getComputedStyle: the tests' types have no DOM)
      type Styles = { getComputedStyle(element: unknown): { backgroundImage: string } };
      const image = (within: string) =>
        cell(within).evaluate(
          (element) => (globalThis as unknown as Styles).getComputedStyle(element).backgroundImage,
        );
      expect(await image('3000..3003')).toContain('rgb(191, 135, 0)');
      expect(await image('3004..3007')).not.toContain('rgb(191, 135, 0)');

      // opened to single values: the quarantined one says so, the held one who holds it
      await bucket.click();
      await poll(() => cell('3000').getAttribute('aria-label')).toBe(
        '3000: 1 of 1 held, 1 of them quarantined',
      );
      expect(await cell('3000').getAttribute('class')).toMatch(/\bfull\b.*\bquarantined\b/);
      expect(await cell('3001').getAttribute('class')).not.toContain('quarantined');
      expect(await image('3000')).toContain('rgb(191, 135, 0)');
      expect(await image('3001')).not.toContain('rgb(191, 135, 0)');
      await cell('3000').click();
      await poll(() => textOf(page.locator('.picked'))).toMatch(
        /3000 is quarantined: it was freed less than 300s ago/,
      );

      // a pool that does not quarantine shows no such count
      expect((await api.post('indexpools', indexPool('loud-vlans', ['10..19']))).status).toBe(201);
      await page.goto(`${allot.url}/#/ns/default/pools/indexpools/loud-vlans`);
      await poll(() => textOf(page.locator('dl.counts'))).toMatch(/Allocated 0 Total 10 Free 10/);
      expect(await page.locator('dl.counts dt', { hasText: 'Quarantined' }).count()).toBe(0);
      expect(await page.locator('.cells button.quarantined').count()).toBe(0);
    },
    TIMEOUT,
  );

  it(
    'searches by value, by name and by owner',
    async () => {
      const search = async (q: string) => {
        await page
          .getByRole('search')
          .filter({ has: page.getByRole('button', { name: 'Search' }) })
          .getByRole('searchbox')
          .fill(q);
        await page.getByRole('button', { name: 'Search' }).click();
        await poll(() => page.getByRole('status').first().textContent()).toMatch(/results? for/);
      };
      await search('10.42.1.2');
      await poll(() => page.getByRole('row', { name: /vpc-main-10-42-1-2/ }).count()).toBe(1);
      expect(await page.getByRole('row', { name: /web-2/ }).count()).toBeGreaterThan(0);
      const cliMade = (await api.get('claims/cli-made')).body.status.value as string;
      await search(cliMade);
      await poll(() => page.getByRole('row', { name: new RegExp(`asn-pool-${cliMade}`) }).count()).toBe(1);
      // the object, and the claim that holds it
      expect(await page.getByRole('row', { name: /cli-made/ }).count()).toBe(2);
      await search('4200000000');
      await poll(() => textOf(page.locator('main'))).toMatch(/Nothing in default holds or is named/);
      await search('leaf1-asn');
      await poll(() => page.getByRole('row', { name: /leaf1-asn/ }).count()).toBeGreaterThan(0);
      await search('web-01');
      await poll(() => page.locator('main tbody tr').count()).toBeGreaterThanOrEqual(4);
      expect(await page.getByRole('row', { name: /db-1/ }).count()).toBe(0);
      await shot('search');
    },
    TIMEOUT,
  );

  it(
    'lists claims and allocation objects with their state, and shows each with conditions, owner and labels',
    async () => {
      // an unbound object (pre-provisioned, no claim) and an invalid one (its pool shrank)
      expect(
        (
          await api.post('indices', {
            metadata: { name: 'spare-vlan' },
            spec: { poolRef: { kind: 'IndexPool', name: 'vlans' }, index: 150 },
          })
        ).status,
      ).toBe(201);
      expect(
        (await api.post('claims', claim('tor1-vlan', { kind: 'IndexPool', name: 'vlans' }, { value: 190 })))
          .status,
      ).toBe(201);
      const vlans = (await api.get('indexpools/vlans')).body;
      expect(
        (await api.put('indexpools/vlans', { ...vlans, spec: { ...vlans.spec, ranges: ['100..180'] } }))
          .status,
      ).toBe(200);

      await page
        .getByRole('navigation', { name: 'Sections' })
        .getByRole('link', { name: 'Allocations' })
        .click();
      await page.getByRole('row', { name: /spare-vlan/ }).waitFor();
      await page.getByLabel('State').selectOption('unbound');
      await poll(() => page.getByRole('row', { name: /spare-vlan/ }).count()).toBe(1);
      // The spare row was there before the filter too: wait until the bound one has gone.
      await poll(() => page.getByRole('link', { name: 'vpc-main-10-42-1-1', exact: true }).count()).toBe(0);
      await page.getByLabel('State').selectOption('invalid');
      await poll(() => page.locator('main tbody tr').count()).toBe(1);
      expect(await page.locator('main tbody').textContent()).toMatch(/vlans-190.*invalid.*tor1-vlan/s);
      await page.getByLabel('State').selectOption('bound');
      await poll(() => page.getByRole('link', { name: 'vpc-main-10-42-1-1', exact: true }).count()).toBe(1);
      await shot('allocations');

      await page.getByRole('link', { name: 'vpc-main-10-42-1-1', exact: true }).click();
      await page.getByRole('heading', { name: /vpc-main-10-42-1-1/ }).waitFor();
      expect(await textOf(page.locator('main'))).toMatch(
        /10\.42\.1\.1 .*Claim: web-1 .*VirtualMachine web-01/,
      );
      expect(await page.getByRole('table').textContent()).toMatch(/Valid\s*True\s*ValueInRange/);

      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Claims' }).click();
      await page.getByRole('row', { name: /web-1/ }).waitFor();
      await page.getByLabel('State').selectOption('waiting');
      await poll(() => page.locator('main tbody tr').count()).toBe(0);
      await page.getByLabel('State').selectOption('');
      await page.getByRole('searchbox', { name: 'Filter' }).fill('web-01');
      // web-1 and web-2 name it as their owner (web-3 was claimed from the map, with none)
      await poll(() => page.locator('main tbody tr').count()).toBe(2);
      await shot('claims');
      await page.getByRole('link', { name: 'web-1', exact: true }).click();
      await page.getByRole('heading', { name: /web-1/ }).waitFor();
      expect(await textOf(page.locator('main'))).toMatch(/10\.42\.1\.1.*vpc-main.*VirtualMachine web-01/s);
      expect(await page.getByRole('table').textContent()).toMatch(/Allocated\s*True\s*Allocated/);
      await page.getByRole('link', { name: 'vpc-main-10-42-1-1', exact: false }).first().waitFor();
    },
    TIMEOUT,
  );

  it(
    'filters claims and allocation objects by a label selector the API applies, and shows what the API says of a bad one',
    async () => {
      expect((await api.post('indexpools', indexPool('labelled', ['1..20']))).status).toBe(201);
      for (const [name, team] of [
        ['lab-fabric', 'fabric'],
        ['lab-edge', 'edge'],
      ] as const)
        expect(
          (
            await api.post('claims', {
              ...claim(name, { kind: 'IndexPool', name: 'labelled' }),
              metadata: { name, labels: { team } },
            })
          ).status,
        ).toBe(201);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Claims' }).click();
      await page.getByRole('searchbox', { name: 'Filter' }).fill('');
      await page.getByRole('row', { name: /lab-edge/ }).waitFor();
      const selector = page.getByRole('textbox', { name: 'Labels' });
      await selector.fill('team=fabric');
      await selector.press('Enter');
      await poll(() => page.locator('main tbody tr').count()).toBe(1);
      expect(await page.locator('main tbody').textContent()).toContain('lab-fabric');
      await selector.fill('team in (fabric');
      await selector.press('Enter');
      await poll(() => textOf(page.getByRole('alert'))).toContain(
        '400 BadRequest: unable to parse requirement',
      );
      await selector.fill('');
      await selector.press('Enter');
      await poll(() => page.getByRole('row', { name: /lab-edge/ }).count()).toBe(1);
    },
    TIMEOUT,
  );

  it(
    'works the same through allot ui’s signing proxy, every API call signed',
    async () => {
      const verifier = await startVerifier({ forwardTo: allot.url });
      const proxy = await startSigningProxy({
        endpoint: verifier.url,
        port: 0,
        region: VERIFIER_REGION,
        credentials: async () => VERIFIER_CREDENTIALS,
        serve: serveConsole,
      });
      const through = await browser.context.newPage();
      try {
        await through.goto(`${proxy.url}/#/ns/default/pools/indexpools/asn-pool`);
        await through.getByRole('heading', { name: /asn-pool/ }).waitFor();
        await through.getByLabel('Claim name').fill('via-proxy');
        await through.getByRole('button', { name: 'Claim', exact: true }).click();
        await poll(() => textOf(through.locator('#claim-result'))).toMatch(/claim\/via-proxy: \d+/);
        expect(verifier.rejected).toEqual([]);
        expect(verifier.verified.some((a) => a.method === 'POST' && a.path.endsWith('/claims'))).toBe(true);
        expect(verifier.verified.some((a) => a.path.includes('/occupancy?'))).toBe(true);
      } finally {
        await through.close();
        await proxy.close();
        await verifier.close();
      }
    },
    TIMEOUT,
  );

  it(
    'reads well on a phone and in the dark',
    async () => {
      const phone = await browser.context.newPage();
      await phone.setViewportSize({ width: 390, height: 844 });
      await phone.goto(`${allot.url}/#/ns/default/pools/ipaddresspools/vpc-main`);
      await poll(() => phone.locator('.cells button').count()).toBe(256);
      // nothing wider than the screen but the tables, which scroll in their own box
      const overflow = await phone.evaluate('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      await shot('phone', phone);
      await phone.emulateMedia({ colorScheme: 'dark' });
      const background = await phone.evaluate('getComputedStyle(document.body).backgroundColor');
      expect(background).toBe('rgb(15, 19, 23)');
      await phone.setViewportSize({ width: 1280, height: 860 });
      await phone.goto(`${allot.url}/#/ns/default`);
      await phone.getByRole('link', { name: 'vpc-main', exact: true }).waitFor();
      await shot('dark', phone);
      await phone.close();
    },
    TIMEOUT,
  );
});
