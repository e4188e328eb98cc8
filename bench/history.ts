/**
 * Who held a value (api.md, "The history of a value"; part of `npm run bench`; alone: `npx tsx
 * bench/history.ts`). Every DynamoDB request counted (bench/measure.ts), each function on its own client:
 *
 * - A holding's cost: one client claims 200 values one after another and releases them; the history
 *   function reads those records on the local stream (its own filter), and its requests per claim's life
 *   are split into the holdings' (items `H…`) and the watches' (`W…`), by the key each request names.
 * - A query's cost as the pool's past grows: `?value=` and `?value=&at=` of one value, and `?within=` (and
 *   with `&at=`) of a range around it, with no other holding in the pool, then with OTHER_HOLDINGS past
 *   holdings of other values (seeded through the store with BatchWriteItem, as ended holdings are stored,
 *   and timed): the requests and capacity units stay the same (the pool's holdings sort by value: a
 *   value's or a range's are one run of keys), where a scan would grow with the pool.
 * - A watch's lag behind a write on the local server (bench/history-lag.ts): median and p99.
 *
 * Writes bench/history-results.json; docs/benchmark.md shows it (bench/history-report.ts).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as prettier from 'prettier';
import { createHistoryHandler } from '../functions/history.ts';
import { createStreamHandler } from '../functions/stream.ts';
import { HISTORY_FILTER_PATTERNS } from '../lib/cloud/stream-filter.ts';
import { localClient } from '../lib/local/store/dynalite.ts';
import { LocalStream } from '../lib/local/stream/emulation.ts';
import { holdingStart } from '../lib/store/keys.ts';
import { Table } from '../lib/store/table.ts';
import { claimBody, NAMESPACE, startInstance } from './instance.ts';
import { Meter, round, totals, type RequestRecord } from './measure.ts';
import { benchTable, startStoreThread, type StoreThread } from './store.ts';
import { watchLag } from './history-lag.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const LIVES = 200;
/**
 * Past holdings of other values in the big pool. Not a million by default: seeding a million (three
 * million items) into dynalite took 869 s on this 2-core machine under other work (200,000 took 79 s
 * when it was quieter), so `npm run bench` seeds 200,000 and `BENCH_OTHER_HOLDINGS=1000000` asks for
 * the million (docs/benchmark.md, "Who held a value").
 */
const OTHER_HOLDINGS = Number(process.env.BENCH_OTHER_HOLDINGS ?? 200_000);
const SMALL_POOL = 1_000;
/** Batches of the seed in flight at once (dynalite, on its one thread, is what limits it). */
const SEED_WRITERS = 4;
/** The seed's TTL: past the run, as an end's would be (no TTL runs on dynalite anyway). */
const SEED_EXPIRES_AT = Math.ceil(Date.parse('2029-01-01T00:00:00Z') / 1000);

const store = await startStoreThread({ changes: true });
const tableName = await benchTable(store, 'allot-bench-history');
const admin = startInstance(store.endpoint, tableName, 'api');

/**
 * Requests of a client by the first letter of the key they name: `H` holdings, `O` objects (read by the
 * holdings' ends), `W` watches' entries and heads.
 */
function requestsByKey(client: DynamoDBClient): Map<string, number> {
  const counts = new Map<string, number>();
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as Record<string, any>;
      const text = (value: any) => (typeof value === 'string' ? value : value?.S);
      const pk =
        text(input.Key?.pk) ?? text(input.Item?.pk) ?? text(input.ExpressionAttributeValues?.[':pk']);
      const kind = String(pk ?? '?').charAt(0);
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'benchKeyKinds' },
  );
  return counts;
}

async function holdingCost() {
  const client = localClient(store.endpoint);
  const meter = new Meter().attach(client);
  const byKey = requestsByKey(client);
  const history = createHistoryHandler({ table: new Table({ tableName, client }) });
  const local = new LocalStream({ handler: history, filters: HISTORY_FILTER_PATTERNS });
  // The stream function too (its own client, not counted here): its reclaims end the holdings.
  const streamClient = localClient(store.endpoint);
  const streamed = new LocalStream({
    handler: createStreamHandler({ table: new Table({ tableName, client: streamClient }) }),
  });
  const unsubscribe = store.onChange((change) => {
    if (change.tableName !== tableName) return;
    local.push(change);
    streamed.push(change);
  });
  const claimer = startInstance(store.endpoint, tableName, 'claim');
  try {
    await admin.call('PUT', 'indexpools/lives', { spec: { ranges: ['1..65535'] } });
    await store.caughtUp();
    await streamed.drained();
    await local.drained();
    const from = meter.records.length;
    byKey.clear();
    for (let i = 0; i < LIVES; i++) {
      await claimer.call(
        'PUT',
        `claims/life-${i}`,
        claimBody(`life-${i}`, { kind: 'IndexPool', name: 'lives' }),
      );
      await claimer.call('DELETE', `claims/life-${i}`);
    }
    for (let i = 0; i < 3; i++) {
      // Its reclaims' records, then the history's reading of them.
      await store.caughtUp();
      await streamed.drained();
      await store.caughtUp();
      await local.drained();
    }
    const records = meter.records.slice(from);
    const perLife = (...kinds: string[]) =>
      round(kinds.reduce((sum, kind) => sum + (byKey.get(kind) ?? 0), 0) / LIVES, 2);
    const all = totals(records);
    return {
      lives: LIVES,
      historyFunction: { requests: round(all.requests / LIVES, 2), units: round(all.units / LIVES, 2) },
      /** Requests per life: the holdings' (their items, and the objects an end reads), the watches'. */
      holdingsRequests: perLife('H', 'O'),
      watchesRequests: perLife('W'),
    };
  } finally {
    unsubscribe();
    await local.stop();
    await streamed.stop();
    claimer.destroy();
    client.destroy();
    streamClient.destroy();
  }
}

/** Holdings of one pool as the history function leaves them once ended, `hours` into 2026. */
function pastHolding(pool: string, value: string, i: number, hours: number) {
  const day = Date.parse('2026-01-01T00:00:00Z');
  const from = new Date(day + hours * 3_600_000).toISOString();
  return {
    holding: {
      value,
      pool: { kind: 'IndexPool' as const, name: pool },
      namespace: NAMESPACE,
      allocation: { name: `${pool}-${value}`, uid: `u-${value}-${i}` },
      claim: { namespace: NAMESPACE, name: `c-${value}-${i}`, uid: `cu-${value}-${i}` },
      from,
      until: new Date(day + (hours + 1) * 3_600_000).toISOString(),
      ended: 'Released' as const,
    },
    start: holdingStart(from, String(i).padStart(10, '0')),
  };
}

/**
 * Seeds `count` past holdings of other values (50,000 of them, the same hour spread) straight through
 * the store, 25 items a BatchWriteItem, a few batches in flight: seed data, not claims. Returns the
 * seconds it took.
 */
async function seedOthers(writer: Table, pool: string, count: number): Promise<number> {
  const started = performance.now();
  const chunk = 500;
  let next = 0;
  await Promise.all(
    Array.from({ length: SEED_WRITERS }, async () => {
      while (next < count) {
        const from = next;
        next += chunk;
        const holdings = Array.from({ length: Math.min(chunk, count - from) }, (_, j) =>
          pastHolding(pool, String(1000 + ((from + j) % 50_000)), from + j, (from + j) % 8760),
        );
        await writer.holdings.seed(holdings, SEED_EXPIRES_AT);
      }
    }),
  );
  return round((performance.now() - started) / 1000, 1);
}

async function queryCost(store: StoreThread, others: number) {
  const tableName = await benchTable(store, `allot-bench-history-q${others}`);
  const api = startInstance(store.endpoint, tableName, 'api');
  // One name for every size: a holding's items carry it, and their size decides the units.
  const pool = 'past';
  const writer = new Table({ tableName, client: localClient(store.endpoint) });
  // The value asked about: ten past holdings, written as the history function writes them.
  for (let i = 0; i < 10; i++) await writer.holdings.start(pastHolding(pool, '7', i, i * 24));
  const seedSeconds = await seedOthers(writer, pool, others);
  writer.client.destroy();
  const day = Date.parse('2026-01-01T00:00:00Z');
  const measure = async (query: string) => {
    const mark = api.meter.mark();
    const answer = await api.call('GET', `indexpools/${pool}/history?${query}`);
    if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
    const sum = totals(api.meter.since(mark) as RequestRecord[]);
    return { requests: sum.requests, units: round(sum.units, 2), items: answer.body.items.length };
  };
  try {
    return {
      otherHoldings: others,
      seedSeconds,
      value: await measure('value=7'),
      at: await measure(`value=7&at=${new Date(day + (5 * 24 + 0.5) * 3_600_000).toISOString()}`),
      within: await measure('within=5..9'),
      withinAt: await measure(`within=5..9&at=${new Date(day + (5 * 24 + 0.5) * 3_600_000).toISOString()}`),
    };
  } finally {
    api.destroy();
  }
}

const holding = await holdingCost();
admin.destroy();
await store.close();
// The queries on a store of their own, which sends no changes back: the seed is millions of items.
const queryStore = await startStoreThread();
// An empty pool, a small one and a big one: flat is the big one's cost equal to the small one's (a
// query reads its own run of keys, and a store may read the next key past it, which an empty pool lacks).
const queries = [
  await queryCost(queryStore, 0),
  await queryCost(queryStore, SMALL_POOL),
  await queryCost(queryStore, OTHER_HOLDINGS),
];
await queryStore.close();
const results = { date: new Date().toISOString(), holding, queries, watchLag: await watchLag() };
writeFileSync(
  fileURLToPath(new URL('./history-results.json', import.meta.url)),
  await prettier.format(JSON.stringify(results), { parser: 'json' }),
);
console.log(JSON.stringify(results, null, 1));
