/**
 * The benchmark rows of issue 26 (part of `npm run bench`, after bench/prefix-lengths.ts; alone:
 * `npx tsx bench/watch.ts`), on the embedded dynalite, every DynamoDB request counted by bench/measure.ts:
 *
 * - what a selected list reads: a namespace of `CLAIMS` claims, 1 % of them labelled `team=fabric`,
 *   listed as kubectl lists (pages of 500, following `continue`) with `-l team=fabric`, with
 *   `--field-selector status.phase=Waiting` (none wait), without a selector, and by name; the figures per
 *   claim in the namespace are what a million would cost (the reads grow with the namespace, never more:
 *   a bounded filter over the same Queries, no Scan);
 * - what a watch event costs: claims made through the API (each a claim's ADDED and MODIFIED, and its
 *   Index's ADDED), their records delivered to the real history handler as Lambda would (batches of
 *   up to 100 per shard, 1 and 4 shards at once), and a watch from the list's resourceVersion reading
 *   them all; per event: the history function's requests and units, and the watch's.
 *
 * Writes bench/watch-results.json.
 */
import { writeFileSync } from 'node:fs';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { createHistoryHandler } from '../functions/history.ts';
import { HISTORY_FILTER_PATTERNS, matchesFilter } from '../lib/cloud/stream-filter.ts';
import { claimObject } from '../lib/domain/objects/objects.ts';
import type { ClaimRecord } from '../lib/domain/objects/records.ts';
import { ensureTable, localClient, type ItemChange } from '../lib/local/store/dynalite.ts';
import { openStore } from '../lib/local/stores.ts';
import { objectKey, shardOf } from '../lib/store/keys.ts';
import { Table } from '../lib/store/table.ts';
import { changeRecord } from '../test/helpers/stream-queue.ts';
import { httpEvent } from '../test/helpers/events.ts';
import { createHttpHandler } from '../functions/http.ts';
import { fakeContext } from '../lib/local/server.ts';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { NAMESPACE, startInstance } from './instance.ts';
import { Meter, round, totals } from './measure.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const CLAIMS = Number(process.env.BENCH_LIST_CLAIMS ?? 20_000);
const WATCHED_CLAIMS = 300;

// The store in this process: its change feed gives the records the history function reads.
const store = await openStore({ kind: 'dynalite', dataDir: ':memory:' });

async function table(name: string) {
  const setup = localClient(store.endpoint);
  await ensureTable(setup, name);
  setup.destroy();
}

// ---------------------------------------------------------------- a selected list

await table('allot-bench-lists');
const lists = startInstance(store.endpoint, 'allot-bench-lists', 'api');
const writer = new Table({ tableName: 'allot-bench-lists', client: localClient(store.endpoint) });
// Claims made an hour ago, before the history's index was kept (as an upgraded namespace's are).
const now = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
for (let start = 0; start < CLAIMS; start += 25) {
  const items = [];
  for (let i = start; i < Math.min(CLAIMS, start + 25); i++) {
    const name = `claim-${String(i).padStart(7, '0')}`;
    const record: ClaimRecord = {
      t: 'claim',
      metadata: {
        name,
        namespace: NAMESPACE,
        uid: `uid-${i}`,
        generation: 1,
        creationTimestamp: now,
        labels: i % 100 === 0 ? { team: 'fabric' } : { team: 'edge' },
        annotations: {},
      },
      spec: { poolRef: { kind: 'IndexPool', name: 'vlans' } },
      status: claimObject({
        t: 'claim',
        metadata: {} as never,
        spec: {} as never,
        status: {
          value: String(i),
          conditions: [
            {
              type: 'Allocated',
              status: 'True',
              reason: 'Allocated',
              message: `holds ${i}`,
              lastTransitionTime: now,
            },
          ],
        },
        phase: 'Allocated',
        rv: 2,
      }).status as ClaimRecord['status'],
      phase: 'Allocated',
      rv: 2,
    };
    items.push({ PutRequest: { Item: { ...objectKey(NAMESPACE, 'claims', name), ...record } } });
  }
  let requests: Record<string, unknown[]> | undefined = { 'allot-bench-lists': items };
  while (requests && Object.keys(requests).length > 0) {
    const result = await writer.doc.send(new BatchWriteCommand({ RequestItems: requests as never }));
    requests = result.UnprocessedItems as typeof requests;
  }
}

/** Lists as kubectl does (pages of 500 following `continue`): what it reads, per page and in all. */
async function kubectlList(query: string) {
  const mark = lists.meter.mark();
  let token: string | undefined;
  let pages = 0;
  let items = 0;
  do {
    const params = new URLSearchParams(query);
    params.set('limit', '500');
    if (token) params.set('continue', token);
    const answer = await lists.call('GET', `claims?${params}`);
    if (answer.status !== 200) throw new Error(`list ${query}: ${JSON.stringify(answer.body)}`);
    pages++;
    items += answer.body.items.length;
    token = answer.body.metadata.continue;
  } while (token);
  const spent = totals(lists.meter.since(mark));
  return {
    query: query || '(no selector)',
    pages,
    items,
    requests: spent.requests,
    units: round(spent.units, 1),
    unitsPerClaimInNamespace: round(spent.units / CLAIMS, 4),
    unitsForAMillion: Math.round((spent.units / CLAIMS) * 1_000_000),
  };
}

const selectedList = {
  claimsInNamespace: CLAIMS,
  lists: [
    await kubectlList('labelSelector=team%3Dfabric'),
    await kubectlList('fieldSelector=status.phase%3DWaiting'),
    await kubectlList(''),
    await kubectlList('fieldSelector=metadata.name%3Dclaim-0001234'),
  ],
};
lists.destroy();
writer.client.destroy();
console.log(JSON.stringify(selectedList, null, 2));

// ---------------------------------------------------------------- a watch event

/** The table's stream by shard (partition key), each in commit order, as the history function reads it. */
function shardsOf(changes: ItemChange[], count: number): DynamoDBRecord[][] {
  const shards: DynamoDBRecord[][] = Array.from({ length: count }, () => []);
  changes.forEach((change, i) => {
    const record = changeRecord(change, i + 1);
    if (!matchesFilter(record, HISTORY_FILTER_PATTERNS)) return;
    const pk = String(Object.values(record.dynamodb!.Keys!.pk!)[0]);
    shards[shardOf(pk, count)]!.push(record);
  });
  return shards;
}

async function watchCost(shardCount: number) {
  const tableName = `allot-bench-watch-${shardCount}`;
  await table(tableName);
  const api = startInstance(store.endpoint, tableName, 'api');
  await api.call('POST', 'indexpools', { metadata: { name: 'vlans' }, spec: { ranges: ['1..4000'] } });
  const listed = await api.call('GET', 'claims');
  const changes: ItemChange[] = [];
  const feed = await store.changes(tableName);
  feed.onChange((change) => changes.push(change));
  for (let i = 0; i < WATCHED_CLAIMS; i++)
    await api.call('POST', 'claims', {
      metadata: { name: `w-${i}` },
      spec: { poolRef: { kind: 'IndexPool', name: 'vlans' } },
    });
  const shards = shardsOf(changes, shardCount);
  // One handler instance per shard, each with its own client and memory, delivering side by side.
  const meters: Meter[] = [];
  let batches = 0;
  await Promise.all(
    shards.map(async (records) => {
      const client = localClient(store.endpoint);
      const meter = new Meter().attach(client);
      meters.push(meter);
      const handler = createHistoryHandler({ table: new Table({ tableName, client }) });
      for (let start = 0; start < records.length; start += 100) {
        await handler({ Records: records.slice(start, start + 100) });
        batches++;
      }
      client.destroy();
    }),
  );
  const history = meters.map((meter) => totals(meter.records));
  let appended = 0;
  for (const resource of ['claims', 'indices'] as const)
    for (let seq = 0; ;) {
      const entries = await api.table.history.after(NAMESPACE, resource, seq, 100);
      appended += entries.reduce((sum, entry) => sum + entry.events.length, 0);
      if (entries.length < 100) break;
      seq = entries[entries.length - 1]!.seq;
    }
  // A watch from the list, as a long poll through the deployed API reads it (one answer: all of them).
  const watcher = createHttpHandler({ table: api.table });
  const mark = api.meter.mark();
  const answer = (await watcher(
    httpEvent(
      'GET',
      `/v1/namespaces/${NAMESPACE}/claims?watch=true&resourceVersion=${listed.body.metadata.resourceVersion}`,
    ),
    fakeContext('api', 28_000),
  )) as APIGatewayProxyStructuredResultV2;
  const watched = String(answer.body ?? '')
    .split('\n')
    .filter(Boolean).length;
  const read = totals(api.meter.since(mark));
  await feed.close();
  api.destroy();
  const historyRequests = history.reduce((sum, t) => sum + t.requests, 0);
  const historyUnits = history.reduce((sum, t) => sum + t.units, 0);
  return {
    shards: shardCount,
    batches,
    events: appended,
    history: {
      requests: historyRequests,
      units: round(historyUnits, 1),
      requestsPerEvent: round(historyRequests / appended, 3),
      unitsPerEvent: round(historyUnits / appended, 3),
    },
    watch: {
      events: watched,
      requests: read.requests,
      units: round(read.units, 1),
      unitsPerEvent: round(read.units / watched, 3),
    },
  };
}

const watchEvent = { claims: WATCHED_CLAIMS, runs: [await watchCost(1), await watchCost(4)] };
console.log(JSON.stringify(watchEvent, null, 2));
writeFileSync(
  new URL('./watch-results.json', import.meta.url),
  `${JSON.stringify({ selectedList, watchEvent }, null, 2)}\n`,
);
await store.close();
