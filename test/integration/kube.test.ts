/**
 * The Kubernetes paths over HTTP, without kubectl (test/kubectl/ has the real one): the same operations
 * and errors as /v1, lists in Kubernetes' shape, Tables on request, and PATCH as a merge patch that
 * obeys every rule of a PUT, never creates, and loses no concurrent patch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, claim, eventually, indexPool, startTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';

let allot: LocalAllot;
const NS = 'kube';
const base = () => `${allot.url}/apis/${API_VERSION}/namespaces/${NS}`;

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base()}/${path}`, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}
const patch = (path: string, body: unknown, type = 'application/merge-patch+json') =>
  call('PATCH', path, body, { 'content-type': type });
const TABLE =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

beforeAll(async () => {
  allot = await startTestAllot();
  expect((await call('POST', 'indexpools', indexPool('asn', ['64512..64520']))).status).toBe(201);
  expect((await call('POST', 'claims', claim('leaf1', { kind: 'IndexPool', name: 'asn' }))).status).toBe(201);
});
afterAll(() => allot.close());

describe('discovery', () => {
  it('lists the group, its version, and seven namespaced resources with ironcore’s short names', async () => {
    const groups = (await (await fetch(`${allot.url}/apis`)).json()) as any;
    expect(groups.groups.map((g: any) => [g.name, g.preferredVersion.version])).toEqual([
      ['pool.networking.metal.ironcore.dev', 'v1alpha1'],
    ]);
    const list = (await (await fetch(`${allot.url}/apis/${API_VERSION}`)).json()) as any;
    expect(list.kind).toBe('APIResourceList');
    expect(
      list.resources.map((r: any) => [r.name, r.singularName, r.kind, r.namespaced, r.shortNames ?? []]),
    ).toEqual([
      ['indexpools', 'indexpool', 'IndexPool', true, ['idxpool']],
      ['ipaddresspools', 'ipaddresspool', 'IPAddressPool', true, ['ippool']],
      ['ipprefixpools', 'ipprefixpool', 'IPPrefixPool', true, ['pfxpool']],
      ['indices', 'index', 'Index', true, ['idx']],
      ['ipaddresses', 'ipaddress', 'IPAddress', true, ['ipa']],
      ['ipprefixes', 'ipprefix', 'IPPrefix', true, ['pfx']],
      ['claims', 'claim', 'Claim', true, []],
    ]);
    expect(list.resources[0].verbs).toEqual(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
  });

  it('points /openapi/v3 at the group version’s document, whose kinds carry their group, version and kind', async () => {
    const root = (await (await fetch(`${allot.url}/openapi/v3`)).json()) as any;
    const url = root.paths[`apis/${API_VERSION}`].serverRelativeURL as string;
    expect(url).toMatch(new RegExp(`^/openapi/v3/apis/${API_VERSION}\\?hash=[0-9A-F]{64}$`));
    const doc = (await (await fetch(`${allot.url}${url}`)).json()) as any;
    expect(doc.openapi).toBe('3.0.0');
    expect(doc.components.schemas.IndexPool['x-kubernetes-group-version-kind']).toEqual([
      { group: 'pool.networking.metal.ironcore.dev', version: 'v1alpha1', kind: 'IndexPool' },
    ]);
    // The same schema the request checks use: spec fields, required ones, no unknown ones.
    expect(doc.components.schemas.IndexPoolSpec.required).toEqual(['ranges']);
    expect(doc.components.schemas.IndexPoolSpec.additionalProperties).toBe(false);
    const item = doc.paths[`/apis/${API_VERSION}/namespaces/{namespace}/claims/{name}`];
    expect(Object.keys(item.patch.requestBody.content)).toEqual(['application/merge-patch+json']);
    expect(item.patch.parameters.map((p: any) => p.name)).toContain('fieldValidation');
  });
});

describe('the shared operations, in Kubernetes’ shapes', () => {
  it('answers lists with kind, apiVersion, resourceVersion and continue', async () => {
    await call('POST', 'indexpools', indexPool('more', ['1..2']));
    const page = await call('GET', 'indexpools?limit=1');
    expect(page.body).toMatchObject({ kind: 'IndexPoolList', apiVersion: API_VERSION });
    expect(page.body.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(page.body.items.map((i: any) => i.metadata.name)).toEqual(['asn']);
    const next = await call(
      'GET',
      `indexpools?limit=1&continue=${encodeURIComponent(page.body.metadata.continue)}`,
    );
    expect(next.body.items.map((i: any) => i.metadata.name)).toEqual(['more']);
    expect(next.body.metadata.continue).toBeUndefined();
    expect((await call('DELETE', 'indexpools/more')).status).toBe(200);
  });

  it('keeps /v1 lists as they were', async () => {
    const v1 = (await (await fetch(`${allot.url}/v1/namespaces/${NS}/claims`)).json()) as any;
    expect(Object.keys(v1).sort()).toEqual(['items', 'metadata']);
  });

  it('answers a Table when asked, with the seed document’s pool columns and priority-1 TOTAL, FREE and QUARANTINED', async () => {
    await allot.stream?.drained();
    const response = await fetch(`${base()}/indexpools`, { headers: { accept: TABLE } });
    const table = (await response.json()) as any;
    expect(table.kind).toBe('Table');
    expect(table.apiVersion).toBe('meta.k8s.io/v1');
    expect(table.columnDefinitions.map((c: any) => [c.name, c.priority])).toEqual([
      ['Name', 0],
      ['Allocated', 0],
      ['Total', 1],
      ['Free', 1],
      ['Quarantined', 1],
      ['Available', 0],
      ['SharedWith', 1],
      ['Age', 0],
    ]);
    // a pool without quarantineSeconds has no status.quarantined: an empty cell
    expect(table.rows.map((r: any) => r.cells.slice(0, 6))).toEqual([['asn', 1, '9', '8', null, 'True']]);
    expect(table.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'asn' } });
    const one = (await (await fetch(`${base()}/claims/leaf1`, { headers: { accept: TABLE } })).json()) as any;
    expect(one.rows.map((r: any) => r.cells.slice(0, 5))).toEqual([
      ['leaf1', 'asn', '64512', 'True', 'Allocated'],
    ]);
    const none = (await (
      await fetch(`${base()}/indices?includeObject=None`, { headers: { accept: TABLE } })
    ).json()) as any;
    expect(none.rows.map((r: any) => [r.cells.slice(0, 5), 'object' in r])).toEqual([
      [['asn-64512', 'asn', '64512', 'leaf1', 'True'], false],
    ]);
  });

  it('answers a Table request of a route without columns as Kubernetes does: JSON when the header takes it, else 406', async () => {
    const TABLE_ONLY = 'application/json;as=Table;v=v1;g=meta.k8s.io';
    for (const family of [base(), `${allot.url}/v1/namespaces/${NS}`]) {
      for (const path of ['indexpools/asn/preview', 'indexpools/asn/occupancy']) {
        const plain = await fetch(`${family}/${path}`);
        const asKubectl = await fetch(`${family}/${path}`, { headers: { accept: TABLE } });
        expect(asKubectl.status, `${family}/${path}`).toBe(200);
        expect(await asKubectl.json()).toEqual(await plain.json());
        const only = await fetch(`${family}/${path}`, { headers: { accept: TABLE_ONLY } });
        expect(only.status, `${family}/${path}`).toBe(406);
        expect(await only.json()).toMatchObject({ kind: 'Status', code: 406, reason: 'NotAcceptable' });
      }
    }
    // A resource that has columns answers a Table on /v1 too.
    const v1 = await fetch(`${allot.url}/v1/namespaces/${NS}/claims`, { headers: { accept: TABLE_ONLY } });
    expect(((await v1.json()) as any).kind).toBe('Table');
    // Routes with no resource: JSON when taken, 406 when not.
    expect((await fetch(`${allot.url}/version`, { headers: { accept: TABLE } })).status).toBe(200);
    expect((await fetch(`${allot.url}/v1/healthz`, { headers: { accept: TABLE_ONLY } })).status).toBe(406);
  });

  it('answers the /v1 errors, and 405 naming PATCH where it is served', async () => {
    const missing = await call('GET', 'claims/nope');
    expect(missing.body).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    const wrong = await call('POST', 'claims/leaf1', {});
    expect(wrong.status).toBe(405);
    expect(wrong.body.message).toContain('use GET, PUT, DELETE, PATCH');
    const v1 = await fetch(`${allot.url}/v1/namespaces/${NS}/claims/leaf1`, { method: 'PATCH' });
    expect(v1.status).toBe(405);
  });

  it('accepts a DELETE with kubectl’s DeleteOptions body', async () => {
    await call('POST', 'indexpools', indexPool('gone', ['1..2']));
    const deleted = await call('DELETE', 'indexpools/gone', {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Background',
    });
    expect(deleted.status).toBe(200);
    expect((await call('GET', 'indexpools/gone')).status).toBe(404);
  });

  it('takes a last-applied annotation up to 64 KiB, any other annotation up to 1024 characters', async () => {
    const long = 'x'.repeat(5000);
    const kept = await call('POST', 'indexpools', {
      ...indexPool('applied', ['1..2']),
      metadata: {
        name: 'applied',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': long },
      },
    });
    expect(kept.status).toBe(201);
    const refused = await call('POST', 'indexpools', {
      ...indexPool('other', ['1..2']),
      metadata: { name: 'other', annotations: { note: long } },
    });
    expect(refused.body.details.causes).toEqual([
      { field: 'metadata.annotations[note]', message: 'must be at most 1024 characters' },
    ]);
    expect((await call('DELETE', 'indexpools/applied')).status).toBe(200);
  });

  it('serves selectors, refuses an unsupported field or a server-side dry run, and reads metadata.name by key', async () => {
    expect((await call('GET', 'claims?labelSelector=a%3Db')).body).toMatchObject({
      kind: 'ClaimList',
      items: [],
    });
    const field = await call('GET', 'claims?fieldSelector=spec.value%3D1');
    expect(field.body).toMatchObject({
      code: 400,
      message: expect.stringContaining('metadata.name, metadata.namespace'),
    });
    expect((await call('GET', 'claims?dryRun=All')).status).toBe(400);
    const one = await call('GET', 'claims?fieldSelector=metadata.name%3Dleaf1');
    expect(one.body).toMatchObject({ kind: 'ClaimList', items: [{ metadata: { name: 'leaf1' } }] });
    const none = await call('GET', 'claims?fieldSelector=metadata.name%3D%3Dnope');
    expect(none.body.items).toEqual([]);
  });
});

describe('PATCH (merge patch)', () => {
  it('merges: a key set, a key removed by null, an array replaced whole', async () => {
    await patch('indexpools/asn', { metadata: { labels: { team: 'net', tier: 'a' } } });
    const patched = await patch('indexpools/asn', {
      metadata: { labels: { tier: null } },
      spec: { ranges: ['64512..64530'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.metadata.labels).toEqual({ team: 'net' });
    expect(patched.body.spec).toEqual({ ranges: ['64512..64530'], reclaimPolicy: 'Recycle' });
    expect(patched.body.metadata.generation).toBe(2);
  });

  it('obeys a PUT’s rules: immutable fields and validation refused with the field, nothing changed', async () => {
    const immutable = await patch('indexpools/asn', { spec: { reclaimPolicy: 'Retain' } });
    expect(immutable.body).toMatchObject({
      code: 422,
      details: { causes: [{ field: 'spec.reclaimPolicy' }] },
    });
    const invalid = await patch('indexpools/asn', { spec: { ranges: ['5..1'] } });
    expect(invalid.status).toBe(422);
    const renamed = await patch('claims/leaf1', { metadata: { name: 'other' } });
    expect(renamed.body.details.causes[0].field).toBe('metadata.name');
    const poolRef = await patch('claims/leaf1', { spec: { poolRef: { name: 'other' } } });
    expect(poolRef.body.details.causes[0].field).toBe('spec.poolRef');
    expect((await call('GET', 'indexpools/asn')).body.spec.ranges).toEqual(['64512..64530']);
  });

  it('never creates: a missing object is 404 and stays missing', async () => {
    const answer = await patch('indexpools/absent', { spec: { ranges: ['1..2'] } });
    expect(answer.body).toMatchObject({ code: 404, reason: 'NotFound' });
    expect((await call('GET', 'indexpools/absent')).status).toBe(404);
  });

  it('allocates a waiting claim’s changed request before it answers', async () => {
    await call('POST', 'claims', claim('exact', { kind: 'IndexPool', name: 'asn' }, { value: 64530 }));
    await call('POST', 'claims', claim('wants', { kind: 'IndexPool', name: 'asn' }, { value: 64530 }));
    expect((await call('GET', 'claims/wants')).body.status.conditions[0].reason).toBe('ValueTaken');
    const answer = await patch('claims/wants', { spec: { value: 64529 } });
    expect(answer.body.status.value).toBe('64529');
  });

  it('loses no concurrent patch: ten patches of ten labels all land', async () => {
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        patch('indexpools/asn', { metadata: { labels: { [`l${i}`]: 'x' } } }),
      ),
    );
    const labels = (await call('GET', 'indexpools/asn')).body.metadata.labels;
    expect(Object.keys(labels).sort()).toEqual([
      'l0',
      'l1',
      'l2',
      'l3',
      'l4',
      'l5',
      'l6',
      'l7',
      'l8',
      'l9',
      'team',
    ]);
  });

  it('takes merge patches only, saying what to send for the others', async () => {
    const cases: [string, string][] = [
      ['application/apply-patch+yaml', 'server-side apply (application/apply-patch+yaml) is not served'],
      ['application/json-patch+json', 'JSON patch is not served'],
      ['application/strategic-merge-patch+json', 'strategic merge patch is not served'],
      ['application/json', 'send application/merge-patch+json'],
    ];
    for (const [type, message] of cases) {
      const answer = await patch('indexpools/asn', type.endsWith('yaml') ? 'spec: {}' : '{}', type);
      expect(answer.body, type).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
      expect(answer.body.message, type).toContain(message);
    }
    expect((await patch('indexpools/asn', '[1]')).body).toMatchObject({ code: 400, reason: 'BadRequest' });
  });

  it('releases through the same DELETE: Recycle frees the value', async () => {
    expect((await call('DELETE', 'claims/exact')).status).toBe(200);
    await eventually(async () => expect((await call('GET', 'indices/asn-64530')).status).toBe(404));
  });
});

describe('a list across every namespace', () => {
  it('finds claims in namespaces that have no pool, whichever way the claim was made', async () => {
    const suffix = Math.random().toString(36).slice(2, 8);
    // No pool in any of these: a claim that fits any pool (written beside the pool's read), one with a
    // value (checked against the pool first), and one naming no kind of pool at all (PoolRefInvalid).
    const made = [
      [`np-any-${suffix}`, claim('c1', { kind: 'IndexPool', name: 'none' })],
      [`np-value-${suffix}`, claim('c2', { kind: 'IndexPool', name: 'none' }, { value: 7 })],
      [`np-invalid-${suffix}`, claim('c3', { kind: 'Pod', name: 'none' })],
    ] as const;
    for (const [namespace, body] of made) {
      const response = await fetch(`${allot.url}/apis/${API_VERSION}/namespaces/${namespace}/claims`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status, namespace).toBe(201);
    }
    // Right after the answers, as a client that lists next sees it.
    const listed = (await (await fetch(`${allot.url}/apis/${API_VERSION}/claims?limit=1000`)).json()) as any;
    const found = listed.items.map((item: any) => [item.metadata.namespace, item.metadata.name]);
    expect(found).toEqual(
      expect.arrayContaining([
        [`np-any-${suffix}`, 'c1'],
        [`np-value-${suffix}`, 'c2'],
        [`np-invalid-${suffix}`, 'c3'],
      ]),
    );
  });
});
