/**
 * The repair sweep's checks of one pool (service/repair/sweep.ts): each allocation object against its claim and
 * its summary bit, each listed group's bits against the objects, the counts against the summaries, and
 * the claims that wait for the pool against what is free.
 */
import { claimNamespaceOf, isSharedClaim } from '../../domain/objects/sharing.ts';
import { checkHolders, mayHoldMore } from './holders.ts';
import { checkHoldings } from './holdings.ts';
import { countCandidates, ordinalOf } from '../../domain/values/candidates.ts';
import { poolKindInfo, type PoolKindInfo } from '../../domain/kinds.ts';
import { spaceOf, timestamp } from '../../domain/objects/objects.ts';
import type { AllocationRecord, ClaimRecord, ItemKey, PoolRecord } from '../../domain/objects/records.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import { familyOf, type PoolSpace } from '../../domain/values/values.ts';
import { isRanged } from '../../domain/values/prefix-pools.ts';
import { isHeld, setHeld, type Stored } from '../../store/items.ts';
import {
  allocationKey,
  GROUP_BITS,
  LIST_SHARDS,
  objectKey,
  poolKeyOf,
  type GroupRef,
} from '../../store/keys.ts';
import { allocatedOutcome, bindable, reconcileClaim, settle } from '../allocation/decide.ts';
import { reclaim, refreshPool, wakeWaiting } from '../stream/reconcile.ts';
import { resolvePlacement } from '../allocation/prefix-check.ts';
import { firstFree } from '../counts/tally.ts';
import { candidateOrdinal, countSummaries } from '../counts/count.ts';
import { quarantineFreed, quarantineOf } from '../leases/quarantine.ts';
import { GROUP_SIZE, listGroup, olderThanGrace, readSummary, refId, type PoolWalk } from './walk.ts';
import { checkRangedAllocation, checkRangedGroups, couldTakeRanged } from './ranged.ts';
import {
  claimItem,
  claimItemAt,
  exhausted,
  fix,
  forgetClaim,
  handlerMayRun,
  keyText,
  pause,
  spend,
  zeroCounts,
  type Sweep,
} from './state.ts';

const OBJECT_PAGE = 100;
/** Waiting claims of one pool looked at per run (the stream function wakes as many per refresh). */
const WAITING_LIMIT = 100;

const sameKey = (a: ItemKey | undefined, b: ItemKey) => a?.pk === b.pk && a.sk === b.sk;

/** Sweeps one pool from the cursor; false when the budget ran out (the cursor says where to go on). */
export async function sweepPool(sweep: Sweep, pool: Stored<PoolRecord>): Promise<boolean> {
  const id = { namespace: sweep.namespace, kind: pool.kind, name: pool.metadata.name };
  const info = poolKindInfo(pool.kind)!;
  const cursor = sweep.cursor;
  const walk: PoolWalk = {
    pool,
    id,
    summaries: new Map(),
    ranged: isRanged(spaceOf(pool)),
    seen: cursor.shard === 0 && cursor.after === undefined ? new Map() : undefined,
    seenMembers: cursor.shard === 0 && cursor.after === undefined ? new Map() : undefined,
    objects: cursor.shard === 0 && cursor.after === undefined ? new Map() : undefined,
  };
  while (cursor.shard < LIST_SHARDS) {
    if (exhausted(sweep)) return false;
    spend(sweep);
    const page = await sweep.store.poolAllocations(
      id,
      info.allocationResource,
      cursor.shard,
      OBJECT_PAGE,
      cursor.after,
    );
    for (const allocation of page.items) await checkAllocation(sweep, walk, allocation);
    if (page.last !== undefined) cursor.after = page.last;
    else Object.assign(cursor, { shard: cursor.shard + 1, after: undefined });
  }
  // The rest of the pool is one unit of work: its groups, counts and waiting claims.
  if (exhausted(sweep)) return false;
  let held: Set<bigint> | undefined;
  if (sweep.recheckMs > 0 && !sweep.dryRun) {
    // First only look: a disagreement may be a record in flight, which the stream function settles.
    const look: Sweep = { ...sweep, dryRun: true, found: zeroCounts(), fixed: zeroCounts() };
    await (walk.ranged ? checkRangedGroups(look, walk) : checkGroups(look, walk));
    held = await checkCounts(look, walk);
    sweep.requests = look.requests;
    if (look.found.summaryBit + look.found.poolCounts > 0) {
      await pause(sweep.recheckMs, sweep.signal);
      if (exhausted(sweep)) return false;
      Object.assign(walk, { summaries: new Map(), seen: undefined, seenMembers: undefined });
      held = undefined;
    }
  }
  if (!held) {
    await (walk.ranged ? checkRangedGroups(sweep, walk) : checkGroups(sweep, walk));
    held = await checkCounts(sweep, walk);
  }
  if (held) await checkWaiting(sweep, walk, held);
  if (walk.pool.spec.sharedWith !== undefined) await checkHolders(sweep, walk);
  await checkHoldings(sweep, walk);
  await checkCascade(sweep, walk);
  return true;
}

/**
 * Longer than any request runs (the api function stops at 29 s): a pool marked by a cascade this long
 * ago was left by a request that died and was not retried.
 */
const CASCADE_ABANDONED_MS = 15 * 60_000;

/**
 * A cascade that died part way and was never retried leaves its pool marked `deleting`, and to every
 * claim a pool that does not exist: the mark is cleared, and the pool's waiting claims woken, so the pool
 * serves again (what the cascade deleted stays deleted; a retried cascade marks it anew).
 */
async function checkCascade(sweep: Sweep, walk: PoolWalk): Promise<void> {
  const since = walk.pool.deleting;
  if (since === undefined || Date.now() - Date.parse(since) < CASCADE_ABANDONED_MS) return;
  await fix(sweep, 'abandonedCascade', async () => {
    const key = { pk: walk.pool.pk, sk: walk.pool.sk };
    if (!(await sweep.ctx.table.clearDeleting(key, since))) return false;
    await wakeWaiting(sweep.ctx, walk.id);
    return true;
  });
}

/**
 * The objects of pools that do not exist, one stage's kind: their bindings, checked as a pool's objects'
 * are (an object may be made before its pool and bound by a claim; that claim's release with its REMOVE
 * lost leaves it bound to no claim, and no pool's walk comes by). Found in the `allocations` index: per
 * shard, one keys-only read per pool name there, and one read of each pool named (a pool's own walk
 * covers its objects). Resumes from the cursor; false when the budget ran out.
 */
export async function sweepPoolless(sweep: Sweep, info: PoolKindInfo): Promise<boolean> {
  const { ctx, namespace, cursor } = sweep;
  const exists = new Map<string, boolean>();
  for (; cursor.shard < LIST_SHARDS; Object.assign(cursor, { shard: cursor.shard + 1, after: undefined })) {
    for (;;) {
      if (exhausted(sweep)) return false;
      spend(sweep);
      const name = await sweep.store.nextPoolWithAllocations(
        namespace,
        info.allocationResource,
        cursor.shard,
        cursor.after,
      );
      if (name === undefined) break;
      if (!exists.has(name)) {
        spend(sweep);
        const pool = await ctx.table.get<PoolRecord>(objectKey(namespace, info.resource, name));
        exists.set(name, pool?.t === 'pool');
      }
      if (!exists.get(name)) {
        const id = { namespace, kind: info.kind, name };
        let after: string | undefined;
        do {
          spend(sweep);
          const page = await sweep.store.poolAllocations(
            id,
            info.allocationResource,
            cursor.shard,
            OBJECT_PAGE,
            after,
          );
          for (const allocation of page.items)
            await checkBinding(sweep, allocation, { pk: allocation.pk, sk: allocation.sk });
          after = page.last;
        } while (after !== undefined);
      }
      cursor.after = name;
    }
  }
  return true;
}

/** One allocation object: its summary bit, and its claimRef against the claim it names. */
async function checkAllocation(
  sweep: Sweep,
  walk: PoolWalk,
  allocation: Stored<AllocationRecord>,
): Promise<void> {
  const key = { pk: allocation.pk, sk: allocation.sk };
  walk.objects?.set(allocation.value, allocation);
  const value = valueKind(allocation.kind).parse(allocation.value);
  if (value.ok && walk.ranged) await checkRangedAllocation(sweep, walk, allocation, value.value, key);
  else if (value.ok) {
    const { slot, family } = value.value;
    const ref = { family, group: slot >> GROUP_BITS };
    if (walk.seen) {
      const slots = walk.seen.get(refId(ref)) ?? new Set<bigint>();
      slots.add(slot);
      walk.seen.set(refId(ref), slots);
    }
    const summary = await readSummary(sweep, walk, ref);
    // A new object's bit is the stream function's to set: only one older than the grace period is wrong.
    if (olderThanGrace(sweep, allocation)) {
      if (!isHeld(summary.bits, Number(slot & (GROUP_SIZE - 1n))))
        await fix(sweep, 'summaryBit', () => setBit(sweep, walk, ref, slot, key, true));
      else if (!summary.listed) await fix(sweep, 'summaryBit', () => listGroup(sweep, walk, ref));
    }
  }
  await checkBinding(sweep, allocation, key);
}

async function checkBinding(sweep: Sweep, allocation: AllocationRecord, key: ItemKey): Promise<void> {
  const { ctx } = sweep;
  const ref = allocation.spec.claimRef;
  if (!ref) return;
  const claimNamespace = claimNamespaceOf(allocation);
  const claimKey = objectKey(claimNamespace, 'claims', ref.name);
  const item = await claimItem(sweep, ref.name, claimNamespace);
  const live = item?.t === 'claim' ? item : undefined;
  if (ref.uid !== '') {
    if (live && live.metadata.uid === ref.uid) {
      if (sameKey(live.bound, key)) return;
      if (live.bound) {
        // The claim holds another object: this one is from a race it lost and did not give back.
        if (allocation.origin === 'claim' && olderThanGrace(sweep, allocation))
          await fix(sweep, 'duplicateAllocation', () =>
            ctx.table.deleteBoundAllocation(key, ref.name, ref.uid),
          );
        return;
      }
      // Its handler put the object and never settled the claim (it died, and the record was lost).
      if (handlerMayRun(live)) return;
      await fix(sweep, 'unsettledClaim', async () => {
        forgetClaim(sweep, claimKey);
        if (allocation.finest !== undefined) {
          // A pool of a range of lengths: its handler may have died before its check for overlap, which
          // is done now on its behalf, as the stream function would (service/allocation/prefix-check.ts).
          const resolved = await resolvePlacement(ctx, key, { ...allocation, ...key }, claimKey);
          if (resolved.reallocate) await reconcileClaim(ctx, claimKey);
          if (!resolved.kept) return resolved.reallocate;
        }
        const settled = await settle(
          ctx,
          claimKey,
          live,
          allocatedOutcome(live, allocation, key, timestamp()),
        );
        return sameKey(settled?.bound, key);
      });
      return;
    }
    // Bound to a claim that no longer exists (released, or recreated under the name).
    if (!olderThanGrace(sweep, allocation)) return;
    await fix(sweep, 'orphanedAllocation', async () => {
      sweep.touched.add(keyText(key));
      if (allocation.origin === 'claim') return reclaim(ctx, key, allocation);
      // A user's object keeps its value; the uid that names no claim is cleared (as the stream does).
      if (!(await ctx.table.setAllocationUid(key, ref.name, ref.uid, ''))) return false;
      if (!live?.bound) await ctx.table.offerToClaim(claimKey, key);
      forgetClaim(sweep, claimKey);
      return true;
    });
    return;
  }
  // What follows is the stream function's work on the object's own record: left to it while it is new.
  if (!olderThanGrace(sweep, allocation)) return;
  if (live) {
    // Offered to a claim that waits: it may bind it now.
    if (live.bound || live.phase === 'Allocated' || handlerMayRun(live) || !bindable(allocation, live))
      return;
    if (live.phase !== 'Waiting' && live.phase !== 'Allocating') return;
    await fix(sweep, 'waitingClaim', async () => {
      forgetClaim(sweep, claimKey);
      await ctx.table.offerToClaim(claimKey, key);
      return (await reconcileClaim(ctx, claimKey))?.phase === 'Allocated';
    });
    return;
  }
  // No claim of the name: its stub must carry the offer, or a claim made under the name never sees it.
  const stub = item?.t === 'stub' ? item : undefined;
  if (stub?.offers?.[keyText(key)] !== undefined) return;
  await fix(sweep, 'lostOffer', async () => {
    forgetClaim(sweep, claimKey);
    await ctx.table.offerToClaim(claimKey, key);
    return true;
  });
}

/**
 * Sets a slot's bit to whether its object exists, if the summary still disagrees and the object (read
 * consistently) confirms it; conditional on the summary's version, so a stream batch writing the group
 * meanwhile wins and this tries again on what it wrote.
 */
async function setBit(
  sweep: Sweep,
  walk: PoolWalk,
  ref: GroupRef,
  slot: bigint,
  key: ItemKey,
  held: boolean,
): Promise<boolean> {
  const { summaries } = sweep.ctx.table;
  const offset = Number(slot & (GROUP_SIZE - 1n));
  for (let attempt = 0; attempt < 5; attempt++) {
    const summary = await summaries.readGroup(walk.id, ref);
    walk.summaries.set(refId(ref), { ref, summary });
    // Already so: perhaps by this very write, landed with its answer lost (the retry then lost the
    // version condition). A group that write made must still be listed, or no recount sees the bit.
    if (isHeld(summary.bits, offset) === held)
      return held && !summary.listed ? listGroup(sweep, walk, ref) : false;
    const current = await sweep.ctx.table.get<{ t?: string }>(key);
    // A name hold or a quarantine holds its slot too, though neither is an object of the pool.
    if (holdsItsSlot(current) !== held) return false;
    const bits = summary.bits.slice();
    setHeld(bits, offset, held);
    // A bit that goes takes its hold and quarantine marks with it; one that comes is an object's (holds
    // and quarantines come by stream).
    const holds = held ? undefined : summary.holds.slice();
    const quarantines = held ? undefined : summary.quarantines.slice();
    if (holds) setHeld(holds, offset, false);
    if (quarantines) setHeld(quarantines, offset, false);
    if (await summaries.writeGroup(walk.id, ref, bits, summary.version, [], { holds, quarantines })) {
      walk.summaries.set(refId(ref), {
        ref,
        summary: {
          ...summary,
          bits,
          holds: holds ?? summary.holds,
          quarantines: quarantines ?? summary.quarantines,
          version: (summary.version ?? 0) + 1,
        },
      });
      if (!summary.listed) await listGroup(sweep, walk, ref);
      return true;
    }
  }
  return false;
}

/** Each listed group's held bits against the objects: a bit whose object is gone (a lost removal). */
async function checkGroups(sweep: Sweep, walk: PoolWalk): Promise<void> {
  const info = poolKindInfo(walk.pool.kind)!;
  // A pool that quarantines holds a value back instead of freeing it: the lost record was its object's REMOVE.
  const space = quarantineOf(walk.pool) > 0 ? spaceOf(walk.pool) : undefined;
  spend(sweep);
  for await (const ref of sweep.ctx.table.summaries.listedGroups(walk.id)) {
    const summary = await readSummary(sweep, walk, ref);
    if (summary.bits.every((byte) => byte === 0)) continue;
    let objects = walk.seen?.get(refId(ref));
    if (!objects) {
      spend(sweep, LIST_SHARDS);
      objects = await sweep.store.groupSlots(walk.id, info.allocationResource, info.allocationKind, ref);
    }
    for (const slot of heldSlotsOf(ref, summary.bits)) {
      if (objects.has(slot)) continue;
      const key = allocationKey(walk.id, info.allocationKind, { slot, family: ref.family });
      if (sweep.touched.has(keyText(key))) continue; // this run deleted it: its record is the stream's
      // A slot marked as name-held (or quarantined) has no object in the index: the hold or quarantine
      // itself is what holds it (one read each: a quarantine's REMOVE may be the record that was lost).
      if (isHeld(summary.holds, Number(slot & (GROUP_SIZE - 1n)))) {
        spend(sweep);
        if (holdsItsSlot(await sweep.ctx.table.get<{ t?: string }>(key))) continue;
      }
      const candidate = space && candidateOrdinal(space, ref.family, slot) !== undefined;
      await fix(sweep, 'summaryBit', () =>
        candidate
          ? quarantineFreed(sweep.ctx, walk.pool, key, {
              kind: info.allocationKind,
              value: space.valueAt(slot).value,
            })
          : setBit(sweep, walk, ref, slot, key, false),
      );
    }
  }
}

/** Whether the item at an allocation key holds its slot: an object, a name hold or a quarantine. */
function holdsItsSlot(item: { t?: string } | undefined): boolean {
  return item?.t === 'alloc' || item?.t === 'hold' || item?.t === 'quarantine';
}

function* heldSlotsOf(ref: GroupRef, bits: Uint8Array): Generator<bigint> {
  for (let index = 0; index < bits.length; index++) {
    const byte = bits[index]!;
    if (byte === 0) continue;
    for (let bit = 0; bit < 8; bit++)
      if ((byte >> bit) & 1) yield (ref.group << GROUP_BITS) + BigInt(index * 8 + bit);
  }
}

/**
 * The pool's counts against its summaries (which now agree with the objects); recounted when they differ.
 * Returns the held slots of the pool's family, for the waiting claims.
 */
async function checkCounts(sweep: Sweep, walk: PoolWalk): Promise<Set<bigint> | undefined> {
  spend(sweep, 2 + walk.summaries.size);
  const pool = await sweep.ctx.table.get<PoolRecord>(poolKeyOf(walk.id));
  if (pool?.t !== 'pool' || pool.metadata.uid !== walk.pool.metadata.uid) return undefined;
  const space = spaceOf(pool);
  const { allocated, heldOrdinals } = await countSummaries(sweep.ctx, walk.id, space);
  const counts = pool.counts;
  const wrong =
    counts === undefined ||
    counts.generation !== pool.metadata.generation ||
    counts.allocated !== allocated ||
    BigInt(counts.held) !== BigInt(heldOrdinals.length) ||
    BigInt(counts.searchFrom) > firstFree(heldOrdinals, 0n);
  if (wrong)
    await fix(sweep, 'poolCounts', async () => {
      await refreshPool(sweep.ctx, walk.id, [], { recount: true });
      return true;
    });
  const family = familyOf(space);
  const held = new Set<bigint>();
  for (const { ref, summary } of walk.summaries.values())
    if (ref.family === family) for (const slot of heldSlotsOf(ref, summary.bits)) held.add(slot);
  return held;
}

/** Claims waiting for the pool although a candidate they may take is free (a lost wake-up). */
async function checkWaiting(sweep: Sweep, walk: PoolWalk, held: Set<bigint>): Promise<void> {
  const { ctx } = sweep;
  spend(sweep);
  const space = spaceOf(walk.pool);
  for (const key of await ctx.table.waitingClaims(walk.id, WAITING_LIMIT)) {
    const item = await claimItemAt(sweep, key);
    if (item?.t !== 'claim' || item.phase !== 'Waiting') continue;
    const reason = item.status.conditions[0]?.reason;
    const could = walk.ranged ? couldTakeRanged : couldTake;
    if (reason === 'QuotaExceeded' || isSharedClaim(item)) {
      if (!(await mayHoldMore(sweep, walk, item))) continue;
    }
    if (reason !== 'PoolNotFound' && reason !== 'QuotaExceeded' && !could(walk.pool, space, item, held))
      continue;
    await fix(sweep, 'waitingClaim', async () => {
      forgetClaim(sweep, key);
      return (await reconcileClaim(ctx, key))?.phase === 'Allocated';
    });
  }
}

/** Whether a candidate the claim may take (its value, or one within its limits) holds no object. */
function couldTake(pool: PoolRecord, space: PoolSpace, claim: ClaimRecord, held: Set<bigint>): boolean {
  const restricted = space.claimSegments(claim.spec.within, claim.spec.reserved);
  if ('causes' in restricted) return false;
  if (claim.spec.value !== undefined) {
    const value = valueKind(poolKindInfo(pool.kind)!.allocationKind).parse(claim.spec.value);
    if (!value.ok || !space.fits(value.value)) return false;
    return ordinalOf(restricted.segments, value.value.slot) !== undefined && !held.has(value.value.slot);
  }
  let heldWithin = 0n;
  for (const slot of held) if (ordinalOf(restricted.segments, slot) !== undefined) heldWithin++;
  return heldWithin < countCandidates(restricted.segments);
}
