/**
 * The history watches read (lib/service/history/changes.ts), held to the argument in its header, through the
 * real history handler on the real store: records of different items on different shards, batches of
 * shards delivered at once to different handler instances, batches retried from their first record after
 * a handler died part way, batches delivered twice, SDK retries of writes whose answer was lost. Then:
 *
 * - every collection's entries are numbered 1 … n with no gap;
 * - each object's events in the history are exactly its changes, each once, in the order they were
 *   written (the change feed in commit order is the truth);
 * - every list taken meanwhile, with the history's events after its resourceVersion applied, is the
 *   collection as it ends: nothing a list did not show is missing from the history after it.
 */
import '../helpers/quiet.ts';
import type { APIGatewayProxyStructuredResultV2, DynamoDBRecord } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHistoryHandler } from '../../functions/history.ts';
import { createHttpHandler } from '../../functions/http.ts';
import type { Resource } from '../../lib/domain/kinds.ts';
import { fingerprint, type HistoryEvent } from '../../lib/domain/lists/watch.ts';
import type { ApiObject } from '../../lib/domain/objects/objects.ts';
import { fakeContext } from '../../lib/local/server.ts';
import type { AllotStore } from '../../lib/local/stores.ts';
import { HISTORY_RETENTION_MS, positionOf, resetHistories } from '../../lib/service/history/changes.ts';
import type { HistoryEntry } from '../../lib/store/history.ts';
import { Table } from '../../lib/store/table.ts';
import { startTestStore } from '../helpers/allot.ts';
import { httpEvent } from '../helpers/events.ts';
import { seededRandom } from '../helpers/faults.ts';
import { entriesOf, historyAppender, Shards } from '../helpers/history-shards.ts';

let store: AllotStore;
let tables = 0;
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(() => store.close());

const nameOf = (event: HistoryEvent) => (event.object.metadata as { name: string }).name;
const shown = (event: HistoryEvent) => canonical([event.type, event.object]);

/** Events by object name, each object's in order. */
function perObject(events: HistoryEvent[]) {
  const byName = new Map<string, string[]>();
  for (const event of events) byName.set(nameOf(event), [...(byName.get(nameOf(event)) ?? []), shown(event)]);
  return Object.fromEntries([...byName].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The objects of a collection by name: a list, then the history's events after its version. */
function replayed(
  items: Record<string, unknown>[],
  version: number,
  entries: HistoryEntry[],
): Map<string, unknown> {
  const state = new Map<string, unknown>(
    items.map((item) => [(item.metadata as { name: string }).name, comparable(item)]),
  );
  for (const entry of entries)
    entry.events.forEach((event, i) => {
      if (entry.seq * 1000 + i + 1 <= version) return;
      if (event.type === 'DELETED') state.delete(nameOf(event));
      else state.set(nameOf(event), comparable(event.object));
    });
  return state;
}

/** JSON with maps' keys sorted: DynamoDB (Local) answers a map's attributes in no set order. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, part: unknown) =>
    part && typeof part === 'object' && !Array.isArray(part)
      ? Object.fromEntries(
          Object.keys(part)
            .sort()
            .map((key) => [key, (part as Record<string, unknown>)[key]]),
        )
      : part,
  );

/** An object without what a list adds and a history leaves out (an allocation's Valid condition). */
function comparable(object: Record<string, unknown>) {
  const { status, ...rest } = object;
  return canonical(object.kind === 'Claim' ? { ...rest, status } : rest);
}

interface Run {
  table: Table;
  tableName: string;
  api: ReturnType<typeof createHttpHandler>;
  shards: Shards;
  close(): Promise<void>;
}

async function newRun(shardCount: number, by: 'partition' | 'item' = 'partition'): Promise<Run> {
  const tableName = `history-${process.pid}-${++tables}`;
  await store.prepareTable(tableName);
  const client = store.client();
  const table = new Table({ tableName, client });
  const feed = await store.changes(tableName);
  const shards = new Shards(feed, shardCount, by);
  return {
    table,
    tableName,
    // A list does not wait for the history here (this test delivers it between steps): it names the
    // head it read before its page when its objects are not all in the history yet.
    api: createHttpHandler({ table, listWaitMs: 0 }),
    shards,
    async close() {
      shards.close();
      await feed.close();
      client.destroy();
    },
  };
}

async function call(run: Run, method: string, path: string, body?: unknown) {
  const event = httpEvent(method, path, body);
  if (method === 'PATCH') event.headers = { 'content-type': 'application/merge-patch+json' };
  const result = (await run.api(event, fakeContext('api'))) as APIGatewayProxyStructuredResultV2;
  return { status: result.statusCode ?? 0, body: JSON.parse(result.body ?? 'null') };
}

const appender = (run: Run, random: () => number, rate: number) =>
  historyAppender(store.endpoint, run.tableName, random, rate);

const NS = 'watched';
const base = `/v1/namespaces/${NS}`;

/**
 * The holdings the same deliveries wrote (service/history/holdings.ts), against the objects now: each
 * value's holdings follow one another, each object there now has exactly one open holding, for the claim
 * it names, and no other holding is open.
 */
async function holdingViolations(run: Run): Promise<string[]> {
  const objects = (await call(run, 'GET', `${base}/indices?limit=1000`)).body.items as Record<string, any>[];
  const page = await run.table.holdings.page(`HP#${NS}#IndexPool#p`, { limit: 1000 });
  const violations: string[] = [];
  const open = page.items.filter((holding) => holding.until === undefined);
  for (const object of objects) {
    const held = open.filter((holding) => holding.allocation.uid === object.metadata.uid);
    const claimUid = object.spec.claimRef?.uid || undefined;
    if (held.length !== 1 || held[0]!.claim?.uid !== claimUid)
      violations.push(`${object.metadata.name}: open holdings ${JSON.stringify(held)}, claim ${claimUid}`);
  }
  for (const holding of open)
    if (!objects.some((object) => object.metadata.uid === holding.allocation.uid))
      violations.push(`open holding of an object that is gone: ${JSON.stringify(holding)}`);
  const byValue = new Map<string, typeof page.items>();
  for (const holding of page.items)
    byValue.set(holding.value, [...(byValue.get(holding.value) ?? []), holding]);
  for (const [value, holdings] of byValue) {
    const ordered = [...holdings].reverse();
    for (let i = 1; i < ordered.length; i++)
      if (ordered[i - 1]!.until === undefined || ordered[i - 1]!.until! > ordered[i]!.from)
        violations.push(
          `value ${value}: ${JSON.stringify(ordered[i - 1])} overlaps ${JSON.stringify(ordered[i])}`,
        );
  }
  return violations;
}

describe('the history, against its argument', () => {
  it('holds every change once, in order per object, and nothing a list did not show is missing after it', async () => {
    await fc.assert(
      // Shards by partition key (the history's mapping), or lanes by item key (concurrent batches).
      fc.asyncProperty(fc.integer(), fc.constantFrom('partition', 'item'), async (seed, by) => {
        const random = seededRandom(seed);
        const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
        const run = await newRun(3, by);
        try {
          const appenders = [
            appender(run, random, 0.15),
            appender(run, random, 0.15),
            appender(run, random, 0),
          ];
          await call(run, 'POST', `${base}/indexpools`, {
            metadata: { name: 'p' },
            spec: { ranges: ['1..400'] },
          });
          const snapshots: { resource: Resource; items: Record<string, unknown>[]; version: number }[] = [];
          const names = ['a', 'b', 'c', 'd', 'e'];
          for (let step = 0; step < 60; step++) {
            const roll = random();
            const name = pick(names);
            if (roll < 0.35) {
              await call(run, 'PUT', `${base}/claims/${name}`, {
                metadata: { labels: { n: String(step) } },
                spec: { poolRef: { kind: 'IndexPool', name: 'p' } },
              });
            } else if (roll < 0.5) {
              await call(
                run,
                'PATCH',
                `/apis/pool.networking.metal.ironcore.dev/v1alpha1/namespaces/${NS}/claims/${name}`,
                {
                  metadata: { labels: { n: String(step) } },
                },
              );
            } else if (roll < 0.6) {
              await call(run, 'DELETE', `${base}/claims/${name}`);
            } else if (roll < 0.65) {
              await call(run, 'POST', `${base}/indices`, {
                metadata: { name: `u${step}` },
                spec: { poolRef: { kind: 'IndexPool', name: 'p' }, index: 300 + step },
              });
            } else if (roll < 0.8) {
              // Batches of two shards at once, each to any handler instance, some of which die part way.
              await Promise.all(
                [0, 1, 2]
                  .filter(() => random() < 0.6)
                  .map((shard) => {
                    const chosen = pick(appenders);
                    const dies = random() < 0.3 ? 1 + Math.floor(random() * 6) : 0;
                    return run.shards.deliver(shard, 1 + Math.floor(random() * 8), (records) => {
                      if (dies) chosen.faults.dieBeforeCall(dies);
                      return chosen.deliver(records);
                    });
                  }),
              );
            } else if (roll < 0.87 && run.shards.delivered.length > 0) {
              // The mapping delivers a batch it delivered before.
              await appenders[2]!.deliver(pick(run.shards.delivered));
            } else {
              const resource = pick(['claims', 'indices'] as const);
              const list = await call(run, 'GET', `${base}/${resource}?limit=1000`);
              snapshots.push({
                resource,
                items: list.body.items,
                version: Number(list.body.metadata.resourceVersion),
              });
            }
          }
          await run.shards.caughtUp();
          for (let rounds = 0; run.shards.pending > 0; rounds++) {
            expect(rounds).toBeLessThan(1000);
            for (const shard of [0, 1, 2]) await run.shards.deliver(shard, 10, appenders[2]!.deliver);
            await run.shards.caughtUp();
          }

          for (const resource of ['claims', 'indices', 'indexpools'] as const) {
            const entries = await entriesOf(run.table, NS, resource);
            expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, i) => i + 1));
            // Each object's events: its changes, once each, in order.
            const truth = run.shards.truth
              .filter((c) => c.namespace === NS && c.resource === resource)
              .map((c) => c.event);
            const got = perObject(entries.flatMap((entry) => entry.events));
            if (canonical(got) !== canonical(perObject(truth)) && process.env.DEBUG_HISTORY)
              console.log(
                JSON.stringify(
                  entries.map((e) => ({
                    seq: e.seq,
                    batch: e.batch,
                    records: e.records,
                    ev: e.events.map(
                      (x) => `${x.type} ${nameOf(x)} ${JSON.stringify((x.object.metadata as any).labels)}`,
                    ),
                  })),
                  null,
                  1,
                ),
              );
            expect(got).toEqual(perObject(truth));
          }
          for (const { resource, items, version } of snapshots) {
            const final = (await call(run, 'GET', `${base}/${resource}?limit=1000`)).body.items;
            const entries = await entriesOf(run.table, NS, resource);
            expect(replayed(items, version, entries)).toEqual(replayed(final, Number.MAX_SAFE_INTEGER, []));
          }
          expect(snapshots.length + run.shards.delivered.length).toBeGreaterThan(0);
          expect(await holdingViolations(run)).toEqual([]);
        } finally {
          await run.close();
        }
      }),
      {
        numRuns: Number(process.env.HISTORY_RUNS ?? 6),
        examples: [
          [0, 'partition'],
          [0, 'item'],
        ],
      },
    );
  }, 240_000);
});

describe('appending', () => {
  it('takes the next number when another appender has taken one, and a lost answer is its own entry', async () => {
    const run = await newRun(2);
    try {
      const random = seededRandom(3);
      const [first, second] = [appender(run, random, 0), appender(run, random, 0)];
      for (const name of ['x', 'y', 'z', 'w'])
        await call(run, 'PUT', `${base}/claims/${name}`, {
          spec: { poolRef: { kind: 'IndexPool', name: 'none' } },
        });
      // Both instances start from the same known head; the puts decide who gets which number.
      await Promise.all([
        run.shards.deliver(0, 100, first.deliver),
        run.shards.deliver(1, 100, second.deliver),
      ]);
      // A put that lands but whose answer is lost: the SDK retries it and finds its own entry.
      second.faults.plan = (operation, input) =>
        operation === 'PutItem' && JSON.stringify(input.Item).includes('"history"')
          ? 'lostAnswer'
          : undefined;
      await call(run, 'DELETE', `${base}/claims/x`);
      for (const shard of [0, 1]) await run.shards.deliver(shard, 100, second.deliver);
      expect(second.faults.injected.lostAnswer).toBeGreaterThan(0);
      const entries = await entriesOf(run.table, NS, 'claims');
      expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, i) => i + 1));
      const truth = run.shards.truth
        .filter((change) => change.namespace === NS)
        .map((change) => change.event);
      expect(perObject(entries.flatMap((entry) => entry.events))).toEqual(perObject(truth));
      expect(Object.keys(perObject(truth))).toEqual(['w', 'x', 'y', 'z']);
      expect(await run.table.history.head(NS, 'claims')).toBe(entries.length);
    } finally {
      await run.close();
    }
  });

  it('appends a batch delivered again after its handler died between entries once', async () => {
    const run = await newRun(1);
    try {
      const random = seededRandom(9);
      const dying = appender(run, random, 0);
      // Two collections in one batch: the handler dies after the first one's entry.
      await call(run, 'PUT', `${base}/claims/one`, {
        spec: { poolRef: { kind: 'IndexPool', name: 'none' } },
      });
      await call(run, 'PUT', `/v1/namespaces/other/claims/two`, {
        spec: { poolRef: { kind: 'IndexPool', name: 'none' } },
      });
      let puts = 0;
      dying.faults.beforeCall = (operation, input) => {
        if (operation === 'PutItem' && JSON.stringify(input.Item).includes('"history"') && ++puts === 1)
          dying.faults.dieBeforeCall(2);
      };
      await run.shards.deliver(0, 100, dying.deliver);
      expect(run.shards.pending).toBeGreaterThan(0);
      dying.faults.beforeCall = undefined;
      await run.shards.deliver(0, 100, dying.deliver);
      await dying.deliver(run.shards.delivered[0]!);
      expect(dying.faults.injected.died).toBe(1);
      for (const namespace of [NS, 'other']) {
        const entries = await entriesOf(run.table, namespace, 'claims');
        const truth = run.shards.truth
          .filter((change) => change.namespace === namespace)
          .map((change) => shown(change.event));
        expect(entries.flatMap((entry) => entry.events).map(shown), namespace).toEqual(truth);
        expect(truth.length).toBeGreaterThan(0);
      }
    } finally {
      await run.close();
    }
  });

  it('never starts numbering over: the head outlives entries pruned past the retention', async () => {
    const run = await newRun(1);
    try {
      const handler = createHistoryHandler({ table: run.table }, { prune: true });
      const deliver = (records: DynamoDBRecord[]) => handler({ Records: records });
      await call(run, 'PUT', `${base}/claims/old`, {
        spec: { poolRef: { kind: 'IndexPool', name: 'none' } },
      });
      await run.shards.deliver(0, 100, deliver);
      const now = Date.now();
      const clock = vi.spyOn(Date, 'now').mockImplementation(() => now + HISTORY_RETENTION_MS + 120_000);
      try {
        await call(run, 'DELETE', `${base}/claims/old`);
        await run.shards.deliver(0, 100, deliver);
      } finally {
        clock.mockRestore();
      }
      const entries = await entriesOf(run.table, NS, 'claims');
      expect(entries.map((entry) => entry.seq)).toEqual([2]);
      expect(await run.table.history.head(NS, 'claims')).toBe(2);
      await resetHistories(run.table, [NS], ['claims']);
      expect(
        (await entriesOf(run.table, NS, 'claims')).map((entry) => [entry.seq, entry.reset ?? false]),
      ).toEqual([
        [2, false],
        [3, true],
      ]);
      expect(positionOf(3999)).toEqual({ seq: 3, index: 999 });
    } finally {
      await run.close();
    }
  });

  it('makes the index again from the objects at a reset, records it never read included', async () => {
    const run = await newRun(1);
    try {
      const handler = createHistoryHandler({ table: run.table });
      const deliver = (records: DynamoDBRecord[]) => handler({ Records: records });
      for (const name of ['kept', 'gone'])
        await call(run, 'PUT', `${base}/claims/${name}`, {
          spec: { poolRef: { kind: 'IndexPool', name: 'none' } },
        });
      await run.shards.deliver(0, 100, deliver);
      // Changes whose records the history never reads (a local server killed before it did).
      await call(run, 'DELETE', `${base}/claims/gone`);
      await call(run, 'PUT', `${base}/claims/unread`, {
        spec: { poolRef: { kind: 'IndexPool', name: 'none' } },
      });
      const before = (await run.table.history.indexed(NS, 'claims')).states;
      expect([...before.keys()].sort()).toEqual(['gone', 'kept']);
      await resetHistories(run.table, [NS], ['claims']);
      const index = (await run.table.history.indexed(NS, 'claims')).states;
      const objects = (await call(run, 'GET', `${base}/claims`)).body.items as ApiObject[];
      expect(objects.map((object) => (object.metadata as { name: string }).name)).toEqual(['kept', 'unread']);
      for (const object of objects)
        expect(index.get((object.metadata as { name: string }).name)).toMatchObject({
          fingerprint: fingerprint(object),
          gone: false,
        });
      expect(index.get('gone')?.gone).toBe(true);
    } finally {
      await run.close();
    }
  });
});
