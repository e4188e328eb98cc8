/**
 * `GET …/{pool resource}/{name}/occupancy?buckets=&within=`: the map of a pool's space, counted from
 * the group summaries (one bitmap per 4096 slots, kept by the stream function) at a cost bounded by the
 * number of buckets, never by the pool:
 * - when the span has no more groups than there are buckets, every group's bitmap is read (batched
 *   reads of small items): exact;
 * - else the pool's directory is asked which groups ever held a value (one Query); when those are no
 *   more than the buckets, their bitmaps are read: exact;
 * - else each bucket asks the directory for its first and last few listed groups (two Queries, at most
 *   2 × SAMPLE bitmaps); a bucket that lists more is estimated from those (`approximate`).
 * Like a claim's read of a summary, the counts are as fresh as the stream function has made them.
 */
import type { Segment } from '../../domain/values/candidates.ts';
import { BadRequestError } from '../../domain/errors.ts';
import { API_VERSION, type PoolKindInfo } from '../../domain/kinds.ts';
import { spaceOf } from '../../domain/objects/objects.ts';
import {
  bucketWithin,
  DEFAULT_BUCKETS,
  heldInRange,
  MAX_BUCKETS,
  planBuckets,
  shapeOf,
  spanOf,
  type Bucket,
  type OccupancySpan,
} from '../../domain/search/occupancy.ts';
import { GROUP_BITS, type GroupRef, type PoolId } from '../../store/keys.ts';
import type { ClaimContext } from '../context.ts';
import { namespaceOf, notFound, pathName, poolOf, type OperationRequest, type Reply } from './common.ts';

/** Groups a bucket reads from each end of its directory range when it lists too many to read all. */
const SAMPLE = 4;
/** A map of few buckets may still read this many groups: a small pool is always exact. */
const MIN_GROUP_BUDGET = 16;
const GROUP_SIZE = 1n << GROUP_BITS;
/** Buckets an estimated map samples at once. */
const PARALLEL_BUCKETS = 32;

interface Held {
  held: bigint;
  /** Of `held`, the values a quarantine holds back (service/leases/quarantine.ts). */
  quarantined: bigint;
  approximate: boolean;
}

function bucketCount(text: string | undefined): number {
  if (text === undefined) return DEFAULT_BUCKETS;
  if (!/^[1-9][0-9]{0,3}$/.test(text) || Number(text) > MAX_BUCKETS) {
    throw new BadRequestError(`buckets must be an integer 1..${MAX_BUCKETS}`);
  }
  return Number(text);
}

export async function poolOccupancy(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, info.resource);
  const count = bucketCount(request.query.buckets);
  const within = request.query.within;
  if (within !== undefined && within.trim() === '') throw new BadRequestError('within is empty');
  const pool = await poolOf(ctx, namespace, info, name);
  if (!pool) throw notFound(info.resource, name);
  const space = spaceOf(pool);
  const shape = shapeOf(info.kind, pool.spec, space);
  const span = spanOf(shape, space.segments, within);
  if (typeof span === 'string') throw new BadRequestError(span);
  const head = { kind: 'Occupancy', apiVersion: API_VERSION, pool: { kind: info.kind, name } };
  // A pool carved from a claim that holds nothing yet has no candidates: nothing to draw.
  if (!span) return { statusCode: 200, body: { ...head, exact: true, bucketSize: '0', buckets: [] } };
  const { width, buckets } = planBuckets(span, count, space.segments);
  const id: PoolId = { namespace, kind: info.kind, name };
  const held = await countHeld(ctx, id, span.ip ? shape.family : undefined, span, width, buckets);
  return {
    statusCode: 200,
    body: {
      ...head,
      within: bucketWithin(span, span),
      first: space.valueAt(span.first).value,
      last: space.valueAt(span.last).value,
      bucketSize: width.toString(),
      exact: held.every((h) => !h.approximate),
      buckets: buckets.map((bucket, i) => ({
        first: space.valueAt(bucket.first).value,
        last: space.valueAt(bucket.last).value,
        within: bucketWithin(span, bucket),
        values: (bucket.last - bucket.first + 1n).toString(),
        size: bucket.size.toString(),
        held: held[i]!.held.toString(),
        ...(held[i]!.quarantined > 0n && { quarantined: held[i]!.quarantined.toString() }),
        ...(held[i]!.approximate ? { approximate: true } : {}),
      })),
    },
  };
}

async function countHeld(
  ctx: ClaimContext,
  pool: PoolId,
  family: 4 | 6 | undefined,
  span: OccupancySpan,
  width: bigint,
  buckets: readonly Bucket[],
): Promise<Held[]> {
  const budget = Math.max(buckets.length, MIN_GROUP_BUDGET);
  const groups = { first: span.first >> GROUP_BITS, last: span.last >> GROUP_BITS };
  let read: bigint[] | undefined;
  if (groups.last - groups.first + 1n <= BigInt(budget)) {
    read = [];
    for (let group = groups.first; group <= groups.last; group++) read.push(group);
  } else {
    const listed = await ctx.table.summaries.listedGroupsBetween(pool, family, groups, budget + 1);
    if (listed.length <= budget) read = listed;
  }
  if (!read) return estimateEach(ctx, pool, family, buckets);
  const bitmaps = await ctx.table.summaries.readGroupsBitmaps(pool, refsOf(family, read));
  const held = buckets.map(() => ({ held: 0n, quarantined: 0n, approximate: false }));
  for (const [group, { bits, quarantines }] of bitmaps) {
    const groupFirst = group << GROUP_BITS;
    const from = bucketOf(span, width, groupFirst, buckets.length);
    const to = bucketOf(span, width, groupFirst + GROUP_SIZE - 1n, buckets.length);
    for (let i = from; i <= to; i++) {
      held[i]!.held += BigInt(heldInRange(bits, groupFirst, Number(GROUP_SIZE), buckets[i]!));
      held[i]!.quarantined += BigInt(heldInRange(quarantines, groupFirst, Number(GROUP_SIZE), buckets[i]!));
    }
  }
  return held;
}

const refsOf = (family: 4 | 6 | undefined, groups: readonly bigint[]): GroupRef[] =>
  groups.map((group) => ({ family, group }));

/** The bucket a slot falls in, clamped to the span. */
function bucketOf(span: OccupancySpan, width: bigint, slot: bigint, count: number): number {
  if (slot <= span.first) return 0;
  const index = Number((slot - span.first) / width);
  return index >= count ? count - 1 : index;
}

/** The busiest maps: each bucket reads a few of its listed groups and estimates from them when it lists more. */
async function estimateEach(
  ctx: ClaimContext,
  pool: PoolId,
  family: 4 | 6 | undefined,
  buckets: readonly Bucket[],
): Promise<Held[]> {
  const { summaries } = ctx.table;
  const sample = async (bucket: Bucket) => {
    const range = { first: bucket.first >> GROUP_BITS, last: bucket.last >> GROUP_BITS };
    const first = await summaries.listedGroupsBetween(pool, family, range, SAMPLE + 1);
    if (first.length <= SAMPLE) return { groups: first, whole: true };
    const last = await summaries.listedGroupsBetween(pool, family, range, SAMPLE, true);
    const lowest = first.slice(0, SAMPLE);
    return { groups: [...lowest, ...last.filter((g) => g > lowest[SAMPLE - 1]!).reverse()], whole: false };
  };
  // A few buckets at a time: 4096 buckets must not be 8192 Queries in flight at once.
  const samples: { groups: bigint[]; whole: boolean }[] = [];
  for (let start = 0; start < buckets.length; start += PARALLEL_BUCKETS) {
    samples.push(...(await Promise.all(buckets.slice(start, start + PARALLEL_BUCKETS).map(sample))));
  }
  const bitmaps = await summaries.readGroupsBitmaps(
    pool,
    refsOf(
      family,
      samples.flatMap((s) => s.groups),
    ),
  );
  return buckets.map((bucket, i) => {
    const { groups, whole } = samples[i]!;
    let held = 0n;
    let quarantined = 0n;
    let seen = 0n;
    for (const group of groups) {
      const groupFirst = group << GROUP_BITS;
      const read = bitmaps.get(group);
      if (read) {
        held += BigInt(heldInRange(read.bits, groupFirst, Number(GROUP_SIZE), bucket));
        quarantined += BigInt(heldInRange(read.quarantines, groupFirst, Number(GROUP_SIZE), bucket));
      }
      seen += overlap(bucket, { first: groupFirst, last: groupFirst + GROUP_SIZE - 1n });
    }
    if (whole || seen === 0n) return { held, quarantined, approximate: false };
    // The listed groups run from the first to the last one read; those between are taken to be as
    // full as the ones read.
    const extent = overlap(bucket, {
      first: groups[0]! << GROUP_BITS,
      last: ((groups[groups.length - 1]! + 1n) << GROUP_BITS) - 1n,
    });
    return { held: (held * extent) / seen, quarantined: (quarantined * extent) / seen, approximate: true };
  });
}

function overlap(a: Segment, b: Segment): bigint {
  const first = a.first > b.first ? a.first : b.first;
  const last = a.last < b.last ? a.last : b.last;
  return first <= last ? last - first + 1n : 0n;
}
