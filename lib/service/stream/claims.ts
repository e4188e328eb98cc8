/**
 * The claim records' work (a kind of lib/service/stream/kinds.ts): one life of a claim at a time.
 *
 *   the life                               what is done                        what is read
 *   ended with a REMOVE (a release)        the stub's and the claim's offers    the pool (its reclaim
 *                                          go back to the name; the reclaim     policy), once a batch;
 *                                          policy on the object it held,        not the object: the
 *                                          conditional on its uid               write's condition is
 *                                                                               the check
 *   written over its name's stub           the stub's offers go onto the claim  nothing
 *   still Allocating or Waiting            allocate it (decide.ts), after its   the claim, and what a
 *                                          handler's deadline when it is at     decision reads
 *                                          work
 *   newly bound to an object               check the object is there, bound to  the object, unless the
 *                                          this claim; if not, allocate again   batch or the settle's
 *                                                                               timing shows it
 *   its value changed (IPPrefixPool)       the pools carved from it follow      the carvings (a Query)
 *
 * A claim its handler is at work on (Allocating, before the deadline) is first left alone for
 * FIRST_LOOK_MS: its handler settles it a round trip or two after the record.
 *
 * Every REMOVE is worked on (each is a claim that went); of the records of a life, only the transitions
 * above: the stub written over, a settle that newly bound it, a value that moved. What the latest image
 * says of a claim that holds its object (its handler settled it) needs no read at all.
 */
import type { AllocationRecord, ClaimRecord, ItemKey, PoolRecord } from '../../domain/objects/records.ts';
import { poolKeyOf } from '../../store/keys.ts';
import { poolIdOf, reconcileClaim } from '../allocation/decide.ts';
import { claimValueChanged } from '../allocation/carving.ts';
import { claimKeyOf, giveHolderBack, wakeWaiting } from './reconcile.ts';
import { latestIn, sameKey, type Batch, type RecordKind, type Touched } from './kinds.ts';
import { changed, typeOf, type ChangeRecord, type Life } from './records.ts';

export const claimRecords: RecordKind = {
  reads(batch, run, life) {
    if (life.removed) {
      const claim = life.removed as unknown as ClaimRecord;
      if (claim.bound) batch.reads.want(poolKeyOf(poolIdOf(claim)), true);
      return;
    }
    const claim = life.after as unknown as ClaimRecord;
    if (mustCheckBound(batch, life, claim)) batch.reads.want(claim.bound!, true);
  },

  async work(batch, run, life): Promise<Touched[]> {
    const { ctx } = batch;
    for (const record of life.records) await keepStubOffers(batch, run.key, record);
    if (life.removed) await claimRemoved(batch, life.removed as unknown as ClaimRecord);
    else {
      const claim = life.after as unknown as ClaimRecord;
      if (claim.phase === 'Allocating' || claim.phase === 'Waiting') {
        await handlerFirst(claim);
        await reconcileClaim(ctx, run.key);
      } else if (mustCheckBound(batch, life, claim)) await checkBound(batch, run.key, claim);
    }
    // Pools carved from the claim follow its value (service/allocation/carving.ts); only a prefix claim's value is
    // a pool's prefixes, so no other claim's value can move one.
    const last = (life.after ?? life.removed) as unknown as ClaimRecord;
    if (last.spec.poolRef.kind === 'IPPrefixPool' && changed(life, valueOf).length > 0)
      await claimValueChanged(ctx, last);
    return [];
  },
};

const valueOf = (image: Record<string, unknown> | undefined) =>
  (image as { status?: { value?: string } } | undefined)?.status?.value;
const boundOf = (image: Record<string, unknown> | undefined) =>
  (image as { bound?: ItemKey } | undefined)?.bound;

/**
 * How long a claim its handler is at work on is left alone before the first look (reconcileClaim reads
 * it, and reads again until the handler is done or its deadline passed): its record comes as soon as
 * the claim is created, two round trips before the settle, so a read at once would mostly find it at
 * work and be made again.
 */
export const FIRST_LOOK_MS = 25;

async function handlerFirst(claim: ClaimRecord): Promise<void> {
  if (claim.phase !== 'Allocating' || !claim.allocatingUntil) return;
  const ms = Math.min(FIRST_LOOK_MS, Date.parse(claim.allocatingUntil) - Date.now());
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A claim written over its name's stub: the stub's offers go onto the claim, so they outlive the handler
 * that read them (it may die, or lose the answer of its write) and serve the claim while it waits.
 */
async function keepStubOffers(batch: Batch, key: ItemKey, record: ChangeRecord): Promise<void> {
  const before = record.oldImage as { t?: string; offers?: Record<string, ItemKey> } | undefined;
  if (typeOf(before) !== 'stub') return;
  for (const offer of Object.values(before!.offers ?? {})) await batch.ctx.table.offerToClaim(key, offer);
}

/**
 * Whether a claim the life left Allocated on an object must have that object checked: a settle may land
 * after the object it names went (a user deleted it), and that object's REMOVE be worked on first
 * (records of two items come in no set order). The claim would then say it holds a value no object holds.
 *
 * No check is needed when the batch shows the object there and bound to the claim (its REMOVE, if it
 * comes, finds the claim holding it: reconcile.ts allocationRemoved), nor when the settle was a claim
 * leaving Allocating before its handler's deadline: an object's REMOVE that finds its claim Allocating
 * and not yet bound waits for it up to that deadline and SETTLE_MARGIN_MS more (reconcile.ts), so it sees such a settle
 * and allocates the claim again itself. (The record's time is whole seconds rounded down, hence the
 * second added; the margin covers the clocks of the handler, the stream function and DynamoDB.)
 */
function mustCheckBound(batch: Batch, life: Life, claim: ClaimRecord): boolean {
  if (claim.phase !== 'Allocated' || !claim.bound) return false;
  const settles = changed(life, boundOf).filter((record) => {
    const bound = boundOf(record.newImage);
    return bound !== undefined && sameKey(bound, claim.bound);
  });
  const settle = settles.at(-1);
  if (!settle) return false;
  const there = latestIn(batch, claim.bound);
  const object = there && !there.removed ? (there.image as unknown as AllocationRecord) : undefined;
  if (object?.t === 'alloc' && object.spec.claimRef?.uid === claim.metadata.uid) return false;
  const before = settle.oldImage as unknown as ClaimRecord | undefined;
  const deadline = before?.allocatingUntil ? Date.parse(before.allocatingUntil) : NaN;
  const byItsHandler =
    before?.t === 'claim' &&
    before.phase === 'Allocating' &&
    before.metadata.uid === claim.metadata.uid &&
    settle.at !== undefined &&
    settle.at + 1000 <= deadline;
  return !byItsHandler;
}

/** The check itself: the object must be there and bound to this claim, or the claim allocates again. */
async function checkBound(batch: Batch, key: ItemKey, claim: ClaimRecord): Promise<void> {
  const allocation = await batch.reads.current<AllocationRecord>(claim.bound!);
  if (allocation?.t === 'alloc' && allocation.spec.claimRef?.uid === claim.metadata.uid) return;
  if (await batch.ctx.table.unbindClaim(key, claim.metadata.uid, claim.bound!)) {
    await giveHolderBack(batch.ctx, claim);
    await reconcileClaim(batch.ctx, key);
  }
}

/**
 * Release: the pool's reclaim policy on the object the claim held, only while that object is still bound
 * to this claim's uid (the write's condition: a stale REMOVE never touches a recreated claim's object).
 */
async function claimRemoved(batch: Batch, claim: ClaimRecord): Promise<void> {
  const { table } = batch.ctx;
  // Offers name the claim's name, not its uid: they go back to the name (a stub, or a claim recreated
  // meanwhile, which the change wakes), or a recreated claim would never see them.
  const key = claimKeyOf(claim.metadata.namespace, claim.metadata.name);
  for (const offer of Object.values(claim.offers ?? {})) await table.offerToClaim(key, offer);
  if (!claim.bound) return; // it held nothing; an allocation put still in flight is caught on its insert
  // An object bound to the claim is of the claim's pool (decide.ts bindable, newAllocation).
  const pool = await batch.reads.current<PoolRecord>(poolKeyOf(poolIdOf(claim)));
  const { name, uid } = claim.metadata;
  if (pool?.t === 'pool' && pool.spec.reclaimPolicy === 'Retain') {
    // Retain keeps the value and the claim's name but clears the uid: a claim recreated under that name
    // may rebind through allow-binding (the seed document's promise); nobody else can take the value.
    if (await table.setAllocationUid(claim.bound, name, uid, '')) await table.offerToClaim(key, claim.bound);
  } else await table.deleteBoundAllocation(claim.bound, name, uid);
  // A shared pool's claim: its place goes once its object holds nothing for it, and the namespace's
  // claims that wait for a place are woken (a Retain pool frees no value to wake them).
  if (claim.holder !== undefined) {
    await giveHolderBack(batch.ctx, claim);
    await wakeWaiting(batch.ctx, poolIdOf(claim));
  }
}
