/**
 * The seed document's own commands, with the real kubectl (issue 18): its manifests applied unchanged,
 * `kubectl get indexpools` with its columns, both jsonpath commands, apply twice and after an edit,
 * delete and the Retain rebind, `-o yaml`, short names, and an invalid manifest rejected by field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { eventually, startTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { haveKubectl, kubectlFor, requireKubectl, type Kubectl } from './support.ts';

requireKubectl('test/kubectl/kubectl.test.ts');

const GROUP = 'pool.networking.metal.ironcore.dev';
const API_VERSION = `${GROUP}/v1alpha1`;

describe.runIf(haveKubectl)('kubectl against Allot', () => {
  let allot: LocalAllot;
  let kubectl: Kubectl;
  /** Runs kubectl and expects it to succeed; its stdout. */
  const ok = async (args: string[], stdin?: string) => {
    const result = await kubectl.run(args, stdin);
    expect(result.code, `kubectl ${args.join(' ')}: ${result.stderr}`).toBe(0);
    return result.stdout;
  };
  /** A table's rows, as words, without the AGE column's value (the last). */
  const rows = (table: string) =>
    table
      .trimEnd()
      .split('\n')
      .map((line) => line.trim().split(/\s{2,}/));

  beforeAll(async () => {
    allot = await startTestAllot();
    kubectl = await kubectlFor(allot.url);
  });
  afterAll(async () => {
    await kubectl?.close();
    await allot?.close();
  });

  it('applies the seed manifests unchanged', async () => {
    expect(await ok(['apply', '-f', 'docs/examples/seed.yaml'])).toBe(
      [
        `indexpool.${GROUP}/asn-pool created`,
        `claim.${GROUP}/leaf1-asn created`,
        `index.${GROUP}/asn-pool-65001 created`,
        '',
      ].join('\n'),
    );
  });

  it('prints the seed document’s jsonpath answers: 64512 and asn-pool-64512', async () => {
    expect(await ok(['get', 'claim', 'leaf1-asn', '-o', 'jsonpath={.status.value}'])).toBe('64512');
    expect(await ok(['get', 'claim', 'leaf1-asn', '-o', 'jsonpath={.status.allocationRef.name}'])).toBe(
      'asn-pool-64512',
    );
  });

  it('shows `kubectl get indexpools` as the seed document does, once the pool holds three values', async () => {
    expect(await ok(['apply', '-f', 'docs/examples/spine1-asn.yaml'])).toBe(
      `claim.${GROUP}/spine1-asn created\n`,
    );
    await allot.stream?.drained();
    const table = rows(await ok(['get', 'indexpools']));
    expect(table.map((row) => row.slice(0, 3))).toEqual([
      ['NAME', 'ALLOCATED', 'AVAILABLE'],
      ['asn-pool', '3', 'True'],
    ]);
    expect(table[0]![3]).toBe('AGE');
    expect(table[1]![3]).toMatch(/^\d+s$/);
    const wide = rows(await ok(['get', 'indexpools', '-o', 'wide']));
    expect(wide[0]).toEqual([
      'NAME',
      'ALLOCATED',
      'TOTAL',
      'FREE',
      'QUARANTINED',
      'AVAILABLE',
      'SHAREDWITH',
      'AGE',
    ]);
    // asn-pool does not quarantine: QUARANTINED is empty (the split on runs of spaces skips it)
    expect(wide[1]!.slice(0, 5)).toEqual(['asn-pool', '3', '94968318', '94968315', 'True']);
  });

  it('shows a quarantining pool’s quarantined values in -o wide', async () => {
    const pool = {
      apiVersion: API_VERSION,
      kind: 'IndexPool',
      metadata: { name: 'quiet-pool' },
      spec: { ranges: ['10..19'], quarantineSeconds: 300 },
    };
    const quiet = {
      apiVersion: API_VERSION,
      kind: 'Claim',
      metadata: { name: 'quiet-1' },
      spec: { poolRef: { kind: 'IndexPool', name: 'quiet-pool' } },
    };
    await ok(['apply', '-f', '-'], JSON.stringify(pool));
    await ok(['apply', '-f', '-'], JSON.stringify(quiet));
    await ok(['delete', 'claim', 'quiet-1']);
    await eventually(async () =>
      expect(await ok(['get', 'indexpool', 'quiet-pool', '-o', 'jsonpath={.status.quarantined}'])).toBe('1'),
    );
    const wide = rows(await ok(['get', 'indexpool', 'quiet-pool', '-o', 'wide']));
    expect(wide[0]).toEqual([
      'NAME',
      'ALLOCATED',
      'TOTAL',
      'FREE',
      'QUARANTINED',
      'AVAILABLE',
      'SHAREDWITH',
      'AGE',
    ]);
    // one value held back: not allocated, not free
    expect(wide[1]!.slice(0, 6)).toEqual(['quiet-pool', '0', '10', '9', '1', 'True']);
    expect(rows(await ok(['get', 'indexpool', 'quiet-pool']))[0]).not.toContain('QUARANTINED');
    await ok(['delete', 'indexpool', 'quiet-pool']);
  });

  it('shows a shared pool: SharedWith in -o wide, the tenant claim’s pool namespace, its object’s claimRef', async () => {
    const pool = {
      apiVersion: API_VERSION,
      kind: 'IndexPool',
      metadata: { name: 'fip', namespace: 'kube-infra' },
      spec: {
        ranges: ['500..509'],
        sharedWith: [{ namespace: 'kube-acme', maxAllocations: 2 }, { namespace: '*' }],
      },
    };
    const claim = {
      apiVersion: API_VERSION,
      kind: 'Claim',
      metadata: { name: 'web', namespace: 'kube-acme' },
      spec: { poolRef: { kind: 'IndexPool', name: 'fip', namespace: 'kube-infra' } },
    };
    await ok(['apply', '-f', '-'], JSON.stringify(pool));
    await ok(['apply', '-f', '-'], JSON.stringify(claim));
    const wide = rows(await ok(['get', 'indexpools', '-n', 'kube-infra', '-o', 'wide']));
    expect(wide[0]!.at(-2)).toBe('SHAREDWITH');
    expect(wide[1]!.at(-2)).toBe('kube-acme(2),*');
    const claims = rows(await ok(['get', 'claims', '-n', 'kube-acme']));
    expect(claims[1]!.slice(0, 3)).toEqual(['web', 'kube-infra/fip', '500']);
    const ref = await ok([
      'get',
      'indices',
      'fip-500',
      '-n',
      'kube-infra',
      '-o',
      'jsonpath={.spec.claimRef.namespace}',
    ]);
    expect(ref).toBe('kube-acme');
  });

  it("shows a lease's end: in -o wide and by jsonpath", async () => {
    const manifest = {
      apiVersion: API_VERSION,
      kind: 'Claim',
      metadata: { name: 'lease-kube' },
      spec: { poolRef: { kind: 'IndexPool', name: 'asn-pool' }, leaseSeconds: 3600 },
    };
    expect(await ok(['apply', '-f', '-'], JSON.stringify(manifest))).toBe(
      `claim.${GROUP}/lease-kube created\n`,
    );
    const end = await ok(['get', 'claim', 'lease-kube', '-o', 'jsonpath={.status.leaseExpiresAt}']);
    expect(end).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const wide = rows(await ok(['get', 'claims', 'lease-kube', '-o', 'wide']));
    expect(wide[1]![6]).toBe(end);
    await ok(['delete', 'claim', 'lease-kube']);
  });

  it('shows claims and allocation objects in their own columns, by short name too', async () => {
    const claims = rows(await ok(['get', 'claims']));
    expect(claims[0]).toEqual(['NAME', 'POOL', 'VALUE', 'ALLOCATED', 'REASON', 'AGE']);
    expect(claims.slice(1).map((row) => row.slice(0, 5))).toEqual([
      ['leaf1-asn', 'asn-pool', '64512', 'True', 'Allocated'],
      ['spine1-asn', 'asn-pool', '64513', 'True', 'Allocated'],
    ]);
    const wide = rows(await ok(['get', 'claims', '-o', 'wide']));
    expect(wide[0]).toEqual([
      'NAME',
      'POOL',
      'VALUE',
      'ALLOCATED',
      'REASON',
      'ALLOCATION',
      'LEASE ENDS',
      'MESSAGE',
      'AGE',
    ]);
    // A claim without a lease leaves LEASE ENDS empty (the split on runs of spaces skips it).
    expect(wide[1]!.slice(5, 7)).toEqual(['asn-pool-64512', 'holds 64512 of IndexPool asn-pool']);
    const indices = rows(await ok(['get', 'idx']));
    expect(indices[0]).toEqual(['NAME', 'POOL', 'VALUE', 'CLAIM', 'VALID', 'AGE']);
    expect(indices.slice(1).map((row) => row.slice(0, 5))).toEqual([
      ['asn-pool-64512', 'asn-pool', '64512', 'leaf1-asn', 'True'],
      ['asn-pool-64513', 'asn-pool', '64513', 'spine1-asn', 'True'],
      ['asn-pool-65001', 'asn-pool', '65001', 'leaf1-asn', 'True'],
    ]);
    expect(rows(await ok(['get', 'idxpool']))[1]![0]).toBe('asn-pool');
    for (const short of ['ippool', 'pfxpool', 'ipa', 'pfx']) {
      const result = await kubectl.run(['get', short]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('No resources found in default namespace.\n');
    }
  });

  it('answers the seed’s commands with --server alone, as the done-when of issue 18 runs them', async () => {
    const bare = await kubectlFor(allot.url, { kubeconfig: false });
    try {
      const server = ['--server', allot.url];
      const value = await bare.run([
        ...server,
        'get',
        'claim',
        'leaf1-asn',
        '-o',
        'jsonpath={.status.value}',
      ]);
      expect([value.code, value.stdout, value.stderr]).toEqual([0, '64512', '']);
      const table = await bare.run([...server, 'get', 'indexpools']);
      expect(rows(table.stdout)[0]).toEqual(['NAME', 'ALLOCATED', 'AVAILABLE', 'AGE']);
    } finally {
      await bare.close();
    }
  });

  it('waits for a claim’s Allocated condition, with no error line (it lists by name, then watches)', async () => {
    const result = await kubectl.run([
      'wait',
      '--for=condition=Allocated',
      'claim/leaf1-asn',
      '--timeout=10s',
    ]);
    expect(result).toEqual({ code: 0, stdout: `claim.${GROUP}/leaf1-asn condition met\n`, stderr: '' });
  });

  it('says unchanged when the same manifests are applied again', async () => {
    expect(await ok(['apply', '-f', 'docs/examples/seed.yaml'])).toBe(
      [
        `indexpool.${GROUP}/asn-pool unchanged`,
        `claim.${GROUP}/leaf1-asn unchanged`,
        `index.${GROUP}/asn-pool-65001 unchanged`,
        '',
      ].join('\n'),
    );
  });

  it('applies an edit of a pool’s ranges (configured), as a merge patch, keeping the annotation', async () => {
    const edited = [
      `apiVersion: ${API_VERSION}`,
      'kind: IndexPool',
      'metadata:',
      '  name: asn-pool',
      'spec:',
      '  ranges:',
      '    - 64512..65000',
      '    - 4200000000..4294967294',
    ].join('\n');
    expect(await ok(['apply', '-f', '-'], edited)).toBe(`indexpool.${GROUP}/asn-pool configured\n`);
    const pool = parse(await ok(['get', 'indexpool', 'asn-pool', '-o', 'yaml']));
    expect(pool.spec.ranges).toEqual(['64512..65000', '4200000000..4294967294']);
    expect(pool.metadata.generation).toBe(2);
    const applied = JSON.parse(pool.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    expect(applied.spec.ranges).toEqual(['64512..65000', '4200000000..4294967294']);
    expect(await ok(['apply', '-f', '-'], edited)).toBe(`indexpool.${GROUP}/asn-pool unchanged\n`);
  });

  it('keeps a last-applied annotation longer than other annotations may be (a pool of 100 ranges)', async () => {
    const ranges = Array.from({ length: 100 }, (_, i) => `    - ${i * 100}..${i * 100 + 50}`);
    const manifest = [
      `apiVersion: ${API_VERSION}`,
      'kind: IndexPool',
      'metadata: {name: many}',
      'spec:',
      '  ranges:',
      ...ranges,
    ];
    expect(await ok(['apply', '-f', '-'], manifest.join('\n'))).toBe(`indexpool.${GROUP}/many created\n`);
    const pool = parse(await ok(['get', 'indexpool', 'many', '-o', 'yaml']));
    expect(
      pool.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'].length,
    ).toBeGreaterThan(1024);
    expect(await ok(['apply', '-f', '-'], manifest.join('\n'))).toBe(`indexpool.${GROUP}/many unchanged\n`);
    await ok(['delete', 'indexpool', 'many']);
  });

  it('explains a kind’s fields from the OpenAPI v3 document (the request schemas)', async () => {
    const explained = await ok(['explain', 'indexpool.spec']);
    expect(explained).toContain(`GROUP:      ${GROUP}`);
    expect(explained).toMatch(/ranges\t<\[\]\w+> -required-/);
    expect(explained).toContain('reclaimPolicy');
  });

  it('shows an object as YAML, the API’s own shape', async () => {
    const claim = parse(await ok(['get', 'claim', 'leaf1-asn', '-o', 'yaml']));
    expect(claim).toMatchObject({
      apiVersion: API_VERSION,
      kind: 'Claim',
      metadata: { name: 'leaf1-asn', namespace: 'default' },
      spec: { poolRef: { kind: 'IndexPool', name: 'asn-pool' } },
      status: { value: '64512', allocationRef: { kind: 'Index', name: 'asn-pool-64512' } },
    });
    const list = parse(await ok(['get', 'claims', '-o', 'yaml']));
    expect(list.items.map((item: any) => item.metadata.name)).toEqual(['leaf1-asn', 'spine1-asn']);
  });

  it('rejects an invalid manifest, naming the field, and creates nothing', async () => {
    const result = await kubectl.run(['apply', '-f', 'docs/examples/invalid.yaml']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        'Error from server (Invalid): error when creating "docs/examples/invalid.yaml": spec.ranges[1] (150..250) overlaps with spec.ranges[0] (100..200)',
        'Error from server (Invalid): error when creating "docs/examples/invalid.yaml": spec.reclaimPolicy: must be Recycle or Retain (and 1 more)',
        '',
      ].join('\n'),
    );
    // The valid one of the file goes through, as kubectl applies each object on its own.
    expect(result.stdout).toBe(`indexpool.${GROUP}/vlans created\n`);
    const names = rows(await ok(['get', 'indexpools']))
      .slice(1)
      .map((row) => row[0]);
    expect(names).toEqual(['asn-pool', 'vlans']);
    const typo = await kubectl.run(
      ['apply', '-f', '-'],
      `apiVersion: ${API_VERSION}\nkind: IndexPool\nmetadata: {name: typo}\nspec: {ranges: ["1..2"], rangez: ["3"]}\n`,
    );
    expect(typo.stderr).toContain('The IndexPool "typo" is invalid: spec.rangez');
  });

  it('refuses a server-side dry run (kubectl diff) and writes nothing', async () => {
    // The seed's ranges differ from the edited ones the pool has now: kubectl sends a patch.
    const result = await kubectl.run(['apply', '--dry-run=server', '-f', 'docs/examples/seed.yaml']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('server-side dry run is not served');
    const diff = await kubectl.run(['diff', '-f', 'docs/examples/seed.yaml']);
    expect(diff.stderr).toContain('server-side dry run is not served');
    expect(await ok(['get', 'indexpool', 'asn-pool', '-o', 'jsonpath={.spec.ranges}'])).toBe(
      '["64512..65000","4200000000..4294967294"]',
    );
  });

  it('refuses server-side apply with a message that says so', async () => {
    const result = await kubectl.run(['apply', '--server-side', '-f', 'docs/examples/seed.yaml']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('server-side apply (application/apply-patch+yaml) is not served');
  });

  it('deletes a claim (Recycle: its Index goes), and rebinds a Retain claim through the annotation', async () => {
    expect(await ok(['delete', 'claim', 'leaf1-asn'])).toBe(`claim.${GROUP} "leaf1-asn" deleted\n`);
    await eventually(async () => {
      const result = await kubectl.run(['get', 'index', 'asn-pool-64512']);
      expect(result.stderr).toContain('NotFound');
    });
    const retain = [
      `apiVersion: ${API_VERSION}`,
      'kind: IndexPool',
      'metadata: {name: retained}',
      'spec: {ranges: ["100..199"], reclaimPolicy: Retain}',
      '---',
      `apiVersion: ${API_VERSION}`,
      'kind: Claim',
      'metadata: {name: tor9-vlan}',
      'spec: {poolRef: {kind: IndexPool, name: retained}}',
    ].join('\n');
    await ok(['apply', '-f', '-'], retain);
    expect(await ok(['get', 'claim', 'tor9-vlan', '-o', 'jsonpath={.status.value}'])).toBe('100');
    await ok(['delete', 'claim', 'tor9-vlan']);
    await eventually(async () => {
      const ref = await ok(['get', 'index', 'retained-100', '-o', 'jsonpath={.spec.claimRef}']);
      expect(JSON.parse(ref)).toEqual({ name: 'tor9-vlan', uid: '' });
    });
    expect(await ok(['annotate', 'index', 'retained-100', `${GROUP}/allow-binding=true`])).toBe(
      `index.${GROUP}/retained-100 annotated\n`,
    );
    await ok(['apply', '-f', '-'], retain);
    expect(await ok(['get', 'claim', 'tor9-vlan', '-o', 'jsonpath={.status.value}'])).toBe('100');
    const index = parse(await ok(['get', 'index', 'retained-100', '-o', 'yaml']));
    const claim = parse(await ok(['get', 'claim', 'tor9-vlan', '-o', 'yaml']));
    expect(index.spec.claimRef).toEqual({ name: 'tor9-vlan', uid: claim.metadata.uid });
  });

  it('keeps immutable fields through a patch, as a PUT does', async () => {
    const result = await kubectl.run([
      'patch',
      'indexpool',
      'retained',
      '--type=merge',
      '-p',
      '{"spec":{"reclaimPolicy":"Recycle"}}',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('spec.reclaimPolicy');
    expect(await ok(['get', 'indexpool', 'retained', '-o', 'jsonpath={.spec.reclaimPolicy}'])).toBe('Retain');
    const json = await kubectl.run(['patch', 'indexpool', 'retained', '--type=json', '-p', '[]']);
    expect(json.stderr).toContain('JSON patch is not served');
  });

  it('refuses a pool delete while it has allocation objects, as the API does', async () => {
    const result = await kubectl.run(['delete', 'indexpool', 'retained']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('still has allocation objects');
  });
});
