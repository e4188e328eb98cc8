/**
 * Where a claim's search for a free candidate starts, and how it goes on after a lost race: from the
 * pool's hint or this instance's frontier, or, once the pool is contended, from a random spread point
 * (search-memory.ts remembers which). The domain's allocateNext walks the candidates; the store answers
 * through its port; the conditional put (decide.ts) decides every race.
 */
import { allocateNext, type AllocationPort } from '../../domain/search/allocate.ts';
import { runsFrom, type Segment } from '../../domain/values/candidates.ts';
import { poolKindInfo } from '../../domain/kinds.ts';
import { spaceOf } from '../../domain/objects/objects.ts';
import { isRanged } from '../../domain/values/prefix-pools.ts';
import type { ClaimRecord, PoolRecord } from '../../domain/objects/records.ts';
import { familyOf, type PoolSpace } from '../../domain/values/values.ts';
import { isHeld } from '../../store/items.ts';
import { GROUP_BITS, type GroupRef, type PoolId } from '../../store/keys.ts';
import type { ClaimContext } from '../context.ts';
import { isContended, searchStart, spreadPoint, summarised } from './search-memory.ts';

/** A group summary's bitmap read before the decision, beside the pool (claim-reads.ts). */
export interface PrefetchedSummary {
  group: GroupRef;
  bits: Uint8Array;
}

/** Where a search over a pool of one length starts (undefined: past the last candidate). */
export function searchOrigin(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  space: PoolSpace,
  segments: readonly Segment[],
  draw?: number,
) {
  const unrestricted = claim.spec.within === undefined && claim.spec.reserved === undefined;
  const start = unrestricted ? searchStart(ctx, pool) : 0n;
  if (start >= space.total && unrestricted) return undefined;
  const poolContended = isContended(ctx, pool);
  const contended = unrestricted && poolContended;
  const spreadStart = (at?: number) => spreadPoint(ctx, pool, segments, start, space.total, at);
  return {
    unrestricted,
    start,
    poolContended,
    contended,
    spreadStart,
    from: contended ? spreadStart(draw) : start,
  };
}

/**
 * The group summary a new claim's search in `pool` reads first, if it reads one, so that the claim's
 * reads fetch it beside the pool (claim-reads.ts): the same start as decide's, from the same `draw`.
 */
export function firstSummaryOf(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  draw: number,
): GroupRef | undefined {
  if (!summarised(pool) || claim.spec.value !== undefined) return undefined;
  const space = spaceOf(pool);
  if (isRanged(space)) return undefined;
  const restricted = space.claimSegments(claim.spec.within, claim.spec.reserved);
  if ('causes' in restricted) return undefined;
  const origin = searchOrigin(ctx, claim, pool, space, restricted.segments, draw);
  const run = origin && runsFrom(restricted.segments, origin.from).next();
  return run && !run.done ? { family: familyOf(space), group: run.value.first >> GROUP_BITS } : undefined;
}

export type Search = (
  from: bigint,
  contended: boolean,
  stopAtCollision?: boolean,
) => ReturnType<typeof allocateNext>;

/** The domain's search (allocateNext) over this claim's candidates, reading the store through a port. */
export function searcher(
  ctx: ClaimContext,
  pool: PoolRecord,
  poolId: PoolId,
  candidates: { space: PoolSpace; segments: readonly Segment[] },
  tryCreate: AllocationPort['tryCreate'],
  prefetchedSummary: PrefetchedSummary | undefined,
): Search {
  const { space, segments } = candidates;
  const allocationKind = poolKindInfo(pool.kind)!.allocationKind;
  const family = familyOf(space);
  let prefetched = prefetchedSummary;
  const port: AllocationPort = {
    heldSlots: (first, last, limit) =>
      ctx.table.heldSlots(poolId, allocationKind, family, first, last, limit),
    // Until the stream function has counted this pool (and this spec), its summaries may still show what
    // an earlier pool of the name held: read the objects.
    summaryHeld: !summarised(pool)
      ? undefined
      : async (first) => {
          const group = { family, group: first >> GROUP_BITS };
          // The summary read beside the pool serves the search's first summary read, if of its group.
          const ready = prefetched;
          prefetched = undefined;
          const bits =
            ready && ready.group.family === family && ready.group.group === group.group
              ? ready.bits
              : await ctx.table.summaries.readGroupBits(poolId, group);
          const from = Number(first - (group.group << GROUP_BITS));
          return (offset) => isHeld(bits, from + offset);
        },
    tryCreate,
  };
  return (from, contended, stopAtCollision = false) =>
    allocateNext(segments, (slot) => space.valueAt(slot), port, {
      from,
      random: ctx.random,
      stopAtCollision,
      contended,
      tookRecently: (slot) => ctx.recentlyTaken?.get(pool.metadata.uid)?.includes(slot) ?? false,
    });
}

/**
 * Searches from the origin; after a collision, again from a spread point; when the spread start was past
 * the last free candidate, again from the hint. What the searches saw goes back for the memory.
 */
export async function searchWithSpread(origin: NonNullable<ReturnType<typeof searchOrigin>>, search: Search) {
  const { unrestricted, start, poolContended, contended, spreadStart, from } = origin;
  // A lone caller's first lost race shows others are claiming here: spread at once rather than try the
  // same block's next free slots, which the others are trying too.
  let next = await search(from, poolContended, unrestricted && !contended);
  let collisions = next.collisions;
  let raced = next.raced;
  // Only the span at the hint says whether the place callers start from is crowded; the spans further
  // on are roomier because the searches spread to them.
  let hintSpanFree = from === start ? next.spanFreeShare : undefined;
  let spread = from > start;
  if (next.kind === 'collided') {
    const jump = spreadStart();
    spread = jump > start;
    next = await search(jump, true);
    collisions += next.collisions;
    raced ||= next.raced;
    if (jump === start) hintSpanFree ??= next.spanFreeShare;
  }
  if (next.kind === 'exhausted' && spread) {
    // The spread start was past the last free candidate: look again from the hint.
    next = await search(start, poolContended);
    collisions += next.collisions;
    raced ||= next.raced;
  }
  return { result: next, collisions, raced, hintSpanFree };
}
