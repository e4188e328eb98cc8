/**
 * Hostile input (issue 5, part 4): fast-check generated requests against every route of lib/http/routes.ts
 * (the Kubernetes paths too),
 * sent over HTTP to the local server. Every answer is below 500; every error is the contract's Status body
 * with its code; and a rejected request leaves the table as it was (every committed item change is
 * captured by the local store, so even a write that is undone again is seen).
 */
import '../helpers/quiet.ts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalAllot } from '../../lib/local/server.ts';
import type { ItemChange } from '../../lib/local/store/dynalite.ts';
import { ALL_ROUTES } from '../../lib/http/routes.ts';
import { API_VERSION, claim, client, indexPool, startTestAllot } from '../helpers/allot.ts';
import { recordFigure } from '../helpers/figures.ts';

let allot: LocalAllot;
let changes: ItemChange[] = [];
const figures = { requests: 0, rejected: 0, accepted: 0, serverErrors: 0, violations: 0 };

beforeAll(async () => {
  // Every watch answer ends within a moment: a hostile watch is answered, not held open.
  allot = await startTestAllot({ stream: false, watch: { answerMs: 200 } });
  const api = client(allot.url, 'fuzz');
  // Objects for the item routes to find: one pool of each kind, a claim and an allocation object.
  expect((await api.post('indexpools', indexPool('p', ['1..100']))).status).toBe(201);
  const ipPool = { metadata: { name: 'ip4' }, spec: { prefixes: ['10.0.0.0/28'] } };
  expect((await api.post('ipaddresspools', ipPool)).status).toBe(201);
  const prefixPool = {
    metadata: { name: 'pp' },
    spec: { prefixes: ['10.1.0.0/24'], allocationPrefixLength: 28 },
  };
  expect((await api.post('ipprefixpools', prefixPool)).status).toBe(201);
  expect((await api.post('claims', claim('c', { kind: 'IndexPool', name: 'p' }))).status).toBe(201);
  (await allot.store.changes(allot.table.tableName)).onChange((change) => changes.push(change));
});
afterAll(async () => {
  recordFigure('hostile input', figures);
  await allot.close();
});

// ---------------------------------------------------------------- generators

const hugeNumber = fc.constantFrom(
  '9223372036854775807',
  '9223372036854775808',
  '18446744073709551616',
  '1e400',
  '-0',
  '0x10',
  '1.5',
  '-5',
  '０１２', // full-width digits
);
const hostileString = fc.oneof(
  fc.constantFrom(
    '',
    'a#b',
    'a/b',
    'p',
    'c',
    'default',
    'fuzz',
    '..',
    '.',
    '-a',
    'A',
    'ünïcödé',
    '🦄',
    'a\u0000b',
    'a%2Fb',
    '1..2..3',
    '-5',
    '0x10',
    '10..1',
    '10.0.0.1/24',
    '::ffff:10.0.0.1',
    '::ffff:10.0.0.0/120',
    '010.0.0.1',
    'fe80::1%eth0',
    '10.0.0.0/33',
    '2001:db8::/129',
    '1.2.3.4.5',
    'p-10-0-0-1',
    'p-5',
    'O#fuzz#claims#0',
    '__proto__',
    'constructor',
    'x'.repeat(64),
    'y'.repeat(254),
    'z'.repeat(5000),
  ),
  hugeNumber,
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
);
const deep = (depth: number, leaf: unknown) => {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
};
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53 + 1, 1e300, -1e300, Number.MAX_SAFE_INTEGER),
  fc.constantFrom({}, [], [null], { toString: 'x' }, { __proto__: { polluted: 1 } }),
  fc.integer({ min: 1, max: 3000 }).map((depth) => deep(depth, 1)),
  fc.integer({ min: 0, max: 4000 }).map((n) => Array.from({ length: n }, (_, i) => i)),
  fc.jsonValue({ maxDepth: 4 }),
);

const kinds = fc.constantFrom('IndexPool', 'IPAddressPool', 'IPPrefixPool', 'Claim', 'Index', 'Nope', '');
const poolRef = fc.oneof(
  fc.record({ kind: fc.oneof(kinds, hostileValue), name: fc.oneof(hostileString, hostileValue) }),
  fc.record({
    kind: kinds,
    name: fc.constantFrom('p', 'ip4', 'pp'),
    apiVersion: fc.oneof(fc.constant(API_VERSION), hostileString),
  }),
  hostileValue,
);
const metadata = fc.record(
  {
    name: fc.oneof(hostileString, hostileValue),
    namespace: fc.oneof(hostileString, hostileValue),
    labels: fc.oneof(
      fc.dictionary(hostileString, fc.oneof(hostileString, hostileValue), { maxKeys: 3 }),
      hostileValue,
    ),
    annotations: fc.oneof(
      fc.constant({ 'pool.networking.metal.ironcore.dev/allow-binding': 'true' }),
      fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
      hostileValue,
    ),
    uid: hostileValue,
  },
  { requiredKeys: [] },
);
const specFields = fc.record(
  {
    ranges: fc.oneof(
      fc.array(fc.oneof(hostileString, hostileValue, hugeNumber), { maxLength: 5 }),
      hostileValue,
    ),
    prefixes: fc.oneof(fc.array(hostileString, { maxLength: 4 }), hostileValue),
    exclude: fc.oneof(fc.array(hostileString, { maxLength: 4 }), hostileValue),
    gateway: hostileValue,
    excludeNetworkAndBroadcast: hostileValue,
    allocationPrefixLength: fc.oneof(fc.integer({ min: -5, max: 140 }), hostileValue),
    reclaimPolicy: fc.oneof(fc.constantFrom('Recycle', 'Retain', 'retain', ''), hostileValue),
    poolRef,
    value: fc.oneof(hostileString, hostileValue, hugeNumber),
    within: fc.oneof(hostileString, hostileValue),
    reserved: fc.oneof(fc.array(hostileString, { maxLength: 300 }), hostileValue),
    owner: hostileValue,
    index: fc.oneof(fc.integer({ min: -10, max: 200 }), hugeNumber, hostileValue),
    address: fc.oneof(hostileString, hostileValue),
    prefix: fc.oneof(hostileString, hostileValue),
    claimRef: fc.oneof(
      fc.record({ name: fc.oneof(hostileString, hostileValue), uid: hostileValue }, { requiredKeys: [] }),
      hostileValue,
    ),
    unknownField: hostileValue,
  },
  { requiredKeys: [] },
);
const objectBody = fc.record(
  {
    apiVersion: fc.oneof(fc.constant(API_VERSION), hostileValue),
    kind: fc.oneof(kinds, hostileValue),
    metadata: fc.oneof(metadata, hostileValue),
    spec: fc.oneof(specFields, hostileValue),
    status: hostileValue,
  },
  { requiredKeys: [] },
);
const rawBody = fc.oneof(
  fc.constantFrom(
    '',
    'null',
    '[]',
    '"text"',
    '1e400',
    '{',
    '{"a":}',
    '\uFEFF{}',
    '{"metadata":{"name":"x"}}x',
    'NaN',
  ),
  fc.string({ maxLength: 40 }),
  fc.constant(`{"pad":"${'x'.repeat(70_000)}"}`),
  fc.integer({ min: 2000, max: 30_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
);
const body = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 5, arbitrary: objectBody.map((value) => JSON.stringify(value)) },
  { weight: 2, arbitrary: hostileValue.map((value) => JSON.stringify(value) ?? 'undefined') },
  { weight: 2, arbitrary: rawBody },
);
const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/merge-patch+json',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  '',
  'APPLICATION/JSON',
  'application/json;;;',
  // What kubectl and client-go send for other patches (issue 35).
  'application/json-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
);
/** The Accept headers kubectl and client-go send, and hostile ones (issue 35). */
const TABLE_V1 = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const accept = fc.oneof(
  fc.constantFrom(
    undefined,
    `${TABLE_V1},application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json`,
    TABLE_V1,
    `${TABLE_V1};includeObject=Object`,
    'application/json;as=Table;v=v1beta1;g=meta.k8s.io',
    'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json',
    'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
    'application/vnd.kubernetes.protobuf,application/json',
    'application/vnd.kubernetes.protobuf',
    'application/yaml',
    'application/json;stream=watch',
    '*/*',
    'application/*;q=0',
    'application/json;q=0',
    'text/html',
    '',
    ',,,',
    ';;as=Table',
    'application/json;as=Table;v=v1;g=meta.k8s.io;q=abc',
  ),
  fc.string({ unit: fc.constantFrom(...'application/json;as=Table,v1g.*q=0 '.split('')), maxLength: 60 }),
);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD');
const pathSegment = fc.oneof(
  fc.constantFrom('fuzz', 'p', 'c', 'ip4', 'pp', 'p-5', 'ip4-10-0-0-1'),
  hostileString.map((text) => encodeURIComponent(text)),
  fc.constantFrom('%', '%zz', '%2F', '%23', 'a%00b', '..', '.', '%C0%AF', 'a b'),
);
const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom(
    '?limit=0',
    '?limit=-1',
    '?limit=1001',
    '?limit=abc',
    '?limit=1e3',
    '?limit=5&limit=6',
    '?continue=garbage',
    '?continue=eyJhZnRlciI6MX0',
    '?pool=a%23b',
    '?pool=p',
    '?cascade=maybe',
    '?cascade=true',
    '?cascade=',
    // Kubernetes paths' own: a selected list, a dry run, a watch, a Table's rows.
    '?fieldSelector=metadata.name%3Dp',
    '?fieldSelector=metadata.name%3D%25',
    '?fieldSelector=spec.x%3D1',
    '?labelSelector=a',
    '?dryRun=All',
    '?watch=1',
    '?includeObject=Nope',
    // Selectors and watches (issue 26).
    '?labelSelector=x%20in%20(',
    '?labelSelector=a%3E99999999999999999999',
    '?labelSelector=%21%21a',
    '?labelSelector=a%2Fb%2Fc%3Dd',
    '?labelSelector=' + 'k'.repeat(300),
    '?fieldSelector=status.phase%3D%5C',
    '?fieldSelector=a%3D%3Db%3D%3Dc',
    '?fieldSelector=metadata.namespace%3Dother',
    '?fieldSelector=spec.poolRef.name%3Dp%2Cmetadata.name!%3Dx',
    '?watch=true&resourceVersion=-1',
    '?watch=true&resourceVersion=1e99',
    '?watch=true&resourceVersion=99999999999999999999',
    '?watch=true&resourceVersion=5000',
    '?watch=true&resourceVersion=999&allowWatchBookmarks=true',
    '?watch=true&timeoutSeconds=abc',
    '?watch=true&timeoutSeconds=99999999999',
    '?watch=true&allowWatchBookmarks=maybe',
    '?watch=true&sendInitialEvents=true',
    '?watch=true&resourceVersionMatch=Exact',
    '?watch=true&labelSelector=a%3Db&fieldSelector=metadata.name%3Dc',
    '?watch=maybe',
    '?continue=eyJhZnRlciI6ImEiLCJydiI6LTF9',
    '?continue=eyJucyI6IiMjIiwibmV4dCI6dHJ1ZX0',
    // What kubectl and client-go add (issue 35).
    '?fieldValidation=Strict',
    '?fieldValidation=Warn',
    '?fieldValidation=Nope',
    '?dryRun=',
    '?dryRun=All&dryRun=All',
    '?includeObject=Object',
    '?includeObject=None',
    '?resourceVersion=0&resourceVersionMatch=NotOlderThan',
    '?limit=500&resourceVersion=0',
    '?limit=500&continue=',
    '?timeoutSeconds=-1',
    '?timeoutSeconds=0&watch=true',
    '?propagationPolicy=Foreground',
    '?gracePeriodSeconds=0',
    '?pretty=true',
    '?watch=true&includeObject=Object',
  ),
  // Selectors from their grammar's alphabet, in any order.
  fc
    .tuple(
      fc.constantFrom('labelSelector', 'fieldSelector'),
      fc.string({ unit: fc.constantFrom(...'ab.=!(),<>/\ 	in0-_'.split('')), maxLength: 30 }),
      fc.boolean(),
    )
    .map(([name, text, watching]) => `?${name}=${encodeURIComponent(text)}${watching ? '&watch=true' : ''}`),
  fc.string({ maxLength: 20 }).map((text) => `?${encodeURIComponent(text)}=${encodeURIComponent(text)}`),
);
/** A path made from a route of the table, with hostile parameters, and sometimes a segment more or less. */
const path = fc
  .record({
    route: fc.constantFrom(...ALL_ROUTES),
    namespace: pathSegment,
    name: pathSegment,
    mangle: fc.constantFrom(
      'none',
      'none',
      'none',
      'trailingSlash',
      'extraSegment',
      'dropLast',
      'doubleSlash',
    ),
    query,
  })
  .map(({ route, namespace, name, mangle, query }) => {
    let text = route.path.replace('{namespace}', namespace).replace('{name}', name);
    if (mangle === 'trailingSlash') text += '/';
    if (mangle === 'extraSegment') text += '/extra';
    if (mangle === 'dropLast') text = text.slice(0, text.lastIndexOf('/'));
    if (mangle === 'doubleSlash') text = text.replace('/v1/', '/v1//');
    return text + query;
  });

// ---------------------------------------------------------------- the checks

interface Sent {
  method: string;
  path: string;
  contentType?: string;
  accept?: string;
  body?: string;
}

/** Key → first old image and last new image of what the request committed. */
function netChanges(list: ItemChange[]): string[] {
  const byKey = new Map<string, { before?: unknown; after?: unknown }>();
  for (const change of list) {
    const image = (change.newImage ?? change.oldImage)!;
    const key = `${image.pk?.S}|${image.sk?.S}`;
    const entry = byKey.get(key) ?? { before: change.oldImage };
    entry.after = change.newImage;
    byKey.set(key, entry);
  }
  return [...byKey]
    .filter(([, { before, after }]) => JSON.stringify(before) !== JSON.stringify(after))
    .map(([key]) => key);
}

async function send(request: Sent): Promise<{ status: number; text: string; written: string[] }> {
  changes = [];
  const headers: Record<string, string> = {};
  if (request.contentType !== undefined) headers['content-type'] = request.contentType;
  if (request.accept !== undefined) headers.accept = request.accept;
  const response = await fetch(`${allot.url}${request.path}`, {
    method: request.method,
    headers,
    body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body,
  });
  const text = await response.text();
  figures.requests++;
  return { status: response.status, text, written: netChanges(changes) };
}

function problems(request: Sent, answer: { status: number; text: string; written: string[] }): string[] {
  const found: string[] = [];
  if (answer.status >= 500) {
    figures.serverErrors++;
    found.push(`answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  }
  if (answer.status >= 400) {
    figures.rejected++;
    if (request.method !== 'HEAD') {
      let status: any;
      try {
        status = JSON.parse(answer.text);
      } catch {
        found.push(`answered ${answer.status} with a body that is not JSON: ${answer.text.slice(0, 100)}`);
      }
      if (status) {
        const keys = Object.keys(status)
          .filter((key) => key !== 'details')
          .sort();
        if (
          status.kind !== 'Status' ||
          status.apiVersion !== 'v1' ||
          status.status !== 'Failure' ||
          status.code !== answer.status ||
          typeof status.reason !== 'string' ||
          typeof status.message !== 'string' ||
          JSON.stringify(keys) !==
            JSON.stringify(['apiVersion', 'code', 'kind', 'message', 'reason', 'status'])
        )
          found.push(`answered ${answer.status} without the Status shape: ${answer.text.slice(0, 200)}`);
      }
    }
    if (answer.written.length > 0)
      found.push(`was rejected (${answer.status}) but changed ${answer.written.join(', ')}`);
  } else figures.accepted++;
  if (found.length > 0) figures.violations += found.length;
  return found.map(
    (problem) =>
      `${request.method} ${request.path.slice(0, 200)} accept=${request.accept ?? ''} ${request.body?.slice(0, 200) ?? ''}: ${problem}`,
  );
}

describe('hostile requests against every route', () => {
  it('are answered below 500, errors in the Status shape, and a rejected request writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ method, path, contentType, accept, body }, { requiredKeys: ['method', 'path'] }),
        async (request) => {
          expect(problems(request, await send(request))).toEqual([]);
        },
      ),
      { numRuns: 700 },
    );
  });

  it('reach every route of the table with a body aimed at its resource', async () => {
    for (const route of ALL_ROUTES) {
      await fc.assert(
        fc.asyncProperty(objectBody, pathSegment, contentType, accept, async (value, name, type, wanted) => {
          const request: Sent = {
            method: route.method,
            path: route.path.replace('{namespace}', 'fuzz').replace('{name}', name),
            contentType: type ?? 'application/json',
            accept: wanted,
            body: JSON.stringify(value),
          };
          expect(problems(request, await send(request))).toEqual([]);
        }),
        { numRuns: 15 },
      );
    }
  }, 120_000);

  it('finds what the checks look for: a rejected request that wrote is reported', () => {
    const answer = { status: 422, text: '{"kind":"Status"}', written: ['O#fuzz#claims#0|c'] };
    const found = problems({ method: 'PUT', path: '/v1/x' }, answer);
    figures.violations -= found.length;
    figures.rejected--;
    expect(found.join()).toMatch(/without the Status shape/);
    expect(found.join()).toMatch(/changed O#fuzz#claims#0\|c/);
  });
});
