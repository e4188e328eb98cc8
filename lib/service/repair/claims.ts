/**
 * The repair sweep's checks of a namespace's claim items (service/repair/sweep.ts): claims stuck mid-allocation,
 * claims holding an object that is gone, claims waiting for the wrong reason, claims whose lease ended,
 * and stubs whose offers can no longer be taken.
 */
import { isSharedClaim, shareFor } from '../../domain/objects/sharing.ts';
import type {
  AllocationRecord,
  ClaimRecord,
  ClaimStubRecord,
  ItemKey,
} from '../../domain/objects/records.ts';
import type { Stored } from '../../store/items.ts';
import { LIST_SHARDS } from '../../store/keys.ts';
import { poolIdOf, poolRefValid, readPool, reconcileClaim } from '../allocation/decide.ts';
import { expireClaim, expiredNow } from '../leases/leases.ts';
import { exhausted, fix, handlerMayRun, spend, type Sweep } from './state.ts';
import { giveHolderBack } from '../stream/reconcile.ts';

const CLAIM_PAGE = 100;

/** Sweeps the claim shards from the cursor; false when the budget ran out. */
export async function sweepClaims(sweep: Sweep): Promise<boolean> {
  const cursor = sweep.cursor;
  const pools = new Map<string, boolean>();
  while (cursor.shard < LIST_SHARDS) {
    if (exhausted(sweep)) return false;
    spend(sweep);
    const page = await sweep.store.claimItems(sweep.namespace, cursor.shard, CLAIM_PAGE, cursor.after);
    for (const item of page.items) {
      if (item.t === 'stub') await checkStub(sweep, item as Stored<ClaimStubRecord>);
      else if (item.t === 'claim') await checkClaim(sweep, item as Stored<ClaimRecord>, pools);
    }
    if (page.last !== undefined) cursor.after = page.last;
    else Object.assign(cursor, { shard: cursor.shard + 1, after: undefined });
  }
  return true;
}

async function checkClaim(
  sweep: Sweep,
  claim: Stored<ClaimRecord>,
  pools: Map<string, boolean>,
): Promise<void> {
  const { ctx } = sweep;
  const key: ItemKey = { pk: claim.pk, sk: claim.sk };
  if (expiredNow(ctx, claim)) {
    // TTL deletes it some time after its end (days, at worst): the sweep keeps expiry's bound.
    await fix(sweep, 'expiredLease', async () => (await expireClaim(ctx, key, claim)) !== undefined);
    return;
  }
  if (claim.phase === 'Allocating') {
    // Its handler died and the record that would have had the stream function finish it was lost.
    if (handlerMayRun(claim)) return;
    await fix(sweep, 'stuckClaim', async () => (await reconcileClaim(ctx, key))?.phase !== 'Allocating');
    return;
  }
  if (claim.phase === 'Allocated' && claim.bound) {
    spend(sweep);
    const allocation = await ctx.table.get<AllocationRecord>(claim.bound);
    if (allocation?.t === 'alloc' && allocation.spec.claimRef?.uid === claim.metadata.uid) return;
    // Its object was deleted (or rebound) and the removal's record was lost: it allocates again.
    await fix(sweep, 'lostAllocation', async () => {
      if (!(await ctx.table.unbindClaim(key, claim.metadata.uid, claim.bound!))) return false;
      // A shared pool's place goes with the value it held (test/model/sharing.test.ts found it kept).
      await giveHolderBack(ctx, claim);
      await reconcileClaim(ctx, key);
      return true;
    });
    return;
  }
  if (claim.phase !== 'Waiting' || !poolRefValid(claim)) return;
  // Waiting for a pool that exists, or for a reason other than the pool's absence when it is gone: the
  // record of the pool's creation or removal was lost. (Waiting in a pool that exists is checked there.)
  const pool = poolIdOf(claim);
  const poolText = `${pool.namespace}/${pool.kind}/${pool.name}`;
  let exists = pools.get(poolText);
  if (exists === undefined) {
    spend(sweep, 2);
    const found = await readPool(ctx, pool);
    // A pool of another namespace not shared with this one does not exist, to this namespace's claims.
    exists =
      found !== undefined &&
      (!isSharedClaim(claim) || shareFor(found, claim.metadata.namespace) !== undefined);
    pools.set(poolText, exists);
  }
  const waitsForPool = claim.status.conditions[0]?.reason === 'PoolNotFound';
  if (exists === waitsForPool)
    await fix(sweep, 'waitingClaim', async () => {
      const after = await reconcileClaim(ctx, key);
      return after?.status.conditions[0]?.reason !== claim.status.conditions[0]?.reason;
    });
}

/** A stub none of whose offers names an object that still names the claim: nothing can take them. */
async function checkStub(sweep: Sweep, stub: Stored<ClaimStubRecord>): Promise<void> {
  const offers = Object.values(stub.offers ?? {});
  for (const offer of offers) {
    spend(sweep);
    const allocation = await sweep.ctx.table.get<AllocationRecord>(offer);
    if (allocation?.t === 'alloc' && allocation.spec.claimRef?.name === stub.sk) return;
  }
  await fix(sweep, 'staleStub', () => sweep.store.dropStub({ pk: stub.pk, sk: stub.sk }, offers.length));
}
