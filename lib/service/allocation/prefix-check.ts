/**
 * No two allocation objects of an IPPrefixPool overlap, whatever their lengths (api.md, "Pools"), with
 * no lock and no item every claim writes. An object of a pool of a range of lengths is placed in two
 * steps, each a single-item operation DynamoDB makes linearizable:
 *
 *   W  the conditional put of the prefix's own key (`attribute_not_exists`): of two callers placing
 *      the same prefix exactly one wins, as in a pool of one length;
 *   R  a strongly consistent read of every key that could hold an overlapping object: its ancestors
 *      by key (one BatchGetItem, a length each from min to its own − 1) and its descendants by one
 *      Query of their key range (store/overlaps.ts keeps them in the prefix's own partition).
 *
 * A writer whose R finds an object takes its own back (a delete conditional on its uid) and moves on;
 * only a writer whose R found nothing keeps its object (a claim settles on it, a user's object is
 * confirmed). Why two kept objects X ⊃ Y cannot exist: X's R did not see Y, so Y's W came after X's R;
 * Y's R did not see X, so X's W came after Y's R. Then W_X < R_X < W_Y < R_Y < W_X, a contradiction.
 * Both write before they read, so at least one of them sees the other; both may (and both retreat:
 * safe, and each moves on to other candidates, at random once it has seen a race).
 *
 *   case                                   what happens
 *   X and Y race, W_Y after R_X            Y's R sees X: Y is taken back; X is kept
 *   X and Y race, W_X after R_Y            X's R sees Y: X is taken back; Y is kept
 *   both R after both W                    both see each other: both are taken back, both move on
 *   equal prefixes                         one key: one put wins, the other moves on without R
 *   a handler dies between W and R         the object stays unchecked; the stream function, on its
 *                                          INSERT, waits for the handler's deadline (as for a claim
 *                                          left Allocating), then does R on its behalf: nothing found
 *                                          → it settles the claim on it; found → takes it back and
 *                                          allocates the claim again
 *   a handler dies after R, before settle  the same: the stream's R on its behalf (a later object
 *                                          that overlaps it saw it and retreated, or will)
 *   a user's object (POST/PUT)             put with `unchecked`, R, then confirmed (REMOVE unchecked,
 *                                          conditional); overlap → withdrawn, 409 naming the other
 *   the user's handler dies before confirm the stream does R on its behalf: withdraw (conditional on
 *                                          `unchecked`, so a confirmed object is never withdrawn) or
 *                                          confirm
 *   a stream record delivered twice        R again on the current state; a decision already made
 *                                          (settled, confirmed, withdrawn) is what a second one finds
 *   two checkers on a placer's behalf      (the stream function, and the repair sweep when the record
 *                                          is lost or late) may see different states: a claim's object
 *                                          they find free is marked `kept` (conditional on its claim),
 *                                          and they take one back only while it is not (conditional),
 *                                          so whichever decides first is what the other finds
 *
 * Name holds (service/allocation/name-holds.ts) take part as one more kind of object. A hold of a prefix sits at
 * the fixed-layout key, which no claim of a ranged pool puts, so it also leaves a mark in the pool's
 * marks partition (store/overlaps.ts), which R reads: the marks' flag in its BatchGetItem, and, only
 * once the flag is there, the ancestors' marks (a second BatchGetItem) and one Query for a mark at or
 * inside the prefix; each of those reads comes after W_C, which is all the case below needs. The
 * hold's own steps are W (hold, then flag, then mark) and R (the pool, read strongly; if it is ranged
 * and hands out the prefix's length, the prefix's own key and every overlapping object):
 *
 *   case                                   what happens
 *   a claim C and a hold H race            as two objects: C kept and H standing would need R_C to
 *                                          miss the mark (W_flag or W_mark after R_C, so W_mark > W_C)
 *                                          and R_H to miss C's object (W_C > R_H > W_mark): impossible
 *   H's R finds an object                  H withdraws (mark, then hold): 409 naming the object
 *   the pool does not exist at R_H         no claim of it has put yet (a claim reads its pool first),
 *                                          so each one's W comes after W_mark, and its R sees the mark
 *   a claim's R meets a mark               it judges the hold (name-holds.ts judgeHold, no wait): one
 *                                          that stands (pending before its deadline, or held) is in
 *                                          the way; a mark whose hold is gone is dropped, R again
 *   a hold's request dies                  judged as any pending hold; its object is put only after
 *                                          its mark and R, so a hold confirmed for it has its mark
 *
 * A mark of a length the pool does not hand out holds nothing of it (as a fixed pool's hold of another
 * length). A fixed pool's claim path does not change: its holds are at its own keys, as before.
 *
 * An object is kept only by an actor whose R found nothing, and it is taken back only while not yet
 * kept (a claim's settle and a user's confirm are conditional, and so is every withdrawal), so a value
 * a caller was told is never taken back. Overlapping objects exist only between one's W and its taking
 * back; the model test checks, after every step, that no two kept objects overlap, and after the
 * stream drains, that no two objects do.
 */
import type { AllocationRecord, ClaimRecord, ItemKey, PoolRecord } from '../../domain/objects/records.ts';
import { ipPrefixValues } from '../../domain/values/ip.ts';
import { spaceOf } from '../../domain/objects/objects.ts';
import { isRanged } from '../../domain/values/prefix-pools.ts';
import type { PoolSpace } from '../../domain/values/values.ts';
import { familyOf, type ParsedValue } from '../../domain/values/values.ts';
import type { Resource } from '../../domain/kinds.ts';
import { poolKeyOf, type PoolId } from '../../store/keys.ts';
import type { Stored } from '../../store/items.ts';
import { rangedAllocationKey, type Overlap, type RangedLayout } from '../../store/overlaps.ts';
import { HANDLER_DEADLINE_MS, type ClaimContext } from '../context.ts';
import { markStands } from './name-holds.ts';

export type Placement =
  | { kind: 'placed'; key: ItemKey }
  | { kind: 'taken'; key: ItemKey }
  | { kind: 'overlaps'; key: ItemKey; other: Overlap };

/** Marks of gone holds one R drops before it gives up on them (and answers an overlap). */
const STALE_MARKS = 8;

/**
 * R: an object or a standing hold's mark that overlaps `value` (see the top of the file); a mark whose
 * hold is gone is dropped on the way.
 */
export async function overlapOf(
  ctx: ClaimContext,
  pool: PoolId,
  layout: RangedLayout,
  value: ParsedValue,
  options: { batch?: boolean } = {},
): Promise<Overlap | undefined> {
  for (let attempt = 0; ; attempt++) {
    const other = await ctx.table.overlaps.overlapping(pool, layout, value, options);
    if (other?.t !== 'heldPrefix' || attempt >= STALE_MARKS || (await markStands(ctx, other))) return other;
  }
}

/** The key layout of a pool of a range of lengths. */
export function layoutOf(space: PoolSpace): RangedLayout {
  const lengths = space.prefixLengths!;
  return { family: familyOf(space) as 4 | 6, min: lengths.min, max: lengths.max };
}

export function layoutOfPool(pool: PoolRecord, space: PoolSpace): RangedLayout & { pool: PoolId } {
  return {
    ...layoutOf(space),
    pool: { namespace: pool.metadata.namespace, kind: pool.kind, name: pool.metadata.name },
  };
}

/**
 * W then R for one prefix. `record` is the object to place: a claim's (taken back by a delete that
 * names the claim) or a user's (`unchecked`, withdrawn, or confirmed when R found nothing).
 */
export async function placeChecked(
  ctx: ClaimContext,
  pool: PoolId,
  layout: RangedLayout,
  value: ParsedValue,
  record: AllocationRecord,
  resource: Resource,
): Promise<Placement> {
  const key = rangedAllocationKey(pool, layout, value);
  const stored: AllocationRecord = { ...record, finest: layout.max };
  const user = record.origin === 'user';
  if (user) stored.unchecked = Date.now() + HANDLER_DEADLINE_MS;
  if (!(await ctx.table.putAllocation(key, stored, value.slot, resource))) {
    // A user's retried put whose first attempt landed (its answer lost) still owes its check.
    const held = user ? await ctx.table.get<AllocationRecord>(key) : undefined;
    if (held?.metadata.uid !== record.metadata.uid) return { kind: 'taken', key };
  }
  const other = await overlapOf(ctx, pool, layout, value);
  if (other && (await takeBack(ctx, key, stored))) return { kind: 'overlaps', key, other };
  if (user && !other) await ctx.table.overlaps.confirm(key, record.metadata.uid);
  if (!user) return { kind: 'placed', key };
  // A user's object is kept once confirmed, by this handler or by the stream function on its behalf.
  const now = await ctx.table.get<AllocationRecord>(key);
  if (now?.t === 'alloc' && now.metadata.uid === record.metadata.uid && now.unchecked === undefined)
    return { kind: 'placed', key };
  return { kind: 'overlaps', key, other: other ?? ({ ...stored, ...key } as Stored<AllocationRecord>) };
}

/** Takes back an object not yet kept; false when it was kept (or went) meanwhile. */
async function takeBack(ctx: ClaimContext, key: ItemKey, record: AllocationRecord): Promise<boolean> {
  if (record.origin === 'user') return ctx.table.overlaps.withdrawUnchecked(key, record.metadata.uid);
  const { name, uid } = record.spec.claimRef!;
  if (await ctx.table.overlaps.takeBackClaimObject(key, name, uid)) return true;
  // Not taken back: a checker kept it (false), or it is gone already (as good as taken back).
  const now = await ctx.table.get<AllocationRecord>(key);
  return !(now?.t === 'alloc' && now.metadata.uid === record.metadata.uid);
}

/**
 * R on behalf of an object whose placer may have died between W and its keep (the stream function):
 * true when it may be kept, false when it was taken back.
 */
export async function recheck(
  ctx: ClaimContext,
  pool: PoolId,
  layout: RangedLayout,
  value: ParsedValue,
  key: ItemKey,
  record: AllocationRecord,
): Promise<boolean> {
  const other = await overlapOf(ctx, pool, layout, value, { batch: false });
  const uid = record.metadata.uid;
  if (other && (await takeBack(ctx, key, record))) return false;
  // Nothing found, or another checker kept it first: kept (a claim's object is marked so, as a user's
  // is confirmed, so that no checker takes back what another kept). False when it went meanwhile.
  if (record.origin === 'user') {
    if (!other) await ctx.table.overlaps.confirm(key, uid);
  } else if (!other && !record.kept) {
    const { name, uid: claimUid } = record.spec.claimRef!;
    if (!(await ctx.table.overlaps.keepClaimObject(key, name, claimUid))) return false;
  }
  const now = await ctx.table.get<AllocationRecord>(key);
  return now?.t === 'alloc' && now.metadata.uid === uid && now.unchecked === undefined;
}

/** How often the stream function looks again while a placer may still be at work. */
const POLL_MS = 25;

const pause = () => new Promise((resolve) => setTimeout(resolve, POLL_MS));

/**
 * For the stream function, on an object of a pool of a range of prefix lengths: whether it may stay.
 * An object its placer has kept (a confirmed user object, a claim's object its claim settled on) stays.
 * One its placer may still be checking is left to the placer until the placer's deadline; after that
 * the placer is gone and R is done on its behalf (taken back when it finds an overlap). Undefined when
 * the object is gone or was taken back; `claimKey` is the claim that must then allocate again.
 */
export async function resolvePlacement(
  ctx: ClaimContext,
  key: ItemKey,
  allocation: Stored<AllocationRecord>,
  claimKey: ItemKey,
  claimRead?: { item: Stored<ClaimRecord> | undefined; consistent: boolean },
): Promise<{ kept: AllocationRecord | undefined; reallocate: boolean }> {
  let current: Stored<AllocationRecord> | undefined = allocation;
  if (allocation.origin === 'user') {
    while (current?.unchecked !== undefined && Date.now() < current.unchecked) {
      await pause();
      const read = await ctx.table.get<AllocationRecord>(key);
      current = read?.t === 'alloc' && read.metadata.uid === allocation.metadata.uid ? read : undefined;
    }
    if (!current || current.unchecked === undefined) return { kept: current, reallocate: false };
    return { kept: (await recheckStored(ctx, key, current)) ? current : undefined, reallocate: false };
  }
  const ref = allocation.spec.claimRef;
  if (!ref?.uid) return { kept: allocation, reallocate: false };
  // `claimRead`: the claim as the caller read it; consistently read, it stands for the first read here.
  for (let first = claimRead?.consistent === true; ; first = false) {
    const claim = first ? claimRead!.item : await ctx.table.get<ClaimRecord>(claimKey);
    if (claim?.t !== 'claim' || claim.metadata.uid !== ref.uid || claim.bound)
      return { kept: allocation, reallocate: false }; // kept, a duplicate, or its claim went: as before
    const deadline = claim.allocatingUntil ? Date.parse(claim.allocatingUntil) : 0;
    if (claim.phase !== 'Allocating' || Date.now() >= deadline) break;
    await pause();
  }
  const read = await ctx.table.get<AllocationRecord>(key);
  if (read?.t !== 'alloc' || read.metadata.uid !== allocation.metadata.uid)
    return { kept: undefined, reallocate: false };
  const kept = await recheckStored(ctx, key, read);
  return { kept: kept ? read : undefined, reallocate: !kept };
}

async function recheckStored(ctx: ClaimContext, key: ItemKey, allocation: Stored<AllocationRecord>) {
  const poolId: PoolId = {
    namespace: allocation.metadata.namespace,
    kind: allocation.spec.poolRef.kind as PoolId['kind'],
    name: allocation.spec.poolRef.name,
  };
  const pool = await ctx.table.get<PoolRecord>(poolKeyOf(poolId));
  const space = pool?.t === 'pool' ? spaceOf(pool) : undefined;
  const value = ipPrefixValues.parse(allocation.value);
  // Without its pool (deleted meanwhile) there is nothing to place it in: it stays, as objects do.
  if (!space || !isRanged(space) || !value.ok) {
    if (allocation.origin === 'user') await ctx.table.overlaps.confirm(key, allocation.metadata.uid);
    return true;
  }
  return recheck(ctx, poolId, layoutOf(space), value.value, key, allocation);
}
