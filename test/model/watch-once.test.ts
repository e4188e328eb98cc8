/**
 * A watch from a list's resourceVersion answers every change after the list exactly once and none the
 * list showed (api.md, "Routes", watch; the argument: lib/service/history/snapshot.ts). Writers change
 * claims and allocation objects while a history reader follows the table's stream with a random lag,
 * handlers that die part way, batches delivered twice and old batches replayed; lists (with a selector
 * or without) are taken at random moments meanwhile, each waiting for the history as it must. Then, for
 * every list:
 *
 * - it is the history's state at its resourceVersion, exactly (so nothing it shows comes after it, and
 *   nothing before it is missing);
 * - a watch from it answers only real changes of what it shows (no ADDED of an object it has, no
 *   MODIFIED to the state it has, no DELETED of one it does not have), and with them it ends as the
 *   collection ends: nothing lost.
 */
import '../helpers/quiet.ts';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpHandler } from '../../functions/http.ts';
import type { Resource } from '../../lib/domain/kinds.ts';
import type { ApiObject } from '../../lib/domain/objects/objects.ts';
import { selectionOf } from '../../lib/domain/lists/selection.ts';
import { eventFor, fingerprint } from '../../lib/domain/lists/watch.ts';
import { fakeContext } from '../../lib/local/server.ts';
import type { AllotStore } from '../../lib/local/stores.ts';
import { currentHead } from '../../lib/service/history/changes.ts';
import { watchCollection } from '../../lib/service/operations/watch.ts';
import { Table } from '../../lib/store/table.ts';
import { startTestStore } from '../helpers/allot.ts';
import { httpEvent } from '../helpers/events.ts';
import { seededRandom } from '../helpers/faults.ts';
import { entriesOf, historyAppender, Shards } from '../helpers/history-shards.ts';
import { propertyRuns } from '../helpers/property-runs.ts';

let store: AllotStore;
let tables = 0;
beforeAll(async () => {
  store = await startTestStore();
});
afterAll(() => store.close());

const NS = 'once';
const base = `/v1/namespaces/${NS}`;
const SELECTORS = [undefined, 'g=a'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const nameOf = (object: { metadata?: unknown }) => (object.metadata as { name: string }).name;
/** An object as a list or a watch shows it, without the position a watch's copy carries. */
const comparable = (object: ApiObject) => {
  const { resourceVersion: _version, ...metadata } = object.metadata as Record<string, unknown>;
  return fingerprint({ ...object, metadata });
};

interface Taken {
  resource: Resource;
  selector?: string;
  items: ApiObject[];
  version: number;
}

async function newRun() {
  const tableName = `once-${process.pid}-${++tables}`;
  await store.prepareTable(tableName);
  const client = store.client();
  const table = new Table({ tableName, client });
  const feed = await store.changes(tableName);
  const shards = new Shards(feed, 2);
  const api = createHttpHandler({ table });
  const call = async (method: string, path: string, body?: unknown) => {
    const event = httpEvent(method, path, body);
    if (method === 'PATCH') event.headers = { 'content-type': 'application/merge-patch+json' };
    const result = (await api(event, fakeContext('api'))) as APIGatewayProxyStructuredResultV2;
    return { status: result.statusCode ?? 0, body: JSON.parse(result.body ?? 'null') };
  };
  return {
    table,
    tableName,
    shards,
    call,
    async close() {
      shards.close();
      await feed.close();
      client.destroy();
    },
  };
}
type Run = Awaited<ReturnType<typeof newRun>>;

/** The collection as the history has it at `version`, as a list with `selector` shows it. */
async function historyAt(run: Run, taken: Taken): Promise<Map<string, string>> {
  const selection = selectionOf(taken.resource, { labelSelector: taken.selector });
  if (!selection.ok) throw new Error(selection.problem);
  const state = new Map<string, string>();
  for (const entry of await entriesOf(run.table, NS, taken.resource))
    entry.events.forEach((event, i) => {
      if (entry.seq * 1000 + i + 1 > taken.version) return;
      const seen = eventFor(selection.value, event);
      if (!seen) return;
      if (seen.type === 'DELETED') state.delete(nameOf(event.object));
      else state.set(nameOf(event.object), comparable(event.object));
    });
  return state;
}

/** What a watch from the list answers, read through the watch itself until it reaches `head`. */
async function watchedFrom(run: Run, taken: Taken, head: number) {
  const lines: { type: string; object: ApiObject }[] = [];
  for (let position = taken.version, answers = 0; position < head; answers++) {
    expect(answers).toBeLessThan(500);
    const answer: { type: string; object: ApiObject }[] = [];
    await watchCollection(
      taken.resource,
      {
        params: { namespace: NS },
        query: {
          watch: 'true',
          resourceVersion: String(position),
          allowWatchBookmarks: 'true',
          ...(taken.selector && { labelSelector: taken.selector }),
        },
        body: undefined,
      },
      { table: run.table },
      { write: (line) => answer.push(JSON.parse(line)), endAfterEvents: true, maxMs: 200, pollMs: 20 },
    );
    for (const line of answer) {
      position = Number((line.object.metadata as { resourceVersion: string }).resourceVersion);
      if (line.type !== 'BOOKMARK') lines.push(line);
    }
  }
  return lines;
}

/** What is wrong with a watch's lines applied to the list: repeats, and the end not the collection's. */
function watchProblems(taken: Taken, lines: { type: string; object: ApiObject }[], final: ApiObject[]) {
  const problems: string[] = [];
  const state = new Map(taken.items.map((object) => [nameOf(object), comparable(object)]));
  for (const { type, object } of lines) {
    const name = nameOf(object);
    const had = state.get(name);
    const now = comparable(object);
    if (type === 'ADDED' && had !== undefined) problems.push(`ADDED ${name}, which the list had`);
    if (type === 'MODIFIED' && (had === undefined || had === now))
      problems.push(
        `MODIFIED ${name} to ${had === undefined ? 'an object the list had not' : 'what it had'}`,
      );
    if (type === 'DELETED' && had === undefined) problems.push(`DELETED ${name}, which the list had not`);
    if (type === 'DELETED') state.delete(name);
    else state.set(name, now);
  }
  const ends = new Map(final.map((object) => [nameOf(object), comparable(object)]));
  if (JSON.stringify([...state].sort()) !== JSON.stringify([...ends].sort()))
    problems.push(`ends as ${JSON.stringify([...state].sort())}, not ${JSON.stringify([...ends].sort())}`);
  return problems;
}

/** What the runs did, for docs/testing.md. */
const totals = { runs: 0, lists: 0, selected: 0, lines: 0 };

describe('a watch from a list, against the history', () => {
  it('answers every change after the list once and none the list showed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer(), async (seed) => {
        const random = seededRandom(seed);
        const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
        const run = await newRun();
        try {
          const appenders = [
            historyAppender(store.endpoint, run.tableName, random, 0.1),
            historyAppender(store.endpoint, run.tableName, random, 0),
          ];
          await run.call('POST', `${base}/indexpools`, {
            metadata: { name: 'p' },
            spec: { ranges: ['1..400'] },
          });
          // The history reader: behind by a random lag, dying part way, delivering batches twice.
          let reading = true;
          const reader = (async () => {
            while (reading) {
              await sleep(Math.floor(random() * 20));
              const chosen = pick(appenders);
              const dies = random() < 0.2 ? 1 + Math.floor(random() * 6) : 0;
              if (random() < 0.1 && run.shards.delivered.length > 0)
                await appenders[1]!.deliver(pick(run.shards.delivered));
              else
                await run.shards.deliver(
                  Math.floor(random() * 2),
                  1 + Math.floor(random() * 5),
                  (records) => {
                    if (dies) chosen.faults.dieBeforeCall(dies);
                    return chosen.deliver(records);
                  },
                );
            }
          })();
          const lists: Promise<Taken>[] = [];
          for (let step = 0; step < 30; step++) {
            const roll = random();
            const name = pick(['a', 'b', 'c', 'd']);
            const labels = { g: pick(['a', 'b']) };
            if (roll < 0.3)
              await run.call('PUT', `${base}/claims/${name}`, {
                metadata: { labels },
                spec: { poolRef: { kind: 'IndexPool', name: 'none' } },
              });
            else if (roll < 0.45)
              await run.call(
                'PATCH',
                `/apis/pool.networking.metal.ironcore.dev/v1alpha1/namespaces/${NS}/claims/${name}`,
                {
                  metadata: { labels },
                },
              );
            else if (roll < 0.55) await run.call('DELETE', `${base}/claims/${name}`);
            else if (roll < 0.62)
              await run.call('PUT', `${base}/indices/${name}`, {
                metadata: { labels },
                spec: { poolRef: { kind: 'IndexPool', name: 'p' }, index: 10 + step },
              });
            else if (roll < 0.68) await run.call('DELETE', `${base}/indices/${name}`);
            else {
              const resource = pick(['claims', 'claims', 'indices'] as const);
              const selector = pick(SELECTORS);
              const query = selector ? `?labelSelector=${encodeURIComponent(selector)}` : '';
              lists.push(
                run.call('GET', `${base}/${resource}${query}`).then(({ body }) => ({
                  resource,
                  selector,
                  items: body.items,
                  version: Number(body.metadata.resourceVersion),
                })),
              );
            }
            await sleep(Math.floor(random() * 4));
          }
          const taken = await Promise.all(lists);
          reading = false;
          await reader;
          await run.shards.caughtUp();
          for (let rounds = 0; run.shards.pending > 0; rounds++) {
            expect(rounds).toBeLessThan(1000);
            for (const shard of [0, 1]) await run.shards.deliver(shard, 10, appenders[1]!.deliver);
            await run.shards.caughtUp();
          }
          totals.runs++;
          for (const list of taken) {
            totals.lists++;
            if (list.selector) totals.selected++;
            const shown = new Map(list.items.map((object) => [nameOf(object), comparable(object)]));
            const label = `${list.resource}?${list.selector ?? ''} at ${list.version}`;
            const expected = [...(await historyAt(run, list))].sort();
            if (process.env.DEBUG_ONCE && JSON.stringify([...shown].sort()) !== JSON.stringify(expected)) {
              const entries = await entriesOf(run.table, NS, list.resource);
              (await import('node:fs')).writeFileSync(
                '/tmp/once-debug.json',
                JSON.stringify({ list, entries }, null, 1),
              );
            }
            expect([...shown].sort(), label).toEqual(expected);
            const head = (await currentHead(run.table, NS, list.resource)) * 1000 + 999;
            const query = list.selector ? `?labelSelector=${encodeURIComponent(list.selector)}` : '';
            const final = (await run.call('GET', `${base}/${list.resource}${query}`)).body.items;
            const lines = await watchedFrom(run, list, head);
            totals.lines += lines.length;
            const problems = watchProblems(list, lines, final);
            if (problems.length > 0 && process.env.DEBUG_ONCE) {
              const entries = await entriesOf(run.table, NS, list.resource);
              (await import('node:fs')).writeFileSync(
                '/tmp/once-debug.json',
                JSON.stringify({ list, lines, final, head, entries }, null, 1),
              );
            }
            expect(problems, label).toEqual([]);
          }
        } finally {
          await run.close();
        }
      }),
      propertyRuns('watch once', { prefix: 'WATCH', numRuns: 100, budgetMs: 240_000 }),
    );
    console.log(`[watch once] ${JSON.stringify(totals)}`);
    expect(totals.lists).toBeGreaterThan(0);
  }, 300_000);
});
