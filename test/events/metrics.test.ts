/**
 * The EMF metrics the functions write, read from stdout as CloudWatch would (metrics are switched on here,
 * as in Lambda; elsewhere outside Lambda they are off).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

vi.hoisted(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

import { client, indexPool, startTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { MemoryEventSink } from '../../lib/local/events.ts';
import { publishStreamEvents } from '../../functions/stream-events.ts';
import { modifyRecord, removeRecord, streamEvent } from '../builders/stream.ts';

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
let allot: LocalAllot;

beforeAll(async () => {
  allot = await startTestAllot({ stream: false });
  expect((await client(allot.url).post('indexpools', indexPool('asns', ['1..4']))).status).toBe(201);
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: any, ...rest: any[]) => {
    const text = String(chunk);
    if (text.includes('"_aws"'))
      lines.push(
        ...text
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line)),
      );
    else return write(chunk, ...rest);
    return true;
  });
});

afterEach(() => {
  lines = [];
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
