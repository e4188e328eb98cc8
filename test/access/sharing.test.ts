/**
 * Access on a pool shared with other namespaces (api.md, "Pools shared with other namespaces"): the
 * operator's pool in `infra` serves two tenants, `acme` and `globex`, each confined to its namespace by
 * IAM, and a third, `initech`, that it is not shared with.
 *
 * Every request goes through an IAM gate before the function the route table assigns it, as API Gateway
 * would: the principal's policy is the one the docs give a tenant (the JSON policies of docs/deploy.md,
 * "Tenant isolation by namespace", and docs/kubectl.md, with `<tenant>` its namespace), evaluated on the
 * request's `execute-api:Invoke` ARN (IAM's `*` and `?` wildcards, an explicit Deny wins, nothing
 * allowed is denied), and a denied request is answered 403 as API Gateway answers it, never reaching a
 * function. The stream function is driven by hand, as in access.test.ts.
 *
 * Beyond what the gate denies, the checks are on what the service does for a tenant: its answers (claims,
 * lists, watches, error messages) name no other tenant or its claims, and every DynamoDB call made while
 * serving it touches only its own namespace's keys and the shared pool's.
 */
import '../helpers/quiet.ts';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpHandler } from '../../functions/http.ts';
import { createStreamHandler } from '../../functions/stream.ts';
import { fakeContext } from '../../lib/local/server.ts';
import type { AllotStore } from '../../lib/local/stores.ts';
import { KUBE_PREFIX, matchRoute } from '../../lib/http/routes.ts';
import { Table } from '../../lib/store/table.ts';
import { httpEvent } from '../helpers/events.ts';
import { Faults, faultyClient, seededRandom } from '../helpers/faults.ts';
import { StreamQueue } from '../helpers/stream-queue.ts';
import { startTestStore } from '../helpers/allot.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
const API_ID = 'abc123def4';
/** The construct's one stage (lib/cloud/construct.ts). */
const STAGE = '$default';
const GROUP = '/apis/pool.networking.metal.ironcore.dev/v1alpha1';

type Principal = 'infra' | 'acme' | 'globex' | 'initech';
type HttpFunction = 'api' | 'claim' | 'release';
const HTTP_FUNCTIONS: HttpFunction[] = ['api', 'claim', 'release'];

interface Statement {
  Effect: 'Allow' | 'Deny';
  Action: string | string[];
  Resource: string | string[];
}

/** The page's one JSON policy for `execute-api:Invoke`, placeholders and all. */
function documentedPolicy(page: string): Statement[] {
  const text = readFileSync(resolve(ROOT, page), 'utf8');
  const blocks = [...text.matchAll(/^```json\n([\s\S]*?)^```$/gm)]
    .map((match) => match[1]!)
    .filter((block) => block.includes('execute-api:Invoke'));
  expect(blocks, page).toHaveLength(1);
  return (JSON.parse(blocks[0]!) as { Statement: Statement[] }).Statement;
}

/** A principal confined to `namespace` as the docs confine a tenant: the /v1 policy and kubectl's. */
function policyOf(namespace: string): Statement[] {
  const fill = (resource: string) =>
    resource
      .replace('<region>', REGION)
      .replace('<account>', ACCOUNT)
      .replace('<api-id>', API_ID)
      .replace('<tenant>', namespace);
  return ['docs/deploy.md', 'docs/kubectl.md'].flatMap(documentedPolicy).map((statement) => ({
    ...statement,
    Resource: [statement.Resource].flat().map(fill),
  }));
}

/** IAM's wildcards: `*` any run of characters (`/` included), `?` any one; the rest literal. */
function wildcard(pattern: string): RegExp {
  const body = pattern
    .split('')
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`);
}

function allows(policy: Statement[], action: string, resource: string): boolean {
  const matching = policy.filter(
    (statement) =>
      [statement.Action].flat().some((pattern) => wildcard(pattern).test(action)) &&
      [statement.Resource].flat().some((pattern) => wildcard(pattern).test(resource)),
  );
  if (matching.some((statement) => statement.Effect === 'Deny')) return false;
  return matching.some((statement) => statement.Effect === 'Allow');
}

/** The resource API Gateway authorizes a request as: the stage, the method and the path. */
const arnOf = (method: string, rawPath: string) =>
  `arn:aws:execute-api:${REGION}:${ACCOUNT}:${API_ID}/${STAGE}/${method}${rawPath}`;

/** An HTTP API's answer to a request IAM denies (it reaches no function). */
const DENIED = { status: 403, body: { message: 'Forbidden' } };

let store: AllotStore;
let tableName: string;
const recorders = {} as Record<HttpFunction | 'stream', Faults>;
const handlers = {} as Record<HttpFunction, ReturnType<typeof createHttpHandler>>;
let streamHandler: ReturnType<typeof createStreamHandler>;
let queue: StreamQueue;
const random = seededRandom(7);
const policies = {} as Record<Principal, Statement[]>;
/** Every answer each principal had, and every DynamoDB call made while serving it. */
const answers = {} as Record<Principal, { method: string; path: string; status: number; body: unknown }[]>;
const callsFor = {} as Record<Principal, { operation: string; input: Record<string, unknown> }[]>;

/** A request signed by `principal`: the IAM gate, then the function the route table assigns. */
async function call(principal: Principal, method: string, path: string, body?: unknown) {
  const rawPath = path.split('?')[0]!;
  let answer: { status: number; body: any };
  if (!allows(policies[principal], 'execute-api:Invoke', arnOf(method, rawPath))) answer = DENIED;
  else {
    const { match } = matchRoute(method, rawPath);
    const name = match?.route.function ?? 'api';
    if (name === 'repair') throw new Error('the repair route is not walked here');
    const result = (await handlers[name](
      httpEvent(method, path, body),
      fakeContext(name),
    )) as APIGatewayProxyStructuredResultV2;
    const text = result.body ?? '';
    const parsed = path.includes('watch=true')
      ? text
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as unknown)
      : JSON.parse(text || 'null');
    answer = { status: result.statusCode ?? 0, body: parsed };
  }
  answers[principal].push({ method, path, ...answer });
  return answer;
}

/**
 * Runs `work` (requests of `principal`, one at a time or its own concurrently) with the functions' calls
 * recorded, as the calls made while serving it.
 */
async function as<T>(principal: Principal, work: () => Promise<T>): Promise<T> {
  for (const fn of HTTP_FUNCTIONS) recorders[fn].record = true;
  try {
    return await work();
  } finally {
    for (const fn of HTTP_FUNCTIONS) {
      recorders[fn].record = false;
      callsFor[principal].push(...recorders[fn].calls.splice(0));
    }
  }
}

const drain = () => queue.drain((event) => streamHandler(event), random);

/** Drains the stream until `check` holds, a bounded number of rounds (each waits for the stream). */
async function drainUntil(check: () => Promise<boolean>, rounds = 50) {
  for (let round = 0; round < rounds; round++) {
    await drain();
    if (await check()) return;
  }
  throw new Error(`not reached after ${rounds} rounds of the stream`);
}

const v1 = (namespace: string, path: string) => `/v1/namespaces/${namespace}/${path}`;
const kube = (namespace: string, path: string) => `${GROUP}/namespaces/${namespace}/${path}`;
const onFip = (extra: Record<string, unknown> = {}) => ({
  poolRef: { kind: 'IndexPool', name: 'fip', namespace: 'infra' },
  ...extra,
});
const allocated = (claim: any) =>
  (claim?.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Allocated');

/** Claim names that say nothing of their tenant, so a leak of them is seen apart from the namespace. */
const ACME_CLAIMS = ['storefront-0', 'storefront-1', 'storefront-2', 'storefront-3', 'storefront-4'];
const GLOBEX_CLAIM = 'ledger';
const GLOBEX_PINNED = 'ledger-pinned';

beforeAll(async () => {
  store = await startTestStore();
  tableName = `access-sharing-${process.pid}`;
  await store.prepareTable(tableName);
  for (const name of [...HTTP_FUNCTIONS, 'stream'] as const) {
    recorders[name] = new Faults(random);
    const table = new Table({ tableName, client: faultyClient(store.endpoint, recorders[name]) });
    if (name === 'stream') streamHandler = createStreamHandler({ table });
    // Lists do not wait for the history, which this test delivers by hand between calls.
    else handlers[name] = createHttpHandler({ table, listWaitMs: 0 });
  }
  queue = new StreamQueue(await store.changes(tableName));
  for (const principal of ['infra', 'acme', 'globex', 'initech'] as const) {
    policies[principal] = policyOf(principal);
    answers[principal] = [];
    callsFor[principal] = [];
  }
}, 60_000);
afterAll(async () => {
  await queue?.close();
  await store?.close();
});

describe('a pool in infra shared with two tenants, each confined to its namespace by IAM', () => {
  /** acme's claims that hold a value, and the values, filled in as the tests go. */
  const held = new Map<string, string>();
  /** The acme claim released (its name is gone from acme's lists). */
  let released = '';

  it('the operator creates the shared pool with its own policy only', async () => {
    const pool = {
      metadata: { name: 'fip' },
      spec: {
        ranges: ['1..20'],
        sharedWith: [{ namespace: 'acme', maxAllocations: 2 }, { namespace: 'globex' }],
      },
    };
    const made = await as('infra', () => call('infra', 'POST', v1('infra', 'indexpools'), pool));
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    // The tenants' policies do not reach infra at all: the pool is not theirs to read, let alone change.
    for (const tenant of ['acme', 'globex', 'initech'] as const) {
      expect(await call(tenant, 'GET', v1('infra', 'indexpools/fip'))).toEqual(DENIED);
      expect(await call(tenant, 'PUT', v1('infra', 'indexpools/fip'), pool)).toEqual(DENIED);
    }
    await drain();
  });

  it("each tenant gets a value from it with its own policy; acme's 5 racing claims hold its quota of 2", async () => {
    const raced = await as('acme', () =>
      Promise.all(
        ACME_CLAIMS.map((name) =>
          call('acme', 'PUT', v1('acme', `claims/${name}`), { metadata: { name }, spec: onFip() }),
        ),
      ),
    );
    for (const answer of raced) expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    const reasons = raced.map((answer) => allocated(answer.body)?.reason);
    expect(reasons.filter((reason) => reason === 'Allocated')).toHaveLength(2);
    expect(reasons.filter((reason) => reason === 'QuotaExceeded')).toHaveLength(3);
    raced.forEach((answer, i) => {
      if (answer.body.status.value !== undefined) held.set(ACME_CLAIMS[i]!, answer.body.status.value);
    });
    expect(new Set(held.values()).size).toBe(2);
    for (const answer of raced.filter((a) => a.body.status.value !== undefined))
      expect(answer.body.status.allocationRef).toMatchObject({ kind: 'Index', namespace: 'infra' });

    const ledger = await as('globex', () =>
      call('globex', 'POST', v1('globex', 'claims'), { metadata: { name: GLOBEX_CLAIM }, spec: onFip() }),
    );
    expect(ledger.status, JSON.stringify(ledger.body)).toBe(201);
    expect(allocated(ledger.body)?.reason).toBe('Allocated');
    expect([...held.values()]).not.toContain(ledger.body.status.value);
    await drain();
    // Still two, once the stream has seen every claim: no second try of a waiting claim passed the quota.
    const listed = await as('acme', () => call('acme', 'GET', v1('acme', 'claims')));
    const holding = listed.body.items.filter((claim: any) => claim.status.value !== undefined);
    expect(holding.map((claim: any) => claim.metadata.name).sort()).toEqual([...held.keys()].sort());
  });

  it("a tenant is denied, by IAM, the allocation objects in infra and the other tenant's claims", async () => {
    const object = `indices/fip-${[...held.values()][0]}`;
    const requests: [string, string][] = [
      ['GET', v1('infra', 'indices')],
      ['GET', v1('infra', 'indices?pool=fip')],
      ['GET', v1('infra', object)],
      ['DELETE', v1('infra', object)],
      ['PUT', v1('infra', object)],
      ['GET', kube('infra', 'indices')],
      ['GET', kube('infra', 'indices?watch=true&timeoutSeconds=1')],
      ['GET', kube('infra', object)],
      ['DELETE', kube('infra', object)],
      ['PATCH', kube('infra', object)],
      ['GET', v1('infra', 'indexpools/fip/occupancy')],
      ['GET', v1('infra', 'indexpools/fip/preview')],
      ['DELETE', v1('infra', 'indexpools/fip?cascade=true')],
    ];
    const otherTenant = (namespace: string, claim: string): [string, string][] => [
      ['GET', v1(namespace, `claims/${claim}`)],
      ['GET', v1(namespace, 'claims')],
      ['DELETE', v1(namespace, `claims/${claim}`)],
      ['PUT', v1(namespace, `claims/${claim}`)],
      ['GET', kube(namespace, `claims/${claim}`)],
      ['GET', kube(namespace, 'claims')],
      ['GET', kube(namespace, 'claims?watch=true&timeoutSeconds=1')],
      ['DELETE', kube(namespace, `claims/${claim}`)],
    ];
    const denied: [Principal, [string, string][]][] = [
      ['acme', [...requests, ...otherTenant('globex', GLOBEX_CLAIM)]],
      ['globex', [...requests, ...otherTenant('acme', [...held.keys()][0]!)]],
      ['initech', [...requests, ...otherTenant('acme', ACME_CLAIMS[0]!), ...otherTenant('globex', 'ledger')]],
    ];
    for (const [principal, list] of denied)
      for (const [method, path] of list)
        expect(await call(principal, method, path, { spec: {} }), `${principal} ${method} ${path}`).toEqual(
          DENIED,
        );
    // Nothing reached a function, so all stands as it was.
    const objects = await as('infra', () => call('infra', 'GET', v1('infra', 'indices?pool=fip')));
    expect(objects.body.items).toHaveLength(3);
    expect(
      allocated(
        (await as('globex', () => call('globex', 'GET', v1('globex', `claims/${GLOBEX_CLAIM}`)))).body,
      )?.reason,
    ).toBe('Allocated');
  });

  it("a globex claim asking for acme's value waits ValueTaken, naming neither acme nor its claim", async () => {
    const [acmeClaim, value] = [...held.entries()][0]!;
    const pinned = await as('globex', () =>
      call('globex', 'POST', v1('globex', 'claims'), {
        metadata: { name: GLOBEX_PINNED },
        spec: onFip({ value }),
      }),
    );
    expect(pinned.status, JSON.stringify(pinned.body)).toBe(201);
    expect(allocated(pinned.body)).toMatchObject({ status: 'False', reason: 'ValueTaken' });
    const message = String(allocated(pinned.body)?.message);
    expect(message).toContain(value);
    expect(message).not.toContain(acmeClaim);
    expect(message).not.toContain('acme');
    await drain();
    const again = await as('globex', () => call('globex', 'GET', v1('globex', `claims/${GLOBEX_PINNED}`)));
    expect(allocated(again.body)?.reason).toBe('ValueTaken');
    expect(JSON.stringify(again.body)).not.toContain(acmeClaim);
  });

  it('is, to initech (not shared with), a pool that does not exist: PoolNotFound, the same message', async () => {
    const [unshared, missing] = await as('initech', async () => [
      await call('initech', 'POST', v1('initech', 'claims'), { metadata: { name: 'c1' }, spec: onFip() }),
      await call('initech', 'POST', v1('initech', 'claims'), {
        metadata: { name: 'c2' },
        spec: { poolRef: { kind: 'IndexPool', name: 'nowhere', namespace: 'infra' } },
      }),
    ]);
    expect([unshared!.status, missing!.status]).toEqual([201, 201]);
    const shown = (answer: { body: any }, pool: string) => {
      const { lastTransitionTime, ...condition } = allocated(answer.body);
      expect(lastTransitionTime).toEqual(expect.any(String));
      return { ...condition, message: String(condition.message).replaceAll(pool, '<pool>') };
    };
    expect(shown(unshared!, 'fip')).toMatchObject({ status: 'False', reason: 'PoolNotFound' });
    expect(shown(unshared!, 'fip')).toEqual(shown(missing!, 'nowhere'));
    expect(Object.keys(unshared!.body.status).sort()).toEqual(Object.keys(missing!.body.status).sort());
    await drain();
    const still = await as('initech', () => call('initech', 'GET', v1('initech', 'claims/c1')));
    expect(shown(still, 'fip')).toEqual(shown(missing!, 'nowhere'));
  });

  it("the operator sees both tenants' holders in status.sharing, and each object's claimRef.namespace", async () => {
    const pool = await as('infra', () => call('infra', 'GET', v1('infra', 'indexpools/fip')));
    expect(pool.body.status.sharing).toEqual([
      { namespace: 'acme', allocated: 2, maxAllocations: 2 },
      { namespace: 'globex', allocated: 1 },
    ]);
    const objects = await as('infra', () => call('infra', 'GET', v1('infra', 'indices?pool=fip')));
    const refs = objects.body.items.map((object: any) => ({
      value: String(object.spec.index),
      namespace: object.spec.claimRef.namespace,
      name: object.spec.claimRef.name,
    }));
    const globexValue = (
      await as('globex', () => call('globex', 'GET', v1('globex', `claims/${GLOBEX_CLAIM}`)))
    ).body.status.value;
    expect(refs.sort((a: any, b: any) => a.name.localeCompare(b.name))).toEqual(
      [
        ...[...held].map(([name, value]) => ({ value, namespace: 'acme', name })),
        { value: globexValue, namespace: 'globex', name: GLOBEX_CLAIM },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
  });

  it("acme's release of the value globex waits for: globex's claim gets it, an acme claim acme's place", async () => {
    // The first of acme's values is the one globex's pinned claim asked for.
    const [name, value] = [...held.entries()][0]!;
    released = name;
    const gone = await as('acme', () => call('acme', 'DELETE', v1('acme', `claims/${released}`)));
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    held.delete(released);
    const holders = async () => {
      const list = await as('acme', () => call('acme', 'GET', v1('acme', 'claims')));
      return list.body.items.filter((claim: any) => claim.status.value !== undefined);
    };
    const pinned = async () =>
      (await as('globex', () => call('globex', 'GET', v1('globex', `claims/${GLOBEX_PINNED}`)))).body;
    // Both woken by the stream, with no further call.
    await drainUntil(async () => (await holders()).length === 2 && (await pinned()).status.value === value);
    expect(allocated(await pinned())?.reason).toBe('Allocated');
    for (const claim of await holders()) held.set(claim.metadata.name, claim.status.value);
    expect(held.size).toBe(2);
    expect([...held.values()]).not.toContain(value);
    const pool = await as('infra', () => call('infra', 'GET', v1('infra', 'indexpools/fip')));
    expect(pool.body.status.sharing).toEqual([
      { namespace: 'acme', allocated: 2, maxAllocations: 2 },
      { namespace: 'globex', allocated: 2 },
    ]);
    const ledger = await as('globex', () => call('globex', 'GET', v1('globex', `claims/${GLOBEX_CLAIM}`)));
    expect(allocated(ledger.body)?.reason).toBe('Allocated');
  });

  it("each tenant's lists and watch of its claims show its own claims only", async () => {
    const own: [Principal, string[]][] = [
      ['acme', ACME_CLAIMS.filter((name) => name !== released)],
      ['globex', [GLOBEX_CLAIM, GLOBEX_PINNED]],
      ['initech', ['c1', 'c2']],
    ];
    for (const [tenant, names] of own) {
      const lists = await as(tenant, async () => [
        (await call(tenant, 'GET', v1(tenant, 'claims'))).body.items,
        (await call(tenant, 'GET', kube(tenant, 'claims'))).body.items,
      ]);
      const watch = await as(tenant, () =>
        call(tenant, 'GET', kube(tenant, 'claims?watch=true&timeoutSeconds=1')),
      );
      expect(watch.status).toBe(200);
      const watched = (watch.body as { object: any }[]).map((event) => event.object);
      for (const items of [...lists, watched]) {
        const shown = new Set(items.map((claim: any) => claim.metadata.name));
        expect([...shown].sort(), tenant).toEqual([...names].sort());
        for (const claim of items) expect(claim.metadata.namespace).toBe(tenant);
      }
    }
  });

  it("no answer to a tenant names another tenant or another tenant's claims", () => {
    const acmeNames = ['acme', 'storefront'];
    const globexNames = ['globex', GLOBEX_CLAIM];
    const foreign: Record<Principal, string[]> = {
      infra: [],
      acme: [...globexNames, 'initech'],
      globex: [...acmeNames, 'initech'],
      initech: [...acmeNames, ...globexNames],
    };
    for (const tenant of ['acme', 'globex', 'initech'] as const) {
      expect(answers[tenant].length).toBeGreaterThan(5);
      const leaks = answers[tenant].flatMap(({ method, path, body }) =>
        foreign[tenant]
          .filter((name) => JSON.stringify(body).includes(name))
          .map((name) => `${method} ${path}: ${name}`),
      );
      expect(leaks, tenant).toEqual([]);
    }
  });

  it("serving a tenant touches only its own namespace's keys and the shared pool's, never another tenant's", () => {
    /** Every string in a call's input (keys, values, attribute names and values, marshalled or not). */
    const strings = (value: unknown, found: string[] = []): string[] => {
      if (typeof value === 'string') found.push(value);
      else if (Array.isArray(value)) for (const item of value) strings(item, found);
      else if (value && typeof value === 'object')
        for (const [key, item] of Object.entries(value)) {
          found.push(key);
          strings(item, found);
        }
      return found;
    };
    /** The namespace of a key-shaped string: item keys, the `allocations` and `waiting` index keys. */
    const namespaceOf = (text: string) =>
      /^[OANCWDQ]#([^#]*)#/.exec(text)?.[1] ??
      /^([^#|]+)#(?:indices|ipaddresses|ipprefixes)#\d+$/.exec(text)?.[1] ??
      /^([^#|]+)#(?:IndexPool|IPAddressPool|IPPrefixPool)#/.exec(text)?.[1];
    /** The pools' keys in infra a claim names: their items, blocks and summaries, holders and waiters. */
    const ofSharedPool = (text: string) =>
      /^O#infra#indexpools#\d+$/.test(text) ||
      /^[ADQ]#infra#IndexPool#fip(#|$)/.test(text) ||
      // The `allocations` index key of the pool's objects (its sort key names the pool).
      /^infra#indices#\d+$/.test(text) ||
      // initech's claims wait for the pools they name (the `waiting` index), shared with it or not.
      /^infra#IndexPool#(fip|nowhere)$/.test(text);
    for (const tenant of ['acme', 'globex', 'initech'] as const) {
      const others = (['acme', 'globex', 'initech'] as const).filter((other) => other !== tenant);
      expect(callsFor[tenant].length, tenant).toBeGreaterThan(5);
      const outside: string[] = [];
      for (const { operation, input } of callsFor[tenant]) {
        const found = strings(input);
        for (const text of found) {
          const namespace = namespaceOf(text);
          if (namespace === undefined || namespace === tenant) continue;
          if (namespace === 'infra' && ofSharedPool(text)) continue;
          outside.push(`${operation}: ${text}`);
        }
        // The pool's holders are one item per namespace (sk: the namespace): only its own.
        for (const other of others)
          if (found.includes(other)) outside.push(`${operation}: names ${other}: ${JSON.stringify(input)}`);
      }
      expect(outside, tenant).toEqual([]);
    }
  });
});

/**
 * A pool of a range of prefix lengths is placed another way (lib/service/allocation/prefix-search.ts): in the
 * pool's namespace too, and its ValueTaken message names no other namespace's claim. (This test found both:
 * the search once keyed a tenant's prefixes by the tenant's namespace, so globex got the prefix acme held.)
 */
describe('a shared pool of a range of prefix lengths', () => {
  it("never gives globex acme's prefix, nor names acme's claim to it", async () => {
    const made = await call('infra', 'PUT', v1('infra', 'ipprefixpools/nets'), {
      spec: {
        prefixes: ['10.20.0.0/16'],
        allocationPrefixLengths: { min: 20, max: 28, default: 24 },
        sharedWith: [{ namespace: '*' }],
      },
    });
    expect(made.status, JSON.stringify(made.body)).toBeLessThan(300);
    await drain();
    const spec = (value: string) => ({
      poolRef: { kind: 'IPPrefixPool', name: 'nets', namespace: 'infra' },
      value,
    });
    const mine = await call('acme', 'PUT', v1('acme', 'claims/storefront-net'), {
      spec: spec('10.20.1.0/24'),
    });
    expect(mine.body.status?.value, JSON.stringify(mine.body)).toBe('10.20.1.0/24');
    await drain();
    for (const [name, value] of [
      ['ledger-net', '10.20.1.0/24'],
      ['ledger-half', '10.20.1.0/25'],
      ['ledger-wide', '10.20.0.0/20'],
    ] as const) {
      const theirs = await call('globex', 'PUT', v1('globex', `claims/${name}`), { spec: spec(value) });
      expect(allocated(theirs.body), `${name}: ${JSON.stringify(theirs.body)}`).toMatchObject({
        status: 'False',
        reason: 'ValueTaken',
      });
      expect(JSON.stringify(theirs.body)).not.toContain('storefront');
      expect(JSON.stringify(theirs.body)).not.toContain('acme');
    }
    const objects = await call('infra', 'GET', v1('infra', 'ipprefixes?pool=nets'));
    expect(objects.body.items.map((object: any) => object.spec.claimRef)).toEqual([
      expect.objectContaining({ namespace: 'acme', name: 'storefront-net' }),
    ]);
    const object = await call('infra', 'GET', v1('infra', 'ipprefixes/nets-10-20-1-0-24'));
    expect(object.status, JSON.stringify(object.body)).toBe(200);
  });
});

describe('the gate', () => {
  it('reads the documented policies, and allows a tenant its own namespace only', () => {
    const acme = policyOf('acme');
    expect(allows(acme, 'execute-api:Invoke', arnOf('GET', v1('acme', 'claims/x')))).toBe(true);
    expect(allows(acme, 'execute-api:Invoke', arnOf('PATCH', kube('acme', 'claims/x')))).toBe(true);
    expect(allows(acme, 'execute-api:Invoke', arnOf('GET', `${KUBE_PREFIX}/claims`))).toBe(false);
    expect(allows(acme, 'execute-api:Invoke', arnOf('GET', v1('acme-other', 'claims')))).toBe(false);
    expect(allows(acme, 'execute-api:Invoke', arnOf('GET', v1('infra', 'claims')))).toBe(false);
    expect(allows(acme, 'execute-api:Invoke', arnOf('GET', '/v1/healthz'))).toBe(true);
    expect(allows(acme, 'lambda:InvokeFunction', arnOf('GET', '/v1/healthz'))).toBe(false);
    const denying: Statement[] = [...acme, { Effect: 'Deny', Action: '*', Resource: arnOf('*', '/v1/*') }];
    expect(allows(denying, 'execute-api:Invoke', arnOf('GET', v1('acme', 'claims')))).toBe(false);
  });
});
