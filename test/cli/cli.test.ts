/**
 * The CLI end to end: `run` in-process against the local server (in-memory dynalite, local stream),
 * with golden files for the tables (`UPDATE_GOLDEN=1 npx vitest run test/cli` rewrites them).
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { eventually, startTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { run } from '../../lib/cli/main.ts';
import { ApiClient, signedHeaders } from '../../lib/cli/http.ts';

const SEED = 'docs/examples/seed.yaml';
const IP_POOLS = 'docs/examples/ip-pools.yaml';
const golden = (name: string) => new URL(`./golden/${name}`, import.meta.url);

let allot: LocalAllot;

beforeAll(async () => {
  allot = await startTestAllot();
});
afterAll(() => allot.close());

interface Result {
  code: number;
  out: string;
  err: string;
}

/** Runs `allot <args>` against the test server; `stdin` is what `-f -` reads. */
async function allotCli(args: string, options: { stdin?: string; namespace?: string } = {}): Promise<Result> {
  const out: string[] = [];
  const err: string[] = [];
  const argv = args.split(' ').filter(Boolean);
  if (options.namespace) argv.push('-n', options.namespace);
  const code = await run(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    readStdin: async () => options.stdin ?? '',
    env: { ALLOT_ENDPOINT: allot.url },
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function expectGolden(name: string, text: string): void {
  if (process.env.UPDATE_GOLDEN) writeFileSync(golden(name), `${text}\n`);
  expect(text).toBe(readFileSync(golden(name), 'utf8').trimEnd());
}

/** Waits until the stream has counted `allocated` values in every listed pool. */
async function settled(namespace: string, counts: Record<string, number>): Promise<void> {
  await eventually(async () => {
    const json = JSON.parse((await allotCli('get pools -o json', { namespace })).out);
    for (const [name, allocated] of Object.entries(counts)) {
      expect(json.items.find((p: any) => p.metadata.name === name)?.status.allocated).toBe(allocated);
    }
  });
}

describe('apply', () => {
  it('applies the seed document’s manifests unchanged, then reports them unchanged', async () => {
    const first = await allotCli(`apply -f ${SEED}`, { namespace: 'seed' });
    expect(first).toEqual({
      code: 0,
      out: 'indexpool/asn-pool created\nclaim/leaf1-asn created\nindex/asn-pool-65001 created',
      err: '',
    });
    const again = await allotCli(`apply -f ${SEED}`, { namespace: 'seed' });
    expect(again.out).toBe(
      'indexpool/asn-pool unchanged\nclaim/leaf1-asn unchanged\nindex/asn-pool-65001 unchanged',
    );
    const claim = JSON.parse((await allotCli('get claim leaf1-asn -o json', { namespace: 'seed' })).out);
    expect(claim.status.value).toBe('64512');
  });

  it('reports a changed object as configured', async () => {
    const manifest = (ranges: string) =>
      `{"kind":"IndexPool","metadata":{"name":"vni"},"spec":{"ranges":[${ranges}]}}`;
    expect((await allotCli('apply -f -', { stdin: manifest('"5000..5999"'), namespace: 'cfg' })).out).toBe(
      'indexpool/vni created',
    );
    expect((await allotCli('apply -f -', { stdin: manifest('"5000..6999"'), namespace: 'cfg' })).out).toBe(
      'indexpool/vni configured',
    );
    expect((await allotCli('apply -f -', { stdin: manifest('"5000..6999"'), namespace: 'cfg' })).out).toBe(
      'indexpool/vni unchanged',
    );
  });

  it('reads a JSON list from standard input, and --wait waits for a claim whose pool comes later', async () => {
    const stdin = JSON.stringify({
      items: [
        {
          kind: 'Claim',
          metadata: { name: 'tor1-vlan' },
          spec: { poolRef: { kind: 'IndexPool', name: 'vlans' } },
        },
        { kind: 'IndexPool', metadata: { name: 'vlans' }, spec: { ranges: ['100..199'] } },
      ],
    });
    const result = await allotCli('apply -f - --wait', { stdin, namespace: 'wait' });
    expect(result).toEqual({
      code: 0,
      out: 'claim/tor1-vlan created\nindexpool/vlans created\nclaim/tor1-vlan allocated: 100',
      err: '',
    });
  });

  it('shows progress on a terminal when a file holds many documents', async () => {
    const stdin = Array.from(
      { length: 12 },
      (_, i) => `kind: IndexPool\nmetadata: { name: p${i} }\nspec: { ranges: [${i}] }`,
    ).join('\n---\n');
    const err: string[] = [];
    const code = await run(['apply', '-f', '-', '-n', 'progress'], {
      out: () => undefined,
      err: (line) => err.push(line),
      readStdin: async () => stdin,
      env: { ALLOT_ENDPOINT: allot.url },
      progress: true,
    });
    expect(code).toBe(0);
    expect(err).toEqual(Array.from({ length: 12 }, (_, i) => `applying ${i + 1}/12…`));
  });

  it('takes the namespace from a manifest that names one', async () => {
    const stdin = 'kind: IndexPool\nmetadata: { name: own, namespace: elsewhere }\nspec: { ranges: [1] }\n';
    expect((await allotCli('apply -f -', { stdin })).code).toBe(0);
    expect((await allotCli('get indexpool own', { namespace: 'elsewhere' })).code).toBe(0);
  });

  it('applies what it can, prints the Status message and causes of what it cannot, and exits 1', async () => {
    const stdin = [
      'kind: IndexPool\nmetadata: { name: bad }\nspec: { ranges: ["100..200", "150..250"] }',
      'kind: IndexPool\nmetadata: { name: worse }\nspec: { ranges: [], reclaimPolicy: Keep }',
      'kind: IndexPool\nmetadata: { name: good }\nspec: { ranges: [7] }',
    ].join('\n---\n');
    const result = await allotCli('apply -f -', { stdin, namespace: 'errors' });
    expect(result.code).toBe(1);
    expect(result.out).toBe('indexpool/good created');
    expect(result.err.split('\n')).toEqual([
      'error: indexpool/bad (stdin #1): spec.ranges[1] (150..250) overlaps with spec.ranges[0] (100..200) (422 Invalid)',
      'error: indexpool/worse (stdin #2): spec.reclaimPolicy: must be Recycle or Retain (and 1 more) (422 Invalid)',
      '  spec.reclaimPolicy: must be Recycle or Retain',
      '  spec.ranges: must be a list of at least one range',
    ]);
  });

  it.each([
    ['kind: Widget\nmetadata: { name: w }', 'error: stdin #1: kind "Widget" is not one of IndexPool'],
    ['kind: Claim\nspec: {}', 'error: stdin #1: metadata.name is required'],
    ['kind: [unclosed', 'error: stdin: not valid YAML'],
    ['{"kind": ', 'error: stdin: not valid JSON'],
  ])('refuses a manifest it cannot read before sending anything: %j', async (stdin, message) => {
    const result = await allotCli('apply -f -', { stdin, namespace: 'unread' });
    expect(result.code).toBe(1);
    expect(result.err).toContain(message);
  });

  it('says so when the file cannot be read', async () => {
    const result = await allotCli('apply -f /nonexistent/pools.yaml');
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^error: cannot read \/nonexistent\/pools.yaml: ENOENT/);
  });
});

describe('get, claim, release, describe on the seed and IP pools', () => {
  const ns = 'tables';

  beforeAll(async () => {
    expect((await allotCli(`apply -f ${SEED}`, { namespace: ns })).code).toBe(0);
    expect((await allotCli(`apply -f ${IP_POOLS}`, { namespace: ns })).code).toBe(0);
    const small = 'kind: IndexPool\nmetadata: { name: route-targets }\nspec: { ranges: ["1..4"] }';
    expect((await allotCli('apply -f -', { stdin: small, namespace: ns })).code).toBe(0);
    for (const name of ['rt-blue', 'rt-green', 'rt-red'])
      expect((await allotCli(`claim ${name} --pool indexpool/route-targets`, { namespace: ns })).code).toBe(
        0,
      );
  });

  it('claims from each kind of pool with --pool <kind>/<name>, and again returns the same value', async () => {
    const claims = [
      'claim web-01-nic0 --pool ipaddresspool/vpc-main --within 10.42.1.0/24 --reserved 10.42.1.1 --owner VirtualMachine/web-01/0',
      'claim fip-1 --pool IPAddressPool/public-zone-a',
      'claim fip-2 --pool ipaddresspools/public-zone-a',
      'claim fip-3 --pool ipaddresspool/public-zone-a',
      'claim rack7-subnet --pool ipprefixpool/v6-subnets',
      'claim spine1-asn --pool indexpool/asn-pool --value 4200000000',
    ];
    const lines: string[] = [];
    for (const args of claims) {
      const result = await allotCli(args, { namespace: ns });
      expect(result.code, result.err).toBe(0);
      lines.push(result.out);
    }
    expect(lines).toEqual([
      'claim/web-01-nic0: 10.42.1.2 from IPAddressPool vpc-main (IPAddress vpc-main-10-42-1-2)',
      'claim/fip-1: 203.0.113.4 from IPAddressPool public-zone-a (IPAddress public-zone-a-203-0-113-4)',
      'claim/fip-2: 203.0.113.5 from IPAddressPool public-zone-a (IPAddress public-zone-a-203-0-113-5)',
      'claim/fip-3: 203.0.113.6 from IPAddressPool public-zone-a (IPAddress public-zone-a-203-0-113-6)',
      'claim/rack7-subnet: 2001:db8::/64 from IPPrefixPool v6-subnets (IPPrefix v6-subnets-2001-0db8-0000-0000-0000-0000-0000-0000-64)',
      'claim/spine1-asn: 4200000000 from IndexPool asn-pool (Index asn-pool-4200000000)',
    ]);
    expect((await allotCli('claim fip-2 --pool ipaddresspool/public-zone-a', { namespace: ns })).out).toBe(
      lines[2],
    );
  });

  it('releases a claim and says where its value goes', async () => {
    expect(await allotCli('release fip-2', { namespace: ns })).toEqual({
      code: 0,
      out: 'claim/fip-2 released: 203.0.113.5 goes back to IPAddressPool public-zone-a',
      err: '',
    });
    await settled(ns, {
      'public-zone-a': 2,
      'vpc-main': 1,
      'v6-subnets': 1,
      'asn-pool': 3,
      'route-targets': 3,
    });
  });

  it('prints pools with counts and a utilisation bar (golden)', async () => {
    expectGolden('get-pools.txt', (await allotCli('get pools', { namespace: ns })).out);
    expectGolden('get-pools-wide.txt', (await allotCli('get pools -o wide', { namespace: ns })).out);
  });

  it('prints claims and allocation objects (golden)', async () => {
    expectGolden('get-claims.txt', (await allotCli('get claims', { namespace: ns })).out);
    expectGolden('get-claims-wide.txt', (await allotCli('get claims -o wide', { namespace: ns })).out);
    expectGolden('get-allocations.txt', (await allotCli('get allocations', { namespace: ns })).out);
    expectGolden('get-ipaddresses.txt', (await allotCli('get ipaddresses', { namespace: ns })).out);
  });

  it('describes an IP pool with a map of taken, free and excluded runs (golden, times masked)', async () => {
    const mask = (text: string) => text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, '<time>');
    expectGolden(
      'describe-public-zone-a.txt',
      mask((await allotCli('describe ipaddresspool public-zone-a', { namespace: ns })).out),
    );
    expectGolden(
      'describe-asn-pool.txt',
      mask((await allotCli('describe pools asn-pool', { namespace: ns })).out),
    );
    expectGolden(
      'describe-v6-subnets.txt',
      mask((await allotCli('describe ipprefixpool v6-subnets', { namespace: ns })).out),
    );
  });

  it('prints one object as JSON or YAML, and lists as a List', async () => {
    const json = JSON.parse((await allotCli('get claim web-01-nic0 -o json', { namespace: ns })).out);
    expect(json).toMatchObject({ kind: 'Claim', status: { value: '10.42.1.2' } });
    const yaml = parse((await allotCli('get claim web-01-nic0 -o yaml', { namespace: ns })).out);
    expect(yaml).toEqual(json);
    const list = parse((await allotCli('get indices -o yaml', { namespace: ns })).out);
    expect(list.kind).toBe('List');
    expect(list.items.map((i: any) => i.spec.index)).toEqual([64512, 65001, 4200000000, 1, 2, 3]);
  });

  it('applies what get -o yaml prints back unchanged', async () => {
    const printed = (await allotCli('get pools -o yaml', { namespace: ns })).out;
    const result = await allotCli('apply -f -', { stdin: printed, namespace: ns });
    expect(result.code, result.err).toBe(0);
    expect(result.out.split('\n')).toEqual([
      'indexpool/asn-pool unchanged',
      'indexpool/route-targets unchanged',
      'ipaddresspool/public-zone-a unchanged',
      'ipaddresspool/vpc-main unchanged',
      'ipprefixpool/v6-subnets unchanged',
    ]);
  });

  it('selects with -l and --field-selector as kubectl does, and says what is wrong with a selector', async () => {
    const namespace = 'selecting';
    const claims = ['fabric', 'edge'].map((team) => ({
      apiVersion: 'pool.networking.metal.ironcore.dev/v1alpha1',
      kind: 'Claim',
      metadata: { name: `tor-${team}`, labels: { team } },
      spec: { poolRef: { kind: 'IndexPool', name: 'absent' } },
    }));
    expect((await allotCli('apply -f -', { namespace, stdin: JSON.stringify(claims) })).code).toBe(0);
    const names = async (args: string) =>
      JSON.parse((await allotCli(`get claims ${args} -o json`, { namespace })).out).items.map(
        (item: any) => item.metadata.name,
      );
    expect(await names('-l team=fabric')).toEqual(['tor-fabric']);
    expect(await names('-l team!=fabric')).toEqual(['tor-edge']);
    expect(await names('--field-selector status.phase=Waiting,metadata.name!=tor-edge')).toEqual([
      'tor-fabric',
    ]);
    expect(await allotCli('get claims -l =x', { namespace })).toEqual({
      code: 1,
      out: '',
      err: "error: found '=', expected: !, identifier, or 'end of string' (400 BadRequest)",
    });
    expect((await allotCli('get claims tor-edge -l team=edge', { namespace })).code).toBe(2);
  });

  it('says when there is nothing to list', async () => {
    expect(await allotCli('get claims', { namespace: 'empty' })).toEqual({
      code: 0,
      out: '',
      err: 'No resources found in empty namespace.',
    });
  });
});

describe('claims that wait, Retain, delete', () => {
  const ns = 'lifecycle';

  it('shows a claim waiting for its pool, and --wait gives up with the reason', async () => {
    expect((await allotCli('claim tor9-vlan --pool indexpool/vlans', { namespace: ns })).out).toBe(
      'claim/tor9-vlan: waiting: PoolNotFound: IndexPool vlans does not exist',
    );
    const waited = await allotCli('claim tor9-vlan --pool indexpool/vlans --wait --timeout 0', {
      namespace: ns,
    });
    expect(waited.code).toBe(1);
    expect(waited.err).toBe(
      'error: claim/tor9-vlan is not allocated after 0s: PoolNotFound: IndexPool vlans does not exist',
    );
  });

  it('says a Retain pool keeps the released value', async () => {
    const stdin =
      'kind: IndexPool\nmetadata: { name: vlans }\nspec: { ranges: ["100..199"], reclaimPolicy: Retain }';
    expect((await allotCli('apply -f -', { stdin, namespace: ns })).code).toBe(0);
    const claimed = await allotCli('claim tor9-vlan --pool indexpool/vlans --wait', { namespace: ns });
    expect(claimed.out).toBe('claim/tor9-vlan: 100 from IndexPool vlans (Index vlans-100)');
    expect((await allotCli('release tor9-vlan', { namespace: ns })).out).toBe(
      'claim/tor9-vlan released: 100 stays with Index vlans-100 (Retain)',
    );
  });

  it('refuses to delete a pool in use, and deletes it with --cascade', async () => {
    await eventually(async () => {
      const index = JSON.parse((await allotCli('get index vlans-100 -o json', { namespace: ns })).out);
      expect(index.spec.claimRef.uid).toBe('');
    });
    const refused = await allotCli('delete indexpool vlans', { namespace: ns });
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(
      'error: IndexPool "vlans" still has allocation objects; release its claims, or delete with ?cascade=true (409 PoolInUse)',
    );
    expect((await allotCli('delete pool vlans --cascade', { namespace: ns })).out).toBe(
      'indexpool/vlans deleted (with its allocation objects and their claims)',
    );
    const gone = await allotCli('get index vlans-100', { namespace: ns });
    expect(gone.code).toBe(1);
    expect(gone.err).toBe('error: Index "vlans-100" not found (404 NotFound)');
  });
});

describe('leases', () => {
  const ns = 'leases';

  it('claims with --lease-seconds, renews with allot renew, and shows the lease in -o wide', async () => {
    const stdin = 'kind: IndexPool\nmetadata: { name: vnis }\nspec: { ranges: ["5000..5009"] }';
    expect((await allotCli('apply -f -', { stdin, namespace: ns })).code).toBe(0);
    const claimed = await allotCli('claim vm1-vni --pool indexpool/vnis --lease-seconds 600', {
      namespace: ns,
    });
    expect(claimed.out).toBe('claim/vm1-vni: 5000 from IndexPool vnis (Index vnis-5000)');
    const before = JSON.parse((await allotCli('get claim vm1-vni -o json', { namespace: ns })).out);
    expect(before.spec.leaseSeconds).toBe(600);
    const renewed = await allotCli('renew vm1-vni --pool indexpool/vnis', { namespace: ns });
    expect(renewed.code, renewed.err).toBe(0);
    expect(renewed.out).toMatch(
      /^claim\/vm1-vni renewed: its lease ends \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(holds 5000\)$/,
    );
    const end = renewed.out.split(' ')[5]!;
    expect(Date.parse(end)).toBeGreaterThanOrEqual(Date.parse(before.status.leaseExpiresAt));
    const wide = (await allotCli('get claims -o wide', { namespace: ns })).out.split('\n');
    expect(wide[0]).toMatch(/LEASE-ENDS$/);
    expect(wide[1]).toMatch(new RegExp(`${end}$`));
  });

  it('says what is wrong: another pool, no lease, no claim, a bad --lease-seconds', async () => {
    const other = await allotCli('renew vm1-vni --pool indexpool/vlans', { namespace: ns });
    expect(other.code).toBe(1);
    expect(other.err).toBe('error: claim/vm1-vni is of IndexPool vnis, not IndexPool vlans');
    await allotCli('claim vm2-vni --pool indexpool/vnis', { namespace: ns });
    const none = await allotCli('renew vm2-vni', { namespace: ns });
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/has no lease/);
    expect((await allotCli('renew ghost', { namespace: ns })).code).toBe(1);
    const bad = await allotCli('claim vm3-vni --pool indexpool/vnis --lease-seconds 5', { namespace: ns });
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/spec\.leaseSeconds/);
    expect((await allotCli('renew', { namespace: ns })).code).toBe(2);
  });
});

describe('quarantine', () => {
  const ns = 'quarantine';

  it('shows a quarantining pool’s quarantined values in -o wide and describe, and its quarantineSeconds', async () => {
    const stdin =
      'kind: IndexPool\nmetadata: { name: quiet }\nspec: { ranges: ["7000..7009"], quarantineSeconds: 300 }';
    expect((await allotCli('apply -f -', { stdin, namespace: ns })).code).toBe(0);
    const plain = 'kind: IndexPool\nmetadata: { name: plain }\nspec: { ranges: ["8000..8009"] }';
    expect((await allotCli('apply -f -', { stdin: plain, namespace: ns })).code).toBe(0);
    expect((await allotCli('claim q1 --pool indexpool/quiet', { namespace: ns })).out).toBe(
      'claim/q1: 7000 from IndexPool quiet (Index quiet-7000)',
    );
    expect((await allotCli('release q1', { namespace: ns })).code).toBe(0);
    await eventually(async () => {
      const json = JSON.parse((await allotCli('get indexpool quiet -o json', { namespace: ns })).out);
      expect(json.status.quarantined).toBe('1');
    });
    const wide = (await allotCli('get pools -o wide', { namespace: ns })).out.split('\n');
    expect(wide[0]).toMatch(/^NAME +KIND +ALLOCATED +TOTAL +FREE +QUARANTINED +AVAILABLE /);
    const cells = (line: string) => line.split(/ {3,}/);
    const at = cells(wide[0]!).indexOf('QUARANTINED');
    const rows = Object.fromEntries(wide.slice(1).map((line) => [cells(line)[0], line]));
    // held is one (the quarantine), so free is 9; the column holds the count where the header is
    expect(cells(rows.quiet!).slice(0, at + 1)).toEqual(['quiet', 'IndexPool', '0', '10', '9', '1']);
    // a pool that does not quarantine leaves the cell empty
    expect(rows.plain!.slice(wide[0]!.indexOf('QUARANTINED')).startsWith(' ')).toBe(true);
    expect((await allotCli('get pools', { namespace: ns })).out).not.toContain('QUARANTINED');

    const described = (await allotCli('describe indexpool quiet', { namespace: ns })).out.split('\n');
    expect(described).toContain('  Quarantine seconds:     300');
    expect(described).toContain('  Quarantined:            1');
    expect(described.indexOf('  Quarantined:            1')).toBe(
      described.indexOf('  Free:                   9') + 1,
    );
    const other = (await allotCli('describe indexpool plain', { namespace: ns })).out;
    expect(other).not.toMatch(/Quarantine/);
  });
});

describe('a pool shared with other namespaces', () => {
  it('claims from an operator pool with --pool <namespace>/<kind>/<name>; get pools shows a tenant its usage and limit', async () => {
    const stdin =
      'kind: IndexPool\nmetadata: { name: fip }\nspec: { ranges: ["900..909"], sharedWith: [{ namespace: cli-acme, maxAllocations: 2 }, { namespace: cli-globex }] }';
    expect((await allotCli('apply -f -', { stdin, namespace: 'cli-infra' })).code).toBe(0);
    expect((await allotCli('claim web --pool cli-infra/indexpool/fip', { namespace: 'cli-acme' })).out).toBe(
      'claim/web: 900 from IndexPool fip (Index fip-900)',
    );
    await allotCli('claim db --pool cli-infra/indexpool/fip', { namespace: 'cli-globex' });
    // FREE is the pool's, counted by the stream: waited for.
    const tenant = await eventually(async () => {
      const lines = (await allotCli('get pools', { namespace: 'cli-acme' })).out.split('\n');
      expect(lines[2]!.split(/ {3,}/)).toEqual(['cli-infra', 'fip', 'IndexPool', '1', '2', '8', 'True']);
      return lines;
    });
    expect(tenant[0]).toBe('Shared with cli-acme (claim with --pool <namespace>/<kind>/<name>):');
    expect(tenant[1]).toMatch(/^NAMESPACE +NAME +KIND +HELD +LIMIT +FREE +AVAILABLE$/);
    expect(tenant.join('\n')).not.toContain('globex');
    const claims = (await allotCli('get claims', { namespace: 'cli-acme' })).out;
    expect(claims).toMatch(/web +cli-infra\/IndexPool\/fip +900 +True +Allocated/);
    const described = (await allotCli('describe indexpool fip', { namespace: 'cli-infra' })).out.split('\n');
    expect(described).toContain('  Shared with:            cli-acme (max 2), cli-globex');
    expect(described).toContain('  Held by cli-acme:       1 of 2');
    expect(described).toContain('  Held by cli-globex:     1');
    const objects = (await allotCli('get indices', { namespace: 'cli-infra' })).out;
    expect(objects).toMatch(/fip-900 +IndexPool\/fip +900 +cli-acme\/web /);
    expect((await allotCli('claim x --pool a/b/c/d', { namespace: 'cli-acme' })).err).toContain(
      '--pool must be <kind>/<name> or <namespace>/<kind>/<name>',
    );
  });
});

describe('usage and connection errors', () => {
  it.each([
    ['frobnicate', 'error: unknown command "frobnicate"'],
    ['get widgets', 'error: unknown resource "widgets"'],
    ['apply', 'error: apply needs -f <file>'],
    ['get pools -o xml', 'error: -o must be table, wide, json or yaml (got xml)'],
    ['claim x', 'error: claim needs --pool <kind>/<name>'],
    ['claim x --pool claims/x', 'error: --pool kind must be indexpool, ipaddresspool or ipprefixpool'],
    ['describe claims x', 'error: describe shows pools'],
    ['get pools --colour', "error: Unknown option '--colour'"],
  ])('allot %s exits 2', async (args, message) => {
    const result = await allotCli(args);
    expect(result.code).toBe(2);
    expect(result.err.startsWith(message), result.err).toBe(true);
  });

  it('explains an endpoint it cannot reach', async () => {
    const out: string[] = [];
    const err: string[] = [];
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const code = await run(['get', 'pools', '--endpoint', `http://127.0.0.1:${port}`], {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      readStdin: async () => '',
      env: {},
    });
    expect(code).toBe(1);
    expect(err[0]).toMatch(new RegExp(`^error: cannot reach http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
  });
});

describe('SigV4', () => {
  const credentials = async () => ({
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'secret',
    sessionToken: 'token',
  });

  it('signs for execute-api in the region, over the body', async () => {
    const request = (body: string) => ({
      method: 'POST',
      url: new URL('https://abc123.execute-api.eu-west-1.amazonaws.com/v1/namespaces/default/claims?limit=5'),
      headers: { 'content-type': 'application/json' },
      body,
    });
    const date = new Date('2026-11-29T12:00:00Z');
    const a = await signedHeaders(request('{"a":1}'), { region: 'eu-west-1', credentials, date });
    const b = await signedHeaders(request('{"a":2}'), { region: 'eu-west-1', credentials, date });
    expect(a.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261129\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
    expect(a['x-amz-date']).toBe('20261129T120000Z');
    expect(a['x-amz-security-token']).toBe('token');
    expect(a.authorization).not.toBe(b.authorization);
  });

  it('sends signed requests to an https endpoint, with the region from its host name', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = createServer((request, response) => {
      seen.push(request.headers);
      response.setHeader('content-type', 'application/json');
      response.end('{"items":[],"metadata":{}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      // The test server speaks http; `sign: true` stands in for https.
      const api = new ApiClient({
        endpoint: `http://127.0.0.1:${port}`,
        sign: true,
        region: 'us-east-2',
        credentials,
      });
      expect((await api.call('GET', '/v1/namespaces/default/claims')).status).toBe(200);
      expect(seen[0]!.authorization).toMatch(
        /Credential=AKIDEXAMPLE\/\d{8}\/us-east-2\/execute-api\/aws4_request/,
      );
      const unsigned = new ApiClient({ endpoint: `http://127.0.0.1:${port}` });
      await unsigned.call('GET', '/v1/healthz');
      expect(seen[1]!.authorization).toBeUndefined();
    } finally {
      server.close();
    }
  });
});

describe('SigV4 without credentials', () => {
  it('says it cannot sign, and why', async () => {
    const err: string[] = [];
    const code = await run(
      ['get', 'pools', '--endpoint', 'https://abc123.execute-api.eu-west-1.amazonaws.com'],
      {
        out: () => undefined,
        err: (line) => err.push(line),
        readStdin: async () => '',
        env: {},
        credentials: async () => {
          throw new Error('Could not load credentials from any providers');
        },
      },
    );
    expect(code).toBe(1);
    expect(err).toEqual([
      'error: cannot sign the request for https://abc123.execute-api.eu-west-1.amazonaws.com: Could not load credentials from any providers',
    ]);
  });
});

describe('bin/allot.ts', () => {
  it('runs with no build step and exits non-zero on a server error', async () => {
    const exec = promisify(execFile);
    const help = await exec('node', ['--import', 'tsx', 'bin/allot.ts', '--help']);
    expect(help.stdout).toContain('allot apply -f <file|->');
    const failed = await exec('node', ['--import', 'tsx', 'bin/allot.ts', 'get', 'claim', 'nope'], {
      env: { ...process.env, ALLOT_ENDPOINT: allot.url },
    }).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 1, stderr: 'error: Claim "nope" not found (404 NotFound)\n' });
  });
});

describe('repair', () => {
  it('sweeps a namespace: a dry run counts, a run fixes, and then there is nothing to repair', async () => {
    const namespace = 'cli-repair';
    // How many requests a run made depends on the namespace; the rest of each line does not.
    const lines = (result: Result) => result.out.replace(/\(\d+ requests\)/, '(N requests)').split('\n');
    const healthy = await allotCli('repair', { namespace });
    expect(healthy.code).toBe(0);
    expect(lines(healthy)).toEqual(['namespace cli-repair: nothing to repair (N requests)']);
    // An offer to a claim name whose object is gone: a stub no claim can take anything from.
    const { objectKey } = await import('../../lib/store/keys.ts');
    await allot.table.offerToClaim(objectKey(namespace, 'claims', 'ghost'), {
      pk: `A#${namespace}#gone`,
      sk: '0',
    });
    const dry = await allotCli('repair --dry-run', { namespace });
    expect(lines(dry)).toEqual([
      'KIND        FOUND   FIXED',
      'staleStub   1       0',
      'namespace cli-repair: 1 to repair (dry run: nothing changed) (N requests)',
    ]);
    const fixed = await allotCli('repair', { namespace });
    expect(lines(fixed)).toEqual([
      'KIND        FOUND   FIXED',
      'staleStub   1       1',
      'namespace cli-repair: 1 of 1 repaired (N requests)',
    ]);
    expect((await allotCli('repair', { namespace })).out).toMatch(/nothing to repair/);
  });

  it('refuses arguments it does not take', async () => {
    expect(await allotCli('repair everything')).toMatchObject({ code: 2 });
  });
});

describe('allot history', () => {
  it('prints who held a value, the pool’s and a claim’s, and says what is wrong with a bad query', async () => {
    const namespace = 'history-cli';
    expect((await allotCli('apply -f docs/examples/seed.yaml', { namespace })).code).toBe(0);
    await allotCli('release leaf1-asn', { namespace });
    const held = await eventually(async () => {
      const answer = await allotCli('history --pool indexpool/asn-pool -o json', { namespace });
      const items = JSON.parse(answer.out).items as Record<string, any>[];
      expect(items.some((h) => h.claim?.name === 'leaf1-asn' && h.ended === 'Released')).toBe(true);
      return items.find((h) => h.claim?.name === 'leaf1-asn')!;
    });
    const table = await allotCli(`history ${held.value} --pool indexpool/asn-pool`, { namespace });
    expect(table.code).toBe(0);
    expect(table.out.split('\n')[0]).toMatch(/^VALUE\s+CLAIM\s+FROM\s+UNTIL\s+ENDED\s+OBJECT$/);
    expect(table.out).toMatch(
      new RegExp(`${held.value}\\s+${namespace}/leaf1-asn\\s+\\S+\\s+\\S+\\s+Released`),
    );
    const ranged = await allotCli(
      `history --pool indexpool/asn-pool --within ${held.value}..${held.value} -o json`,
      { namespace },
    );
    const inRange = JSON.parse(ranged.out).items as Record<string, any>[];
    expect(inRange.some((h) => h.claim?.name === 'leaf1-asn')).toBe(true);
    expect(inRange.every((h) => h.value === held.value)).toBe(true);
    const reversed = await allotCli('history --pool indexpool/asn-pool --within 9..1', { namespace });
    expect(reversed.code).toBe(1);
    expect(reversed.err).toMatch(/within/);
    expect((await allotCli('history --claim leaf1-asn', { namespace })).out).toMatch(/Released/);
    expect((await allotCli('history --claim nobody', { namespace })).out).toBe('no holdings');
    const bad = await allotCli('history 1 --pool indexpool/asn-pool --at yesterday', { namespace });
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/at must be an RFC 3339 time/);
    expect((await allotCli('history 1', { namespace })).code).toBe(2);
  });

  it('reads a shared pool from a tenant’s namespace: the tenant’s own holdings only', async () => {
    const pool = [
      'apiVersion: pool.networking.metal.ironcore.dev/v1alpha1',
      'kind: IndexPool',
      'metadata: { name: shared-asns }',
      'spec: { ranges: ["1..9"], sharedWith: [{ namespace: history-tenant }] }',
    ].join('\n');
    expect((await allotCli('apply -f -', { stdin: pool, namespace: 'history-owner' })).code).toBe(0);
    await allotCli('claim own --pool indexpool/shared-asns', { namespace: 'history-owner' });
    const mine = await allotCli('claim mine --pool history-owner/indexpool/shared-asns', {
      namespace: 'history-tenant',
    });
    expect(mine.code, mine.err).toBe(0);
    const all = await eventually(async () => {
      const answer = await allotCli('history --pool indexpool/shared-asns -o json', {
        namespace: 'history-owner',
      });
      const items = JSON.parse(answer.out).items as Record<string, any>[];
      expect(items).toHaveLength(2);
      return items;
    });
    expect(all.map((h) => h.claim.namespace).sort()).toEqual(['history-owner', 'history-tenant']);
    // (The tenant's copies are written after the owner's.)
    await eventually(async () => {
      const tenant = await allotCli('history --pool history-owner/indexpool/shared-asns -o json', {
        namespace: 'history-tenant',
      });
      expect((JSON.parse(tenant.out).items as Record<string, any>[]).map((h) => h.claim.name)).toEqual([
        'mine',
      ]);
    });
  });
});
