/**
 * What the stream function repairs and keeps current (after Kubernetes' repairip.go). Every case reads the
 * current state with consistent reads and writes conditionally, so it is safe to run twice, late, or out
 * of order; the record's images only say where to look.
 *
 *   record                         what it means                         what is done
 *   claim removed                  a release                             the reclaim policy, if the claim's
 *                                                                        allocation still names its uid
 *                                                                        (Recycle: delete; Retain: clear the
 *                                                                        uid, keep the name, offer it back)
 *   claim inserted/changed,        a handler died while allocating,      allocate it now
 *     still Allocating/Waiting     or it waits
 *   allocation inserted/changed,   a claim's put landed (maybe its       settle that claim with it
 *     naming a live claim's uid    handler died before settling)
 *                                  a duplicate from a lost race          give it back
 *   allocation naming a gone       a claim released or recreated         the reclaim policy (server-made
 *     claim's uid                  while its handler was at work         allocations only)
 *   allocation naming a claim,     pre-provisioned or retained           bind it to that claim if it waits;
 *     uid empty or stale           (allow-binding)                       offer it to the name otherwise
 *                                                                        (a stale uid is cleared first)
 *   allocation removed             a value freed; a bound claim lost     the claim allocates again
 *                                  its allocation object
 *   claim settled on an object     the object went before the settle     the claim allocates again
 *     that is gone                 landed
 *   pool inserted, spec changed    claims may fit now                    recount, wake waiting claims
 *   pool removed                   its waiting claims wait for it to     wake them (they say PoolNotFound)
 *                                  exist again
 *   allocation inserted/removed    counts and hint moved                 the batch's slot changes go to
 *                                                                        the pool's counts (lib/service/tally.ts);
 *                                                                        wake waiters after a removal
 *   name hold inserted/changed     a pre-provision holds a name          wait for its request until its
 *                                  (service/name-holds.ts)               deadline; then confirm it or, with
 *                                                                        no object, delete it; counts
 *   user's object with a held      its create lost its hold and never    delete the object
 *     name, without its hold       answered 201
 *   user's object removed          its name goes with it                 delete its name hold
 */
import { allocatedOutcome, bindable, reconcileClaim, settle } from './decide.ts';
import { poolKindInfo, type AllocationKind, type PoolKind } from '../domain/kinds.ts';
import type {
  AllocationRecord,
  ClaimRecord,
  ItemKey,
  NameHoldRecord,
  PoolRecord,
} from '../domain/records.ts';
import { valueKind } from '../domain/spaces.ts';
import { tallyPool, type SlotChange } from './tally.ts';
import { prefixMember } from './tally-runs.ts';
import { resolvePlacement } from './prefix-check.ts';
import { claimValueChanged, refreshCarved } from './carving.ts';

import { spaceOf, timestamp } from '../domain/objects.ts';
import { isRanged } from '../domain/prefix-pools.ts';
import { familyOf, type PoolSpace } from '../domain/values.ts';
import { heldPrefixKey } from '../store/overlaps.ts';
import { objectKey, poolKeyOf, type PoolId } from '../store/keys.ts';
import { type Stored } from '../store/items.ts';
import { type ClaimContext } from './context.ts';
import { dropUnheldObject, holdKeyOfObject, judgeHold, type AtAllocationKey } from './name-holds.ts';

export interface ChangeRecord {
  /** The stream record's id (Lambda's eventID): the same record delivered again has the same id. */
  id: string;
  eventName: 'INSERT' | 'MODIFY' | 'REMOVE';
  keys: ItemKey;
  oldImage?: Record<string, unknown>;
  newImage?: Record<string, unknown>;
}

/** How many waiting claims one pool refresh tries at most; the allocations it makes trigger the next. */
const WAKE_LIMIT = 100;

/** A pool whose counts and waiting claims must be refreshed: a slot change, or a recount. */
export interface Touched {
  pool: PoolId;
  change?: SlotChange;
  recount?: boolean;
  /** The pool went: its waiting claims now wait for it to exist (PoolNotFound). */
  removed?: boolean;
}

/** Handles one record; returns the pools it touched. */
export async function reconcileRecord(ctx: ClaimContext, record: ChangeRecord): Promise<Touched[]> {
  const image = (record.newImage ?? record.oldImage) as { t?: string } | undefined;
  switch (image?.t) {
    case 'claim':
      if (record.eventName === 'REMOVE') await claimRemoved(ctx, record.oldImage as unknown as ClaimRecord);
      else {
        await keepStubOffers(ctx, record);
        const claim = await reconcileClaim(ctx, record.keys);
        if (claim && newlyBound(record)) await checkBound(ctx, record.keys, claim);
      }
      // Pools carved from the claim follow its value (service/carving.ts).
      if (valueChanged(record))
        await claimValueChanged(ctx, (record.newImage ?? record.oldImage) as unknown as ClaimRecord);
      return [];
    case 'alloc':
      return allocationChanged(ctx, record);
    case 'pool': {
      const pool = record.newImage as unknown as PoolRecord | undefined;
      // A carved pool created just as its claim got its value: whichever came last sees the other.
      if (record.eventName === 'INSERT' && pool?.spec.prefixesFrom !== undefined)
        await refreshCarved(
          ctx,
          pool.metadata.namespace,
          poolKindInfo(pool.kind)!.resource,
          pool.metadata.name,
        );
      const touched = poolChanged(record);
      if (record.eventName === 'INSERT' && pool) touched.push(...(await heldBeforePool(ctx, record, pool)));
      return touched;
    }
    case 'hold':
      return holdChanged(ctx, record);
    default:
      return [];
  }
}

/**
 * A claim written over its name's stub: the stub's offers go onto the claim, so they outlive the handler
 * that read them (it may die, or lose the answer of its write) and serve the claim while it waits.
 */
async function keepStubOffers(ctx: ClaimContext, record: ChangeRecord): Promise<void> {
  const before = record.oldImage as { t?: string; offers?: Record<string, ItemKey> } | undefined;
  if (before?.t !== 'stub') return;
  for (const offer of Object.values(before.offers ?? {})) await ctx.table.offerToClaim(record.keys, offer);
}

/** Whether a claim's record changes the value it holds (or its presence). */
function valueChanged(record: ChangeRecord): boolean {
  const after = (record.newImage as { status?: { value?: string } } | undefined)?.status?.value;
  const before = (record.oldImage as { status?: { value?: string } } | undefined)?.status?.value;
  return after !== before;
}

/** A claim's write that bound it to an allocation object (the settle), rather than any other change. */
function newlyBound(record: ChangeRecord): boolean {
  const after = (record.newImage as { bound?: ItemKey } | undefined)?.bound;
  const before = (record.oldImage as { bound?: ItemKey } | undefined)?.bound;
  return after !== undefined && (before?.pk !== after.pk || before.sk !== after.sk);
}

/**
 * A settle may land after the allocation object it names went (a user deleted it), and that object's
 * removal be handled first: records of two items come in no set order. The claim would then say it holds
 * a value that no object holds, free for another claim; instead it allocates again.
 */
async function checkBound(ctx: ClaimContext, key: ItemKey, claim: ClaimRecord): Promise<void> {
  if (claim.phase !== 'Allocated' || !claim.bound) return;
  const allocation = await ctx.table.get<AllocationRecord>(claim.bound);
  if (allocation?.t === 'alloc' && allocation.spec.claimRef?.uid === claim.metadata.uid) return;
  if (await ctx.table.unbindClaim(key, claim.metadata.uid, claim.bound)) await reconcileClaim(ctx, key);
}

function poolChanged(record: ChangeRecord): Touched[] {
  const pool = (record.newImage ?? record.oldImage) as unknown as PoolRecord;
  const id = { namespace: pool.metadata.namespace, kind: pool.kind, name: pool.metadata.name };
  if (record.eventName === 'INSERT') return [{ pool: id, recount: true }];
  if (record.eventName === 'REMOVE') return [{ pool: id, removed: true }];
  if (record.eventName === 'MODIFY') {
    const before = record.oldImage as unknown as PoolRecord | undefined;
    // A counts write by this function changes no generation: nothing to do, and no loop.
    return before?.metadata.generation === pool.metadata.generation &&
      before.metadata.uid === pool.metadata.uid
      ? []
      : [{ pool: id, recount: true }];
  }
  return [];
}

function poolIdOfAllocation(allocation: AllocationRecord): PoolId {
  return {
    namespace: allocation.metadata.namespace,
    kind: allocation.spec.poolRef.kind as PoolKind,
    name: allocation.spec.poolRef.name,
  };
}

function claimKey(namespace: string, name: string): ItemKey {
  return objectKey(namespace, 'claims', name);
}

/**
 * The slot a record names, and what holds it now: an allocation object, a name hold, or nothing (the key
 * is the pool and the value, so whatever is there is of that pool).
 */
function slotTouched(
  pool: PoolId,
  kind: AllocationKind,
  valueText: string,
  record: ChangeRecord,
  stored: AtAllocationKey | undefined,
  finest?: number,
): Touched[] {
  const value = valueKind(kind).parse(valueText);
  if (!value.ok) return [];
  const { slot, family, length } = value.value;
  if (finest !== undefined && length !== undefined) {
    // A pool of a range of prefix lengths: the run of finest slots the prefix covers, a member of the
    // group summaries while an allocation object is at its key (service/tally-runs.ts).
    const run = prefixMember(value.value, finest, false);
    const present = stored?.t === 'alloc';
    const raced = stored?.t === 'alloc' && stored.raced === true;
    return [{ pool, change: { record: record.id, slot: run.first, family, present, raced, run } }];
  }
  const present = stored?.t === 'alloc' || stored?.t === 'hold';
  const hold = stored?.t === 'hold';
  const raced = stored?.t === 'alloc' && stored.raced === true;
  return [{ pool, change: { record: record.id, slot, family, present, hold, raced } }];
}

/**
 * A name hold's record: the slot it holds, and the hold judged (its request may have died). In a pool
 * of a range of prefix lengths the hold is a member of the summaries (its prefix's run, counted as no
 * object, service/tally-runs.ts) when the pool hands out its length; a hold that went takes its mark
 * (service/prefix-check.ts) with it.
 */
async function holdChanged(ctx: ClaimContext, record: ChangeRecord): Promise<Touched[]> {
  const hold = (record.newImage ?? record.oldImage) as unknown as NameHoldRecord;
  const stored = await ctx.table.get<AllocationRecord | NameHoldRecord>(record.keys);
  const pool = { namespace: hold.metadata.namespace, kind: hold.poolRef.kind, name: hold.poolRef.name };
  const standing = stored?.t === 'hold' && stored.value === hold.value;
  const space = hold.kind === 'IPPrefix' ? await poolSpace(ctx, pool) : undefined;
  const pools =
    stored?.t === 'alloc' && stored.finest !== undefined
      ? [] // an object of a range pool replaced the hold: its own record counts it
      : space && isRanged(space)
        ? heldPrefixTouched(pool, space, hold.value, record.id, standing)
        : slotTouched(pool, hold.kind, hold.value, record, stored);
  if (stored?.t === 'hold') await judgeHold(ctx, stored, true);
  if (!(stored?.t === 'hold' && stored.metadata.uid === hold.metadata.uid)) await unmarkHold(ctx, pool, hold);
  return pools;
}

/** Drops the mark of a hold that went (conditional on its uid: a later hold's mark stays). */
async function unmarkHold(ctx: ClaimContext, pool: PoolId, hold: NameHoldRecord): Promise<void> {
  if (hold.kind !== 'IPPrefix') return;
  const value = valueKind(hold.kind).parse(hold.value);
  if (value.ok) await ctx.table.overlaps.unmark(heldPrefixKey(pool, value.value), hold.metadata.uid);
}

/** A held prefix of a pool of a range of lengths as a member change (none for a length it does not hand out). */
function heldPrefixTouched(
  pool: PoolId,
  space: PoolSpace,
  valueText: string,
  recordId: string,
  present: boolean,
): Touched[] {
  const value = valueKind('IPPrefix').parse(valueText);
  if (!value.ok || !space.fits(value.value)) return [];
  const run = prefixMember(value.value, space.prefixLengths!.max, true);
  const change = { record: recordId, slot: run.first, family: value.value.family, present, hold: true, run };
  return [{ pool, change }];
}

/** The pool's space, when the pool exists. */
async function poolSpace(ctx: ClaimContext, id: PoolId): Promise<PoolSpace | undefined> {
  const pool = await ctx.table.get<PoolRecord>(poolKeyOf(id));
  return pool?.t === 'pool' ? spaceOf(pool) : undefined;
}

/**
 * A new IPPrefixPool of a range of lengths: the prefixes held before it existed, from their marks
 * (store/overlaps.ts), as hold members for its first recount. (Their holds' records found no pool and
 * set a bit at the prefix's own slot, as for a pool of one length: the same slot when the prefix is a
 * /max, else a bit the repair sweep finds is no member's and clears.) A hold whose mark came after this
 * read is confirmed after it, and that record finds the pool.
 */
async function heldBeforePool(ctx: ClaimContext, record: ChangeRecord, pool: PoolRecord): Promise<Touched[]> {
  const id = { namespace: pool.metadata.namespace, kind: pool.kind, name: pool.metadata.name };
  if (id.kind !== 'IPPrefixPool') return [];
  const space = await poolSpace(ctx, id);
  if (!space || !isRanged(space)) return [];
  const touched: Touched[] = [];
  for (const mark of await ctx.table.overlaps.marks(id, familyOf(space) as 4 | 6)) {
    const hold = await ctx.table.get<NameHoldRecord>(mark.hold);
    const standing = hold?.t === 'hold' && hold.metadata.uid === mark.metadata.uid;
    touched.push(...heldPrefixTouched(id, space, mark.value, `${record.id}#${mark.sk}`, standing));
  }
  return touched;
}

/** Release: the pool's reclaim policy, applied only if the allocation still names this claim's uid. */
async function claimRemoved(ctx: ClaimContext, claim: ClaimRecord): Promise<void> {
  // Offers name the claim's name, not its uid: they go back to the name (a stub, or a claim recreated
  // meanwhile, which the change wakes), or a recreated claim would never see them.
  const key = claimKey(claim.metadata.namespace, claim.metadata.name);
  for (const offer of Object.values(claim.offers ?? {})) await ctx.table.offerToClaim(key, offer);
  if (!claim.bound) return; // it held nothing; an allocation put still in flight is caught on its insert
  const allocation = await ctx.table.get<AllocationRecord>(claim.bound);
  if (allocation?.t !== 'alloc' || allocation.spec.claimRef?.uid !== claim.metadata.uid) return;
  await reclaim(ctx, claim.bound, allocation);
}

/** Applies the pool's reclaim policy to an allocation whose claim went; true when this call changed it. */
export async function reclaim(
  ctx: ClaimContext,
  key: ItemKey,
  allocation: AllocationRecord,
): Promise<boolean> {
  const ref = allocation.spec.claimRef!;
  const pool = await ctx.table.get<PoolRecord>(poolKeyOf(poolIdOfAllocation(allocation)));
  if (pool?.t === 'pool' && pool.spec.reclaimPolicy === 'Retain') {
    // Retain keeps the value and the claim's name but clears the uid: a claim recreated under that name
    // may rebind through allow-binding (the seed document's promise); nobody else can take the value.
    if (!(await ctx.table.setAllocationUid(key, ref.name, ref.uid, ''))) return false;
    await ctx.table.offerToClaim(claimKey(allocation.metadata.namespace, ref.name), key);
    return true;
  }
  return ctx.table.deleteBoundAllocation(key, ref.name, ref.uid);
}

async function allocationChanged(ctx: ClaimContext, record: ChangeRecord): Promise<Touched[]> {
  const before = record.oldImage as unknown as AllocationRecord | undefined;
  const after = record.newImage as unknown as AllocationRecord | undefined;
  // The slot's bit follows the store as it is now, not the record: a record delivered again late (after
  // the object went, or came back) then changes nothing, and a bit that was ever wrong is mended.
  const stored = await ctx.table.get<AllocationRecord | NameHoldRecord>(record.keys);
  const current = stored?.t === 'alloc' ? stored : undefined;
  const image = (after ?? before)!;
  const pools = slotTouched(poolIdOfAllocation(image), image.kind, image.value, record, stored, image.finest);
  if (record.eventName === 'REMOVE') {
    await allocationRemoved(ctx, record.keys, before!);
    // Its name goes with it (a delete that died before it released the name leaves nothing).
    const holdKey = holdKeyOfObject(before!);
    if (holdKey) await ctx.table.holds.release(holdKey, before!.metadata.uid);
    return pools;
  }
  if (!current || (await dropUnheldObject(ctx, record.keys, current))) return pools;
  if (current.finest !== undefined) {
    // A pool of a range of prefix lengths: its placer may have died before its check for overlap.
    const named = claimKey(current.metadata.namespace, current.spec.claimRef?.name ?? '');
    const resolved = await resolvePlacement(ctx, record.keys, current, named);
    if (resolved.reallocate) await reconcileClaim(ctx, named);
    if (!resolved.kept) return pools;
  }
  const allocation = current;
  const ref = allocation.spec.claimRef;
  if (!ref) return pools;
  const key = claimKey(allocation.metadata.namespace, ref.name);
  const claim = await ctx.table.get<ClaimRecord>(key);
  const live = claim?.t === 'claim' ? claim : undefined;

  if (ref.uid !== '' && live?.metadata.uid === ref.uid) {
    if (live.bound?.pk === record.keys.pk && live.bound.sk === record.keys.sk) return pools;
    if (live.bound) {
      // A duplicate from a lost race for this claim: the claim holds another object.
      if (allocation.origin === 'claim')
        await ctx.table.deleteBoundAllocation(record.keys, ref.name, ref.uid);
      return pools;
    }
    await settle(ctx, key, live, allocatedOutcome(live, allocation, record.keys, timestamp()));
    return pools;
  }
  if (ref.uid !== '' && allocation.origin === 'claim') {
    // Its claim was released or recreated while the claim's handler was still at work.
    await reclaim(ctx, record.keys, allocation);
    return pools;
  }
  if (live && (live.phase === 'Waiting' || live.phase === 'Allocating') && bindable(allocation, live)) {
    if (await ctx.table.setAllocationUid(record.keys, ref.name, ref.uid, live.metadata.uid)) {
      const bound = {
        ...allocation,
        spec: { ...allocation.spec, claimRef: { name: ref.name, uid: live.metadata.uid } },
      };
      await settle(ctx, key, live, {
        ...allocatedOutcome(live, bound, record.keys, timestamp()),
        took: { key: record.keys, created: false, previousUid: ref.uid },
      });
    }
    return pools;
  }
  if (ref.uid !== '') {
    // A user's object bound to a claim that is gone: a handler bound it and died before its settle, and
    // the claim was released (its release saw nothing bound), or a lost settle gave it back its earlier,
    // stale uid. A uid that names no claim says nothing (an empty or stale one binds alike, with the
    // allow-binding annotation): it is cleared, so no object stays bound to a claim that does not exist.
    if (!(await ctx.table.setAllocationUid(record.keys, ref.name, ref.uid, ''))) return pools;
  }
  if (!live?.bound) await ctx.table.offerToClaim(key, record.keys);
  return pools;
}

/** An allocation object went: if a claim still held it (a user deleted it), that claim allocates again. */
async function allocationRemoved(
  ctx: ClaimContext,
  key: ItemKey,
  allocation: AllocationRecord,
): Promise<void> {
  const ref = allocation.spec.claimRef;
  if (!ref?.uid) return;
  const claimItemKey = claimKey(allocation.metadata.namespace, ref.name);
  const claim = await ctx.table.get<ClaimRecord>(claimItemKey);
  if (claim?.t !== 'claim' || claim.metadata.uid !== ref.uid) return;
  if (claim.bound?.pk !== key.pk || claim.bound.sk !== key.sk) return;
  if (await ctx.table.unbindClaim(claimItemKey, claim.metadata.uid, key))
    await reconcileClaim(ctx, claimItemKey);
}

/**
 * Brings a pool's counts up to date with a batch's slot changes (lib/service/tally.ts: cost by the blocks the
 * batch touched, not by the pool) and wakes the claims that wait for it when values were freed.
 */
export async function refreshPool(
  ctx: ClaimContext,
  id: PoolId,
  changes: readonly SlotChange[] = [],
  options: { recount?: boolean; removed?: boolean } = {},
): Promise<void> {
  if (!poolKindInfo(id.kind)) return;
  const result = await tallyPool(ctx, id, changes, options);
  if (result === 'no pool') {
    // Claims that waited for a value of a pool now gone say so: they wait for it to exist.
    if (options.removed) await wakeWaiting(ctx, id);
    return;
  }
  // Only a freed value, a new pool or a new spec changes what a waiting claim gets (a claim that found
  // nothing because the summary still showed a freed value as held is woken when the stream applies that
  // removal). An exhausted pool still wakes them then: claims that waited for it to exist must learn
  // that it is exhausted instead.
  if (!result.freed) return;
  await wakeWaiting(ctx, id);
}

async function wakeWaiting(ctx: ClaimContext, id: PoolId): Promise<void> {
  for (const waiting of await ctx.table.waitingClaims(id, WAKE_LIMIT)) await reconcileClaim(ctx, waiting);
}

export type { Stored };
