/**
 * What the functions write to stdout, read as CloudWatch would: EMF metrics (switched on here, as in
 * Lambda; elsewhere outside Lambda they are off) and JSON logs (at INFO here, as in Lambda).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
});

import { client, indexPool, startTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { MemoryEventSink } from '../../lib/local/events.ts';
import { publishStreamEvents } from '../../functions/stream-events.ts';
import { modifyRecord, removeRecord, streamEvent } from '../builders/stream.ts';
import { httpEvent } from '../helpers/events.ts';
import { createClaimHandler } from '../../functions/claim.ts';
import { fakeContext } from '../../lib/local/server.ts';
import { Table } from '../../lib/store/table.ts';

interface EmfLine {
  _aws: {
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [key: string]: unknown;
}

let lines: EmfLine[] = [];
let logs: Record<string, unknown>[] = [];
let allot: LocalAllot;

beforeAll(async () => {
  allot = await startTestAllot({ stream: false });
  expect((await client(allot.url).post('indexpools', indexPool('asns', ['1..4']))).status).toBe(201);
  // Powertools writes INFO and EMF lines to stdout, WARN and ERROR to stderr: both are read.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    vi.spyOn(stream, 'write').mockImplementation((chunk: any, ...rest: any[]) => {
      const text = String(chunk);
      if (!text.startsWith('{')) return write(chunk, ...rest);
      for (const line of text.trim().split('\n')) {
        const parsed = JSON.parse(line);
        if (parsed._aws) lines.push(parsed);
        else logs.push(parsed);
      }
      return true;
    });
  }
});

afterEach(() => {
  lines = [];
  logs = [];
});

afterAll(async () => {
  vi.restoreAllMocks();
  await allot?.close();
});

const metricNames = (line: EmfLine) =>
  line._aws.CloudWatchMetrics.flatMap((m) => m.Metrics.map((x) => x.Name));

describe('the claim function', () => {
  it('writes ClaimLatency and ConditionalCheckFailures for each claim, in the Allot namespace', async () => {
    const answer = (await allot.invoke('claim', {
      operation: 'claim',
      namespace: 'default',
      name: 'c1',
      spec: { poolRef: { kind: 'IndexPool', name: 'asns' } },
    })) as Record<string, any>;
    expect(answer.status.value).toBe('1');
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line!._aws.CloudWatchMetrics[0]!.Namespace).toBe('Allot');
    expect(metricNames(line!).sort()).toEqual(['ClaimLatency', 'ConditionalCheckFailures']);
    expect(line!.ConditionalCheckFailures).toBe(0);
    expect(line!.ClaimLatency).toEqual(expect.any(Number));
    expect(line!.service).toBe('allot');
  });
});

describe('the logs', () => {
  it('carry the namespace, pool, claim and request id of a bus request', async () => {
    await allot.invoke('claim', {
      version: '0',
      id: 'evt-42',
      'detail-type': 'Allot Claim Requested',
      source: 'team',
      detail: { namespace: 'default', name: 'c2', spec: { poolRef: { kind: 'IndexPool', name: 'asns' } } },
    });
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: 'request answered',
        namespace: 'default',
        pool: 'asns',
        claim: 'c2',
        requestId: 'evt-42',
        value: '2',
      }),
    );
  });

  it("do not carry one request's keys into the next", async () => {
    await allot.invoke('release', { operation: 'release', namespace: 'default', name: 'c2' });
    const answered = logs.find((line) => line.message === 'request answered')!;
    expect(answered).toMatchObject({ claim: 'c2' });
    expect(answered.pool).toBeUndefined();
  });
});

describe('the HTTP logs', () => {
  it('carry the namespace, pool, claim and API Gateway request id of a failed claim', async () => {
    const broken = createClaimHandler({
      table: new Table({ tableName: 'no-such-table', client: allot.table.client }),
    });
    const event = httpEvent('PUT', '/v1/namespaces/team-a/claims/c9', {
      spec: { poolRef: { kind: 'IndexPool', name: 'asns' } },
    });
    event.requestContext.requestId = 'apigw-7';
    const response = (await broken(event as never, fakeContext('allot-claim'))) as { statusCode: number };
    expect(response.statusCode).toBe(500);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        namespace: 'team-a',
        claim: 'c9',
        pool: 'asns',
        requestId: 'apigw-7',
      }),
    );
  });
});

describe('the stream function', () => {
  const meta = {
    name: 'c',
    namespace: 'default',
    uid: 'u',
    generation: 1,
    creationTimestamp: '',
    labels: {},
    annotations: {},
  };
  const claimItem = (phase: string, rv: number) => ({
    pk: 'O#default#claims#0',
    sk: 'c',
    t: 'claim',
    metadata: meta,
    spec: { poolRef: { kind: 'IndexPool', name: 'asns' } },
    phase,
    rv,
    status:
      phase === 'Allocated'
        ? {
            value: '1',
            allocationRef: { apiVersion: 'x', kind: 'Index', name: 'asns-1' },
            conditions: [
              {
                type: 'Allocated',
                status: 'True',
                reason: 'Allocated',
                message: '',
                lastTransitionTime: '2026-11-29T12:00:00Z',
              },
            ],
          }
        : {
            conditions: [
              {
                type: 'Allocated',
                status: 'Unknown',
                reason: 'Allocating',
                message: '',
                lastTransitionTime: '2026-11-29T12:00:00Z',
              },
            ],
          },
  });
  const poolItem = (held: string) => ({
    pk: 'O#default#indexpools#0',
    sk: 'asns',
    t: 'pool',
    kind: 'IndexPool',
    metadata: { ...meta, name: 'asns', uid: 'p' },
    spec: { ranges: ['1..4'], reclaimPolicy: 'Recycle' },
    counts: {
      allocated: Number(held),
      held,
      searchFrom: held,
      generation: 1,
      updatedAt: '',
      revision: held,
      available: true,
    },
    rv: 1,
  });

  it('counts allocated claims, times reclaim, and reports a pool utilisation with its own dimensions', async () => {
    await publishStreamEvents(
      streamEvent(
        modifyRecord(claimItem('Allocating', 1), claimItem('Allocated', 2)),
        modifyRecord(poolItem('1'), poolItem('3')),
        removeRecord(claimItem('Allocated', 2)),
      ),
      new MemoryEventSink(),
    );
    const pool = lines.find((line) => metricNames(line).includes('PoolUtilisation'))!;
    expect(pool.PoolUtilisation).toBe(75);
    expect(pool._aws.CloudWatchMetrics[0]!.Dimensions[0]).toEqual(
      expect.arrayContaining(['Namespace', 'PoolKind', 'Pool', 'service']),
    );
    expect(pool).toMatchObject({ Namespace: 'default', PoolKind: 'IndexPool', Pool: 'asns' });
    const batch = lines.find((line) => metricNames(line).includes('ClaimsAllocated'))!;
    expect(batch.ClaimsAllocated).toBe(1);
    expect(batch.EventsPublished).toBe(2);
    expect(batch.ReclaimRecordAge).toEqual(expect.any(Number));
  });
});

describe('the repair function', () => {
  it('reports Repairs per kind of fix, with a Kind dimension, on its scheduled run', async () => {
    const { createRepairHandler } = await import('../../functions/repair.ts');
    const { REPAIR_KINDS } = await import('../../lib/service/repair/sweep.ts');
    const handler = createRepairHandler({ table: allot.table });
    // This file's store has no stream: the pool made above has no counts yet, which the sweep recounts.
    const context = { ...fakeContext('allot-repair'), getRemainingTimeInMillis: () => 120_000 };
    const run = (await handler({ operation: 'repair' }, context)) as {
      kind: string;
      namespaces: number;
      fixed: Record<string, number>;
    };
    expect(run).toMatchObject({ kind: 'RepairRun', namespaces: 1, fixed: { poolCounts: 1 } });
    const repairs = lines.filter((line) => metricNames(line).includes('Repairs'));
    expect(repairs.map((line) => line.Kind).sort()).toEqual([...REPAIR_KINDS].sort());
    for (const line of repairs) {
      expect(line.Repairs).toBe(run.fixed[line.Kind as string]);
      expect(line._aws.CloudWatchMetrics[0]!.Dimensions[0]).toEqual(expect.arrayContaining(['Kind']));
    }
  });
});
