/**
 * Scenario 4: what the store itself serves: conditional puts (`attribute_not_exists(pk)`) of fresh unique
 * keys into the same table, from 1 and from 32 clients (each its own SDK client), for a fixed time.
 *
 * Two items: "allocation", exactly the allocation object a claim puts (its record, key and index
 * attributes, through Table.putAllocation), so the store does for each what it does for a claim's put;
 * and "tiny", {pk, sk, t}, the least a put can be.
 *
 * The efficiency's baseline goes through clients with the same counting middleware as the claims' (a
 * fair ratio needs the same instrument on both sides), taken just before and just after the scenario it
 * is compared with (`rawAround`). Unmetered puts at the end of the run are reported for reference.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { newAllocation } from '../lib/service/allocation/decide.ts';
import type { ClaimRecord, PoolRecord } from '../lib/domain/objects/records.ts';
import { valueKind } from '../lib/domain/values/spaces.ts';
import { Table } from '../lib/store/table.ts';
import { localClient } from '../lib/local/store/dynalite.ts';
import { Meter, round } from './measure.ts';
import { allocationKey } from '../lib/store/keys.ts';

export const RAW_SECONDS = 2;

export type RawItem = 'allocation' | 'tiny';

export interface RawResult {
  item: RawItem;
  clients: number;
  /** Through the same counting middleware as the claims' clients. */
  metered: boolean;
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  failures: number;
  /** Mean send-to-answer time of a put (metered runs). */
  msPerPut?: number;
}

export async function rawConditionalPuts(
  endpoint: string,
  tableName: string,
  clients: number,
  item: RawItem = 'allocation',
  options: { metered?: boolean } = {},
): Promise<RawResult> {
  const run = randomUUID().slice(0, 8);
  const bases = Array.from({ length: clients }, () => localClient(endpoint));
  // The claims' clients carry the counting middleware; the baseline's carry it too, so the ratio of the
  // two compares the handler's work with the store's, not the benchmark's own bookkeeping.
  const meters = (options.metered ?? true) ? bases.map((base) => new Meter().attach(base)) : [];
  const docs = bases.map((base) => DynamoDBDocumentClient.from(base));
  const tables = bases.map((client) => new Table({ tableName, client }));
  const pool = standInPool(`raw-${run}`);
  const claim = standInClaim(pool);
  const index = valueKind('Index');
  const put = async (i: number, n: number) => {
    if (item === 'tiny') {
      await docs[i]!.send(
        new PutCommand({
          TableName: tableName,
          Item: { pk: `R#${run}#${i}#${n}`, sk: 'raw', t: 'raw' },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return;
    }
    const parsed = index.parse(String(i * 1_000_000 + n + 1));
    if (!parsed.ok) throw new Error(parsed.problem);
    const id = { namespace: 'bench', kind: 'IndexPool' as const, name: pool.metadata.name };
    const key = allocationKey(id, 'Index', parsed.value);
    const record = newAllocation(claim, pool, parsed.value, new Date().toISOString());
    if (!(await tables[i]!.putAllocation(key, record, parsed.value.slot, 'indices')))
      throw new Error('taken');
  };
  // One put each first, so connection setup is outside the timed window.
  await Promise.all(docs.map((_, i) => put(i, 999_999)));
  let requests = 0;
  let failures = 0;
  const marks = meters.map((meter) => meter.mark());
  const started = performance.now();
  const deadline = started + RAW_SECONDS * 1000;
  await Promise.all(
    docs.map(async (_, i) => {
      for (let n = 0; performance.now() < deadline; n++) {
        try {
          await put(i, n);
          requests++;
        } catch {
          failures++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const base of bases) base.destroy();
  const timed = meters.flatMap((meter, i) => meter.since(marks[i]!));
  return {
    item,
    clients,
    metered: options.metered ?? true,
    seconds: round(seconds, 3),
    requests,
    requestsPerSecond: round(requests / seconds, 1),
    failures,
    ...(timed.length > 0 && {
      msPerPut: round(timed.reduce((sum, record) => sum + record.ms, 0) / timed.length, 2),
    }),
  };
}

/**
 * Raw puts just before and just after `run`, from as many clients as it has: this machine's speed drifts
 * (a shared host), so a ratio of two rates is only fair when both are taken at the same moment.
 */
export async function rawAround<T>(
  endpoint: string,
  tableName: string,
  clients: number,
  run: () => Promise<T>,
): Promise<{ result: T; before: RawResult; after: RawResult; requestsPerSecond: number }> {
  const before = await rawConditionalPuts(endpoint, tableName, clients);
  const result = await run();
  const after = await rawConditionalPuts(endpoint, tableName, clients);
  const requestsPerSecond = round((before.requests + after.requests) / (before.seconds + after.seconds), 1);
  return { result, before, after, requestsPerSecond };
}

function standInPool(name: string): PoolRecord {
  const now = new Date().toISOString();
  return {
    t: 'pool',
    kind: 'IndexPool',
    metadata: {
      name,
      namespace: 'bench',
      uid: randomUUID(),
      generation: 1,
      creationTimestamp: now,
      labels: {},
      annotations: {},
    },
    spec: { ranges: ['1..4294967295'], reclaimPolicy: 'Recycle' },
    rv: 1,
  };
}

function standInClaim(pool: PoolRecord): ClaimRecord {
  return {
    t: 'claim',
    metadata: { ...pool.metadata, name: 'raw-claim', uid: randomUUID() },
    spec: { poolRef: { kind: 'IndexPool', name: pool.metadata.name } },
    status: { conditions: [] },
    phase: 'Allocated',
    rv: 1,
  };
}
