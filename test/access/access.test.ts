/**
 * Access (issue 5, part 5). The deployed template's IAM authorization on every route, PITR, deletion
 * protection, RETAIN, encryption and cdk-nag are checked in test/cdk/construct.test.ts; this file adds:
 *
 * - least privilege from behaviour: every DynamoDB call each function makes while serving a workload that
 *   walks every route (and the stream function repairing after it) is recorded, and the actions and
 *   indexes it used must be exactly what the template grants that function;
 * - tenant isolation: every key, key condition and key-bearing value of every call made while serving
 *   `/v1/namespaces/tenant-a/...` belongs to `tenant-a`, although `tenant-b` holds objects of the same
 *   names, so an IAM policy on `/v1/namespaces/<tenant>/*` (docs/deploy.md, "Tenant isolation by namespace") suffices;
 * - the local server and its store listen on 127.0.0.1 only.
 */
import '../helpers/quiet.ts';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import fc from 'fast-check';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpHandler } from '../../functions/http.ts';
import { createStreamHandler } from '../../functions/stream.ts';
import { createRepairHandler } from '../../functions/repair.ts';
import { createHistoryHandler } from '../../functions/history.ts';
import { HISTORY_FILTER_PATTERNS } from '../../lib/cloud/stream-filter.ts';
import { RESOURCES } from '../../lib/domain/kinds.ts';
import { KUBE_PREFIX } from '../../lib/http/routes.ts';
import { createClaimResourceHandler } from '../../functions/claim-resource.ts';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { vi } from 'vitest';
import { AllotService, type AllotFunctionName } from '../../lib/cloud/construct.ts';
import { fakeContext } from '../../lib/local/server.ts';
import type { AllotStore } from '../../lib/local/stores.ts';
import { nameProblem } from '../../lib/domain/names.ts';
import { ALL_ROUTES, matchRoute } from '../../lib/http/routes.ts';
import { Table } from '../../lib/store/table.ts';
import { httpEvent } from '../helpers/events.ts';
import { Faults, faultyClient, seededRandom } from '../helpers/faults.ts';
import { dynamoPermissions } from '../helpers/permissions.ts';
import { StreamQueue } from '../helpers/stream-queue.ts';
import { startTestAllot, startTestStore } from '../helpers/allot.ts';
import {
  cloudFormationRequest,
  startResponseListener,
  type ResponseListener,
} from '../helpers/cloudformation.ts';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';

const FUNCTIONS: AllotFunctionName[] = [
  'api',
  'claim',
  'release',
  'stream',
  'repair',
  'claim-resource',
  'history',
];
const ALLOW_BINDING = 'pool.networking.metal.ironcore.dev/allow-binding';

let store: AllotStore;
let tableName: string;
const recorders = {} as Record<AllotFunctionName, Faults>;
const handlers = {} as Record<'api' | 'claim' | 'release' | 'repair', ReturnType<typeof createHttpHandler>>;
let streamHandler: ReturnType<typeof createStreamHandler>;
let historyHandler: ReturnType<typeof createHistoryHandler>;
let claimResource: ReturnType<typeof createClaimResourceHandler>;
let responses: ResponseListener;
let queue: StreamQueue;
/** The stream's second reader's share: every change of a pool, claim or allocation object. */
let historyQueue: StreamQueue;
let observer: Table;
const routesServed = new Set<string>();
const random = seededRandom(5);

/** Calls the function the route table assigns to the request, as API Gateway would. */
async function call(method: string, path: string, body?: unknown) {
  const rawPath = path.split('?')[0]!;
  const { match } = matchRoute(method, rawPath);
  if (match) routesServed.add(`${match.route.method} ${match.route.path}`);
  const name = match?.route.function ?? 'api';
  const event = httpEvent(method, path, body);
  // kubectl's PATCH is a merge patch.
  if (method === 'PATCH') event.headers = { 'content-type': 'application/merge-patch+json' };
  const result = (await handlers[name](event, fakeContext(name))) as APIGatewayProxyStructuredResultV2;
  // A watch answers a JSON line per event.
  const answer = path.includes('watch=true')
    ? (result.body ?? '')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as unknown)
    : JSON.parse(result.body ?? 'null');
  return { status: result.statusCode ?? 0, body: answer };
}

const drain = async () => {
  await queue.drain((event) => streamHandler(event), random);
  await historyQueue.drain((event) => historyHandler(event), random);
  // The last batch delivered again, as a mapping may: the history reads what it already appended.
  await historyQueue.replay(
    (event) => historyHandler(event),
    () => 0.999999,
  );
};

/**
 * The repair sweep over the namespace after the stream lost the records `which` picks (for good, as
 * when they go to the dead-letter queue), past the grace period of the objects they leave behind.
 */
async function repairAfterLoss(
  base: string,
  which: (image: Record<string, any>, eventName: string) => boolean,
) {
  expect(
    await queue.lose((record) =>
      which(unmarshall((record.dynamodb!.NewImage ?? record.dynamodb!.OldImage) as never), record.eventName!),
    ),
  ).toBeGreaterThan(0);
  const now = Date.now();
  const clock = vi.spyOn(Date, 'now').mockImplementation(() => now + 60_000);
  try {
    const answer = await call('POST', `${base}/repair`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body;
  } finally {
    clock.mockRestore();
  }
}

/**
 * `Custom::AllotClaim` as CloudFormation drives it: a create (a prefix of a range pool: the overlap
 * check), the same create again, a labels update, a create that fails and is released, a delete.
 */
async function customResources(ns: string) {
  const spec = { poolRef: { kind: 'IPPrefixPool', name: 'lengths' }, prefixLength: 22 };
  const properties = { Namespace: ns, Spec: spec };
  const send = async (type: 'Create' | 'Update' | 'Delete', options: Record<string, unknown>) => {
    const responseUrl = responses.url();
    await claimResource(
      cloudFormationRequest(type, { responseUrl, ...options }),
      fakeContext('claim-resource'),
    );
    return (await responses.responseTo(responseUrl)).body;
  };
  const created = await send('Create', { properties });
  expect(created.Status, created.Reason).toBe('SUCCESS');
  expect((await send('Create', { properties })).Data).toEqual(created.Data);
  const physicalId = created.PhysicalResourceId;
  const updated = await send('Update', {
    physicalId,
    properties: { ...properties, Labels: { team: 'net' } },
    oldProperties: properties,
  });
  expect(updated.Status, updated.Reason).toBe('SUCCESS');
  const missing = { Namespace: ns, Spec: { poolRef: { kind: 'IndexPool', name: 'missing' } } };
  expect((await send('Create', { logicalId: 'Missing', properties: missing })).Status).toBe('FAILED');
  expect((await send('Delete', { physicalId, properties })).Status).toBe('SUCCESS');
}

/** Every route, the stream's every case, and the paths that only races take, in one namespace. */
async function workload(ns: string) {
  const base = `/v1/namespaces/${ns}`;
  const ok = async (method: string, path: string, body?: unknown) => {
    const answer = await call(method, `${base}/${path}`, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer;
  };
  const poolRef = (kind: string, name: string) => ({ poolRef: { kind, name } });
  await ok('POST', 'indexpools', { metadata: { name: 'shared' }, spec: { ranges: ['1..10'] } });
  await ok('PUT', 'indexpools/kept', { spec: { ranges: ['1..5'], reclaimPolicy: 'Retain' } });
  await ok('POST', 'ipaddresspools', { metadata: { name: 'ips' }, spec: { prefixes: ['10.0.0.0/29'] } });
  await ok('PUT', 'ipaddresspools/ips', { spec: { prefixes: ['10.0.0.0/28'] } });
  await ok('POST', 'ipprefixpools', {
    metadata: { name: 'pfx' },
    spec: { prefixes: ['10.1.0.0/24'], allocationPrefixLength: 28 },
  });
  await ok('PUT', 'ipprefixpools/pfx', { spec: { prefixes: ['10.1.0.0/23'], allocationPrefixLength: 28 } });
  // Pools of other namespaces shared with this one: none here (test/access/sharing.test.ts has some).
  expect((await ok('GET', 'sharedpools')).body.items).toEqual([]);
  await ok('POST', 'claims', { metadata: { name: 'web' }, spec: poolRef('IndexPool', 'shared') });
  await ok('PUT', 'claims/web', { metadata: { name: 'web' }, spec: poolRef('IndexPool', 'shared') });
  await ok('PUT', 'claims/db', { spec: { ...poolRef('IPAddressPool', 'ips'), value: '10.0.0.3' } });
  await ok('POST', 'claims', { metadata: { name: 'net' }, spec: poolRef('IPPrefixPool', 'pfx') });
  // A claim that waits for its pool; the stream allocates it when the pool appears (waiting index).
  await ok('POST', 'claims', { metadata: { name: 'early' }, spec: poolRef('IndexPool', 'later') });
  await drain();
  await ok('POST', 'indexpools', { metadata: { name: 'later' }, spec: { ranges: ['7..9'] } });
  // The pool's creation record is lost: the sweep recounts it and allocates the claim that waits for it.
  const recounted = await repairAfterLoss(
    base,
    (image) => image.t === 'pool' && image.metadata.name === 'later',
  );
  expect(recounted.fixed.poolCounts).toBe(1);
  // Pre-provisioned under a custom name (a name item), offered to a claim that does not exist yet.
  const offered = { metadata: { name: 'reserved-for-app', annotations: { [ALLOW_BINDING]: 'true' } } };
  await ok('PUT', 'indices/reserved-for-app', {
    ...offered,
    spec: { ...poolRef('IndexPool', 'kept'), index: 4, claimRef: { name: 'app' } },
  });
  await ok('POST', 'indices', {
    metadata: { name: 'kept-5' },
    spec: { ...poolRef('IndexPool', 'kept'), index: 5 },
  });
  await ok('POST', 'ipaddresses', {
    metadata: { name: 'ips-10-0-0-9' },
    spec: { ...poolRef('IPAddressPool', 'ips'), address: '10.0.0.9' },
  });
  await ok('PUT', 'ipprefixes/gw-net', {
    spec: { ...poolRef('IPPrefixPool', 'pfx'), prefix: '10.1.1.0/28' },
  });
  await ok('POST', 'ipprefixes', {
    metadata: { name: 'pfx-10-1-1-16-28' },
    spec: { ...poolRef('IPPrefixPool', 'pfx'), prefix: '10.1.1.16/28' },
  });
  await ok('POST', 'claims', { metadata: { name: 'app' }, spec: poolRef('IndexPool', 'kept') });
  // A pool of a range of prefix lengths: a claim's and a user's prefix are checked for overlap.
  await ok('POST', 'ipprefixpools', {
    metadata: { name: 'lengths' },
    spec: { prefixes: ['10.9.0.0/16'], allocationPrefixLengths: { min: 20, max: 28, default: 24 } },
  });
  await ok('POST', 'claims', { metadata: { name: 'subnet' }, spec: poolRef('IPPrefixPool', 'lengths') });
  await customResources(ns);
  // The stack's /22 is released, and reclaimed once the stream has its REMOVE: before that it may still
  // hold the user's prefix below (where it lands depends on how far the stream had counted the pool).
  await drain();
  await ok('POST', 'ipprefixes', {
    metadata: { name: 'lengths-10-9-128-0-26' },
    spec: { ...poolRef('IPPrefixPool', 'lengths'), prefix: '10.9.128.0/26' },
  });
  // A pool carved from that claim's value, and the claim it keeps from being released.
  await ok('POST', 'ipaddresspools', {
    metadata: { name: 'subnet-hosts' },
    spec: { prefixesFrom: { claimRef: { name: 'subnet' } } },
  });
  await ok('POST', 'claims', { metadata: { name: 'host' }, spec: poolRef('IPAddressPool', 'subnet-hosts') });
  expect((await call('DELETE', `${base}/claims/subnet`)).status).toBe(409);
  await drain();
  for (const pool of [
    'indexpools/shared',
    'ipaddresspools/ips',
    'ipprefixpools/pfx',
    'ipprefixpools/lengths',
  ])
    await ok('GET', `${pool}/preview?count=2`);
  for (const resource of [
    'indexpools',
    'ipaddresspools',
    'ipprefixpools',
    'claims',
    'indices',
    'ipaddresses',
    'ipprefixes',
  ])
    await ok('GET', `${resource}?limit=2`);
  await ok('GET', 'indices?pool=kept');
  await ok('GET', 'indexpools/shared');
  await ok('GET', 'ipaddresspools/ips');
  await ok('GET', 'ipprefixpools/pfx');
  await ok('GET', 'indexpools/shared/occupancy?buckets=4');
  await ok('GET', 'ipaddresspools/ips/occupancy?within=10.0.0.0/29');
  await ok('GET', 'ipprefixpools/pfx/occupancy');
  // Who held the values (the history function wrote the holdings as it drained).
  await ok('GET', 'indexpools/shared/history?value=1');
  await ok('GET', 'ipaddresspools/ips/history');
  await ok('GET', 'ipprefixpools/pfx/history?at=2026-01-01T00:00:00Z');
  await ok('GET', 'claims/web/history');
  await ok('GET', 'claims/web');
  await ok('GET', 'indices/reserved-for-app');
  await ok('GET', 'ipaddresses/ips-10-0-0-9');
  await ok('GET', 'ipprefixes/gw-net');
  await ok('PUT', 'ipaddresses/ips-10-0-0-9', {
    metadata: { labels: { a: 'b' } },
    spec: { ...poolRef('IPAddressPool', 'ips'), address: '10.0.0.9' },
  });
  // The claim function loses a settle: its claim is released just before, so it gives its value back.
  let armed = true;
  recorders.claim.beforeCall = async (operation, input) => {
    const key = JSON.stringify(input.Key ?? '');
    if (armed && operation === 'UpdateItem' && key.includes('"race"')) {
      armed = false;
      await ok('DELETE', 'claims/race');
    }
  };
  await ok('POST', 'claims', { metadata: { name: 'race' }, spec: poolRef('IndexPool', 'shared') });
  recorders.claim.beforeCall = undefined;
  expect(armed).toBe(false);
  await ok('DELETE', 'claims/web'); // Recycle
  // Its release record is lost: the sweep applies the Recycle policy to the object left behind.
  const reclaimed = await repairAfterLoss(base, (image, event) => event === 'REMOVE' && image.t === 'claim');
  expect(reclaimed.fixed.orphanedAllocation).toBe(1);
  await ok('DELETE', 'claims/app'); // Retain: uid cleared, offered back
  await drain();
  await ok('DELETE', 'indices/reserved-for-app');
  await ok('DELETE', 'ipaddresses/ips-10-0-0-9');
  await ok('DELETE', 'ipprefixes/gw-net');
  expect((await call('DELETE', `${base}/ipaddresspools/ips`)).status).toBe(409);
  await ok('DELETE', 'ipaddresspools/ips?cascade=true');
  await ok('DELETE', 'ipprefixpools/pfx?cascade=true');
  await ok('DELETE', 'ipaddresspools/subnet-hosts?cascade=true');
  await ok('DELETE', 'ipprefixpools/lengths?cascade=true');
  await ok('DELETE', 'indexpools/kept?cascade=true');
  await ok('DELETE', 'claims/early');
  await drain();
  await ok('DELETE', 'indexpools/later');
  await ok('DELETE', 'indexpools/shared');
  await drain();
  // Leases (issue 25): renewed on /v1 and on the Kubernetes path, then past their end a read finds one
  // gone (and deletes it) and the expiry run (the repair function, every minute) finds the other by the
  // leases index. The run is nobody's request: it reads the index's global shards (no namespace's) and
  // the claims it finds there, here only this namespace's (the other tenant's ended in its own run).
  await ok('PUT', 'indexpools/leasing', { spec: { ranges: ['1..5'] } });
  const lease = { ...poolRef('IndexPool', 'leasing'), leaseSeconds: 60 };
  await ok('PUT', 'claims/lease-a', { spec: lease });
  await ok('PUT', 'claims/lease-b', { spec: lease });
  await ok('POST', 'claims/lease-a/renew');
  const renewed = await call('POST', `${KUBE_PREFIX}/namespaces/${ns}/claims/lease-b/renew`);
  expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
  await drain();
  const now = Date.now();
  const later = vi.spyOn(Date, 'now').mockImplementation(() => now + 120_000);
  try {
    expect((await call('GET', `${base}/claims/lease-a`)).status).toBe(404);
    const run = await handlers.repair({ operation: 'expireLeases' } as never, fakeContext('repair'));
    expect(run).toEqual({ kind: 'LeaseExpiry', expired: 1 });
  } finally {
    later.mockRestore();
  }
  await drain();
  await ok('DELETE', 'indexpools/leasing');
  await drain();
  await kubeWorkload(ns);
  await call('GET', '/v1/healthz');
  await call('GET', '/v1/openapi.json');
}

/** The Kubernetes paths: discovery, OpenAPI v3, and every operation of every resource, PATCH included. */
async function kubeWorkload(ns: string) {
  const group = '/apis/pool.networking.metal.ironcore.dev/v1alpha1';
  for (const path of ['/api', '/apis', '/apis/pool.networking.metal.ironcore.dev', group, '/openapi/v3'])
    expect((await call('GET', path)).status).toBe(200);
  expect((await call('GET', `/openapi/v3${group}`)).status).toBe(200);
  const base = `${group}/namespaces/${ns}`;
  const ok = async (method: string, path: string, body?: unknown) => {
    const answer = await call(method, `${base}/${path}`, body);
    expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer;
  };
  const labels = { metadata: { labels: { via: 'kubectl' } } };
  const objects: [string, string, Record<string, unknown>][] = [
    ['indexpools', 'k-idx', { ranges: ['1..5'] }],
    ['ipaddresspools', 'k-ips', { prefixes: ['10.9.0.0/30'] }],
    ['ipprefixpools', 'k-pfx', { prefixes: ['10.8.0.0/24'], allocationPrefixLength: 28 }],
    ['claims', 'k-claim', { poolRef: { kind: 'IndexPool', name: 'k-idx' } }],
    ['indices', 'k-idx-3', { poolRef: { kind: 'IndexPool', name: 'k-idx' }, index: 3 }],
    [
      'ipaddresses',
      'k-ips-10-9-0-2',
      { poolRef: { kind: 'IPAddressPool', name: 'k-ips' }, address: '10.9.0.2' },
    ],
    [
      'ipprefixes',
      'k-pfx-10-8-0-16-28',
      { poolRef: { kind: 'IPPrefixPool', name: 'k-pfx' }, prefix: '10.8.0.16/28' },
    ],
  ];
  for (const [resource, name, spec] of objects) {
    await ok('POST', resource, { metadata: { name }, spec });
    await ok('GET', resource);
    // A watch: its objects as they are first, then (none within the second) their changes.
    await ok('GET', `${resource}?watch=true&timeoutSeconds=1&labelSelector=a%21%3Db`);
    await ok('GET', `${resource}/${name}`);
    await ok('PUT', `${resource}/${name}`, { metadata: { name }, spec });
    await ok('PATCH', `${resource}/${name}`, labels);
    if (resource.endsWith('pools')) {
      await ok('GET', `${resource}/${name}/occupancy`);
      await ok('GET', `${resource}/${name}/preview`);
    }
    if (resource.endsWith('pools') || resource === 'claims') await ok('GET', `${resource}/${name}/history`);
  }
  await drain();
  for (const [resource, name] of objects.slice(3)) await ok('DELETE', `${resource}/${name}`);
  await drain();
  for (const [resource, name] of objects.slice(0, 3)) await ok('DELETE', `${resource}/${name}`);
  await drain();
}

async function itemsOf(ns: string) {
  const page = await observer.doc.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  return (page.Items ?? []).filter((item) =>
    JSON.stringify([item.pk, item.gpk, item.wpk]).includes(`${ns}#`),
  );
}

let tenantBBefore: unknown[];

beforeAll(async () => {
  store = await startTestStore();
  responses = await startResponseListener();
  tableName = `access-${process.pid}`;
  const setup = store.client();
  await store.prepareTable(tableName);
  observer = new Table({ tableName, client: setup });
  for (const name of FUNCTIONS) {
    recorders[name] = new Faults(random);
    const table = new Table({ tableName, client: faultyClient(store.endpoint, recorders[name]) });
    if (name === 'stream') streamHandler = createStreamHandler({ table });
    else if (name === 'history') historyHandler = createHistoryHandler({ table });
    else if (name === 'repair') handlers.repair = createRepairHandler({ table }) as never;
    else if (name === 'claim-resource') claimResource = createClaimResourceHandler({ table });
    // Lists do not wait for the history, which this test delivers by hand between calls.
    else handlers[name] = createHttpHandler({ table, listWaitMs: 0 });
  }
  queue = new StreamQueue(await store.changes(tableName));
  historyQueue = new StreamQueue(await store.changes(tableName), HISTORY_FILTER_PATTERNS);
  // The other tenant first, with objects of the same names, unrecorded.
  await workload('tenant-b');
  await call('POST', '/v1/namespaces/tenant-b/indexpools', {
    metadata: { name: 'shared' },
    spec: { ranges: ['1..10'] },
  });
  await call('POST', '/v1/namespaces/tenant-b/claims', {
    metadata: { name: 'web' },
    spec: { poolRef: { kind: 'IndexPool', name: 'shared' } },
  });
  await call('POST', '/v1/namespaces/tenant-b/indices', {
    metadata: { name: 'shared-9' },
    spec: { poolRef: { kind: 'IndexPool', name: 'shared' }, index: 9, claimRef: { name: 'app' } },
  });
  // Lists across every namespace and the version: no namespace's, so outside the recorded workload.
  for (const resource of RESOURCES)
    expect((await call('GET', `${KUBE_PREFIX}/${resource}`)).status).toBe(200);
  expect((await call('GET', '/version')).status).toBe(200);
  await drain();
  tenantBBefore = await itemsOf('tenant-b');
  for (const name of FUNCTIONS) recorders[name].record = true;
  await workload('tenant-a');
  for (const name of FUNCTIONS) recorders[name].record = false;
}, 60_000);
afterAll(async () => {
  await responses.close();
  await queue.close();
  await historyQueue.close();
  await store.close();
});

describe('least privilege, from what each function does', () => {
  let template: Template;
  let stack: Stack;
  let service: AllotService;

  beforeAll(() => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    stack = new Stack(app, 'Access');
    service = new AllotService(stack, 'Allot');
    template = Template.fromStack(stack);
  });

  it('walked every route of the table', () => {
    expect([...routesServed].sort()).toEqual(
      ALL_ROUTES.map((route) => `${route.method} ${route.path}`).sort(),
    );
  });

  /** What a function did, as `{ resource: actions }` in the template's terms. */
  function used(name: AllotFunctionName): Record<string, string[]> {
    const actions: Record<string, Set<string>> = {};
    for (const { operation, input } of recorders[name].calls) {
      const resource = typeof input.IndexName === 'string' ? `index/${input.IndexName}` : 'table';
      (actions[resource] ??= new Set()).add(`dynamodb:${operation}`);
    }
    return Object.fromEntries(Object.entries(actions).map(([resource, set]) => [resource, [...set].sort()]));
  }

  it.each(FUNCTIONS)('%s is granted exactly the table actions and indexes it uses', (name) => {
    const granted = dynamoPermissions(template, stack, service, name);
    // The stream's read actions are the event source mapping's, not calls the function makes.
    delete granted.stream;
    expect(used(name)).toEqual(granted);
  });
});

describe('tenant isolation by namespace', () => {
  const calls = () => FUNCTIONS.flatMap((name) => recorders[name].calls.map((call) => ({ name, ...call })));

  /** Every string in a call's input (keys, values, attribute names and values, marshalled or not). */
  function strings(value: unknown, found: string[] = []): string[] {
    if (typeof value === 'string') found.push(value);
    else if (Array.isArray(value)) for (const item of value) strings(item, found);
    else if (value && typeof value === 'object')
      for (const [key, item] of Object.entries(value)) {
        found.push(key);
        strings(item, found);
      }
    return found;
  }

  /** The namespace a key-shaped string belongs to: item keys, `allocations` and `waiting` index keys. */
  function namespaceOf(text: string): string | undefined {
    return (
      /^[OANCW]#([^#]*)#/.exec(text)?.[1] ??
      /^([^#|]+)#(?:indices|ipaddresses|ipprefixes)#\d+$/.exec(text)?.[1] ??
      /^([^#|]+)#(?:IndexPool|IPAddressPool|IPPrefixPool)#/.exec(text)?.[1]
    );
  }

  it('touches only tenant-a keys while serving tenant-a, through every function', () => {
    const outside: string[] = [];
    const seen = new Set<string>();
    for (const { name, operation, input } of calls()) {
      const where = `${name} ${operation}`;
      // A BatchGetItem names each key it reads (a pool's map, the overlap check's ancestors): the keys are
      // checked below like any other.
      if (!['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query'].includes(operation))
        outside.push(`${where}: an operation that is not scoped by key`);
      if (
        operation === 'Query' &&
        !/^(pk|gpk|wpk|lpk) = :(pk|gpk|wpk|lpk)\b/.test(String(input.KeyConditionExpression))
      )
        outside.push(
          `${where}: a key condition without an exact partition key: ${String(input.KeyConditionExpression)}`,
        );
      for (const text of strings(input)) {
        const namespace = namespaceOf(text);
        if (namespace === undefined) continue;
        seen.add(
          text.startsWith('O#')
            ? 'object'
            : text.startsWith('A#')
              ? 'allocation'
              : text.startsWith('N#')
                ? 'name'
                : text.startsWith('C#')
                  ? 'carving'
                  : text.startsWith('W#')
                    ? 'history'
                    : /#\d+$/.test(text)
                      ? 'allocations index'
                      : 'waiting index',
        );
        if (namespace !== 'tenant-a') outside.push(`${where}: ${text}`);
      }
    }
    expect(outside).toEqual([]);
    // The check saw every kind of key, so an empty list above means something.
    expect([...seen].sort()).toEqual([
      'allocation',
      'allocations index',
      'carving',
      'history',
      'name',
      'object',
      'waiting index',
    ]);
  });

  it("left tenant-b's objects of the same names exactly as they were", async () => {
    expect(await itemsOf('tenant-b')).toEqual(tenantBBefore);
    expect(tenantBBefore.length).toBeGreaterThan(3);
  });

  it('serves no namespace but the one a path policy sees, however the path is encoded', () => {
    // A policy on `/v1/namespaces/<tenant>/*` is matched against the path, raw or decoded; the router
    // splits the raw path. Whatever the request, every valid namespace either form shows in the
    // namespace position is the one served.
    const piece = fc.oneof(
      fc.constantFrom('tenant', 'other', '..', '.', '/', '%2F', '%2E', '%', 'claims', ''),
      fc.string({ unit: 'binary-ascii', maxLength: 6 }),
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.constantFrom(...ALL_ROUTES.filter((r) => r.resource)),
        (pieces, encode, route) => {
          const segment = pieces
            .map((p) => (encode ? encodeURIComponent(p).replace(/\./g, '%2E') : p))
            .join('');
          const path = route.path.replace('{namespace}', segment).replace('{name}', 'x');
          const { match } = matchRoute(route.method, path);
          if (!match || nameProblem(match.params.namespace) !== undefined) return;
          let decoded = path;
          try {
            decoded = decodeURIComponent(path);
          } catch {
            // a path that does not decode is seen raw
          }
          // `/v1/namespaces/{namespace}/…` or `/apis/<group>/<version>/namespaces/{namespace}/…`
          const position = route.path.split('/').indexOf('{namespace}');
          for (const seen of [path, decoded]) {
            const visible = seen.split('/')[position];
            if (nameProblem(visible) === undefined) expect(visible).toBe(match.params.namespace);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('the local server', () => {
  it('listens on 127.0.0.1 only, and so does its store', async () => {
    const allot = await startTestAllot({ stream: false });
    try {
      expect(new URL(allot.url).hostname).toBe('127.0.0.1');
      expect(new URL(allot.store.endpoint).hostname).toBe('127.0.0.1');
      const port = Number(new URL(allot.url).port);
      const reachable = (host: string) =>
        new Promise<boolean>((resolve) => {
          const socket = connect({ host, port, timeout: 2000 });
          socket.once('connect', () => (socket.destroy(), resolve(true)));
          socket.once('error', () => resolve(false));
          socket.once('timeout', () => (socket.destroy(), resolve(false)));
        });
      expect(await reachable('127.0.0.1')).toBe(true);
      const external = Object.values(networkInterfaces())
        .flat()
        .filter((address) => address && !address.internal)
        .map((address) => address!.address);
      for (const address of external) expect(await reachable(address), address).toBe(false);
    } finally {
      await allot.close();
    }
  });
});
