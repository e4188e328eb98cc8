/**
 * The allocation objects' records (a kind of lib/service/stream/kinds.ts): one life of an object at a
 * time, and the slot it holds in its pool's summaries.
 *
 *   the life                               what is done                        what is read
 *   any                                    the slot's bit, as the store holds  the object's key,
 *                                          the key now (the pool's counts)     consistently: a record
 *                                                                              delivered again late
 *                                                                              must change nothing
 *   ended with a REMOVE                    the value quarantined if the pool   the pool (the batch's
 *                                          quarantines (service/leases/quarantine.ts); read); the claim,
 *                                          a claim that still held it          unless the batch, or
 *                                          allocates again; its name hold goes an earlier one, held
 *                                                                              its REMOVE (memory.ts)
 *   the object is there, its claim         nothing                             the claim: the batch's
 *     holds it                                                                 image, or an eventual
 *                                                                              read
 *   anything else                          settle, bind, give back, reclaim,   the claim, consistently
 *                                          offer (reconcile.ts lists them)
 *
 * Every REMOVE is worked on (its work depends on the old image: the claim it named, its name hold);
 * of the rest of a life only where it ended: the object as it is now is what the work decides on.
 */
import type {
  AllocationRecord,
  ClaimRecord,
  ItemKey,
  NameHoldRecord,
  PoolRecord,
  QuarantineRecord,
} from '../../domain/objects/records.ts';
import type { AllocationKind } from '../../domain/kinds.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import { timestamp } from '../../domain/objects/objects.ts';
import { poolKeyOf, type PoolId } from '../../store/keys.ts';
import type { Stored } from '../../store/items.ts';
import { allocatedOutcome, bindable, reconcileClaim, settle } from '../allocation/decide.ts';
import { dropUnheldObject, holdKeyOfObject, type AtAllocationKey } from '../allocation/name-holds.ts';
import { resolvePlacement } from '../allocation/prefix-check.ts';
import { claimKeyOf, giveHolderBack, poolIdOfAllocation, reclaim, SETTLE_MARGIN_MS } from './reconcile.ts';
import { claimNamespaceOf, isSharedClaim, shareFor } from '../../domain/objects/sharing.ts';
import { prefixMember } from '../counts/runs.ts';
import { quarantineFreed } from '../leases/quarantine.ts';
import type { SlotChange } from '../counts/tally.ts';
import { latestIn, removedIn, sameKey, type Batch, type RecordKind, type Touched } from './kinds.ts';
import { lastImage, type KeyRun, type Life } from './records.ts';

export const allocationRecords: RecordKind = {
  reads(batch, run, life) {
    const image = lastImage(life) as unknown as AllocationRecord;
    batch.reads.want(run.key, true);
    const ref = image.spec.claimRef;
    if (ref?.name !== undefined) {
      const claim = claimKeyOf(claimNamespaceOf(image), ref.name);
      if (life.removed) {
        if (ref.uid && !removedIn(batch, claim, ref.uid)) batch.reads.want(claim, true);
      } else if (image.finest !== undefined && ref.uid) batch.reads.want(claim, true);
      else if (image.origin === 'claim' && ref.uid && batch.memory.isClaimRemoved(claim, ref.uid)) {
        // Its claim is gone (allocationThere): nothing to read.
      } else if (!batch.runOf(claim)) batch.reads.want(claim, false);
    }
    const hold = image.origin === 'user' ? holdKeyOfObject(image) : undefined;
    if (hold && !life.removed) batch.reads.want(hold, true);
    const pool = poolIdOfAllocation(image);
    return {
      pools: [pool],
      slots: slotChanges(pool, image.kind, image.value, run, life, image, image.finest),
    };
  },

  async work(batch, run, life) {
    const image = lastImage(life) as unknown as AllocationRecord;
    if (life.removed) {
      // Held back first, if the pool quarantines: a claim the removal wakes must not get the value back.
      const pool = await poolOf(batch)(poolKeyOf(poolIdOfAllocation(image)));
      await quarantineFreed(batch.ctx, pool, run.key, image);
      await allocationRemoved(batch, run.key, image);
      // Its name goes with it (a delete that died before it released the name leaves nothing).
      const holdKey = holdKeyOfObject(image);
      if (holdKey) await batch.ctx.table.holds.release(holdKey, image.metadata.uid);
      return [];
    }
    const stored = await batch.reads.current<AllocationRecord | NameHoldRecord>(run.key);
    if (stored?.t === 'alloc') await allocationThere(batch, run.key, stored);
    return [];
  },

  // The slot's bit follows the store as it is now, not the record: a record delivered again late (after
  // the object went, or came back) then changes nothing, and a bit that was ever wrong is mended.
  async slots(batch, run, life) {
    const image = lastImage(life) as unknown as AllocationRecord;
    const stored = await batch.reads.current<AllocationRecord | NameHoldRecord>(run.key);
    const pool = poolIdOfAllocation(image);
    const changes = slotChanges(pool, image.kind, image.value, run, life, stored, image.finest);
    if (
      image.finest !== undefined &&
      life.removed &&
      stored?.t !== 'alloc' &&
      (await givenBack(batch, image))
    )
      for (const { change } of changes) if (change) change.released = true;
    return changes;
  },
};

/** A removed object's claim is gone too (its REMOVE in this batch or an earlier one, or not there now). */
async function givenBack(batch: Batch, removed: AllocationRecord): Promise<boolean> {
  const ref = removed.spec.claimRef;
  if (!ref?.uid) return true;
  const claimKey = claimKeyOf(claimNamespaceOf(removed), ref.name);
  if (removedIn(batch, claimKey, ref.uid)) return true;
  const claim = await batch.reads.current<ClaimRecord>(claimKey);
  return claim?.t !== 'claim' || claim.metadata.uid !== ref.uid;
}

/**
 * The slot a life's object names, and what holds it now: an allocation object, a name hold, or nothing
 * (the key is the pool and the value, so whatever is there is of that pool). One change a life, under
 * the id of its last record; the run's earlier records are named too (SlotChange.also).
 */
export function slotChanges(
  pool: PoolId,
  kind: AllocationKind,
  valueText: string,
  run: KeyRun,
  life: Life,
  stored: AtAllocationKey | AllocationRecord | QuarantineRecord | undefined,
  finest?: number,
): Touched[] {
  const value = valueKind(kind).parse(valueText);
  if (!value.ok) return [];
  const { slot, family, length } = value.value;
  const ids = run.records.map((record) => record.id);
  const record = life.records.at(-1)!.id;
  const also = ids.slice(0, ids.indexOf(record));
  const common = { record, ...(also.length > 0 && { also }), family };
  let change: SlotChange;
  if (finest !== undefined && length !== undefined) {
    // A pool of a range of prefix lengths: the run of finest slots the prefix covers, a member of the
    // group summaries while an allocation object is at its key (service/counts/runs.ts).
    const members = prefixMember(value.value, finest, false);
    const present = stored?.t === 'alloc';
    const raced = stored?.t === 'alloc' && stored.raced === true;
    change = { ...common, slot: members.first, present, raced, run: members };
  } else {
    // A name hold or a quarantine holds the slot, but is no allocation object.
    const quarantined = stored?.t === 'quarantine';
    const hold = stored?.t === 'hold' || quarantined;
    const present = stored?.t === 'alloc' || hold;
    const raced = stored?.t === 'alloc' && stored.raced === true;
    change = { ...common, slot, present, hold, raced, ...(quarantined && { quarantined }) };
  }
  return [{ pool, change }];
}

/**
 * An object at its key, as the store holds it now: settle its claim on it, bind it, give it back, or
 * offer it (reconcile.ts lists the cases). Nothing to do, and nothing read but a hint, when its claim
 * holds it.
 */
async function allocationThere(batch: Batch, key: ItemKey, current: Stored<AllocationRecord>) {
  const { ctx } = batch;
  if (await dropUnheldObject(ctx, key, current, await heldBy(batch, current))) return;
  const ref = current.spec.claimRef;
  const claimKey = claimKeyOf(claimNamespaceOf(current), ref?.name ?? '');
  if (current.finest !== undefined) {
    // A pool of a range of prefix lengths: its placer may have died before its check for overlap.
    const resolved = await resolvePlacement(
      ctx,
      key,
      current,
      claimKey,
      batch.reads.get<ClaimRecord>(claimKey),
    );
    if (resolved.reallocate) await reconcileClaim(ctx, claimKey);
    if (!resolved.kept) return;
  }
  if (!ref) return;
  if (current.origin === 'claim' && ref.uid !== '' && batch.memory.isClaimRemoved(claimKey, ref.uid)) {
    // Its claim is gone (memory.ts). Removed holding this key, it held this object (a claim is bound to a
    // key only once its object is there, and no object is put for a claim that is gone), and the work on
    // its REMOVE applies the reclaim policy to it, under the same uid condition: nothing to do here.
    // Removed holding anything else, the object is a leftover of its handler: reclaimed, as below.
    if (!batch.memory.removedHolding(claimKey, ref.uid, key)) await reclaim(ctx, key, current, poolOf(batch));
    return;
  }
  // The claim holds it (it settled on it): nothing to do. The batch's image of the claim, or an eventual
  // read, is enough to say so: anything that happened to the claim since has its own record.
  const hint = claimHint(batch, claimKey);
  if (ref.uid !== '' && hint?.metadata.uid === ref.uid && sameKey(hint.bound, key)) return;
  const claim = await batch.reads.current<ClaimRecord>(claimKey);
  const live = claim?.t === 'claim' ? claim : undefined;

  if (ref.uid !== '' && live?.metadata.uid === ref.uid) {
    if (sameKey(live.bound, key)) return;
    if (live.bound) {
      // A duplicate from a lost race for this claim: the claim holds another object.
      if (current.origin !== 'claim') return;
      const deleted = await ctx.table.deleteBoundAllocation(key, ref.name, ref.uid);
      // Its attempt's place, unless the claim holds the value under it (a no-op for any other claim).
      if (deleted && current.holder !== undefined && current.holder !== live.holder)
        await ctx.table.quotas.give(poolIdOfAllocation(current), live.metadata.namespace, current.holder);
      return;
    }
    // Its handler died before its settle. A shared pool's place it took may have been given back since
    // (the repair sweep): taken again, within the limit, or the object goes and the claim decides anew.
    if (current.holder !== undefined && !(await retakePlace(batch, live, current))) {
      if (await reclaim(ctx, key, current, poolOf(batch))) await reconcileClaim(ctx, claimKey);
      return;
    }
    await settle(ctx, claimKey, live, allocatedOutcome(live, current, key, timestamp()));
    return;
  }
  if (ref.uid !== '' && current.origin === 'claim') {
    // Its claim was released or recreated while the claim's handler was still at work.
    await reclaim(ctx, key, current, poolOf(batch));
    return;
  }
  if (live && (live.phase === 'Waiting' || live.phase === 'Allocating') && bindable(current, live)) {
    if (isSharedClaim(live)) {
      // A claim of another namespace binds through its decision, which takes its quota's place first.
      await ctx.table.offerToClaim(claimKey, key);
      await reconcileClaim(ctx, claimKey);
      return;
    }
    if (await ctx.table.setAllocationUid(key, ref.name, ref.uid, live.metadata.uid)) {
      const bound = {
        ...current,
        spec: { ...current.spec, claimRef: { ...ref, uid: live.metadata.uid } },
      };
      await settle(ctx, claimKey, live, {
        ...allocatedOutcome(live, bound, key, timestamp()),
        took: { key, created: false, previousUid: ref.uid },
      });
    }
    return;
  }
  if (ref.uid !== '') {
    // A user's object bound to a claim that is gone: a handler bound it and died before its settle, and
    // the claim was released (its release saw nothing bound), or a lost settle gave it back its earlier,
    // stale uid. A uid that names no claim says nothing (an empty or stale one binds alike, with the
    // allow-binding annotation): it is cleared, so no object stays bound to a claim that does not exist.
    if (!(await ctx.table.setAllocationUid(key, ref.name, ref.uid, ''))) return;
  }
  if (!live?.bound) await ctx.table.offerToClaim(claimKey, key);
}

/** The pool as the batch read it (consistently; read again if the batch wrote it since). */
const poolOf = (batch: Batch) => (key: ItemKey) => batch.reads.current<PoolRecord>(key);

/** The claim as the batch last saw it: its latest image in the batch, or the batch's read. */
function claimHint(batch: Batch, key: ItemKey): ClaimRecord | undefined {
  const latest = latestIn(batch, key);
  const image = latest ? (latest.removed ? undefined : latest.image) : batch.reads.get(key)?.item;
  const claim = image as unknown as ClaimRecord | undefined;
  return claim?.t === 'claim' ? claim : undefined;
}

/** The hold a user's object with a held name must have (read by the batch), or a read now. */
async function heldBy(batch: Batch, allocation: AllocationRecord) {
  const hold = allocation.origin === 'user' ? holdKeyOfObject(allocation) : undefined;
  return hold ? { hold: await batch.reads.current<NameHoldRecord>(hold) } : undefined;
}

/**
 * An object went: if a claim still held it (a user deleted it), that claim allocates again. A claim that
 * is still Allocating and holds nothing yet may be about to settle on it (its handler, or a request that
 * took over, put or bound it before it went): that settle is waited for, up to the claim's deadline and
 * SETTLE_MARGIN_MS more, so that a settle the claim's own record is not checked for (stream/claims.ts
 * mustCheckBound) is seen here.
 */
async function allocationRemoved(batch: Batch, key: ItemKey, allocation: AllocationRecord): Promise<void> {
  const ref = allocation.spec.claimRef;
  if (!ref?.uid) return;
  const claimKey = claimKeyOf(claimNamespaceOf(allocation), ref.name);
  if (removedIn(batch, claimKey, ref.uid)) return; // the claim went: it holds nothing
  let claim = await batch.reads.current<ClaimRecord>(claimKey);
  for (let delay = 10; ; delay = Math.min(delay * 2, 250)) {
    if (claim?.t !== 'claim' || claim.metadata.uid !== ref.uid) return;
    if (sameKey(claim.bound, key)) {
      // The claim names the key, not the object: it may hold another object there already (it allocated
      // again and got the same value, and this REMOVE is delivered again). Then it holds what it should.
      const there = await batch.reads.current<AllocationRecord | NameHoldRecord>(key);
      if (there?.t === 'alloc' && there.spec.claimRef?.uid === claim.metadata.uid) return;
      break;
    }
    const allocating = claim.phase === 'Allocating' && !claim.bound && claim.allocatingUntil !== undefined;
    if (!allocating || Date.now() >= Date.parse(claim.allocatingUntil!) + SETTLE_MARGIN_MS) return;
    await new Promise((resolve) => setTimeout(resolve, delay));
    claim = await batch.reads.fresh<ClaimRecord>(claimKey);
  }
  if (await batch.ctx.table.unbindClaim(claimKey, claim.metadata.uid, key)) {
    await giveHolderBack(batch.ctx, claim);
    await reconcileClaim(batch.ctx, claimKey);
  }
}

/** Takes again the place a dead handler's object names (a no-op while it is still there). */
async function retakePlace(batch: Batch, claim: ClaimRecord, allocation: AllocationRecord): Promise<boolean> {
  const pool = await poolOf(batch)(poolKeyOf(poolIdOfAllocation(allocation)));
  const share = pool?.t === 'pool' ? shareFor(pool, claim.metadata.namespace) : undefined;
  if (!share) return false;
  const id = poolIdOfAllocation(allocation);
  return batch.ctx.table.quotas.take(id, claim.metadata.namespace, allocation.holder!, share.maxAllocations);
}
