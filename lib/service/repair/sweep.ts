/**
 * The repair sweep (after Kubernetes' pkg/registry/core/service/ipallocator/controller/repairip.go): the
 * stream function's promises (Recycle frees the value, Retain clears the uid, waiting claims get
 * allocated, counts are exact) hold only if every stream record is handled. A record can be lost for good
 * (it went to the dead-letter queue after its retries, or a defect skipped its effect), so this walks one
 * namespace's pools, allocation objects and claims and makes them agree:
 *
 *   found                                              fixed by                            kind
 *   an allocation object bound to a claim uid that     the reclaim policy (Recycle: delete; orphanedAllocation
 *     no longer exists (older than the grace period;   Retain: clear the uid, offer it)
 *     its pool's, or one of a pool that does not exist)
 *   a claim's second object (a lost race not given     deleting it                         duplicateAllocation
 *     back)
 *   an object bound to a live claim that holds         settling the claim with it          unsettledClaim
 *     nothing, past the claim's deadline
 *   an object offered to a name whose stub lacks it    offering it again                   lostOffer
 *   a user's object of a range pool left unchecked     checking it for overlap for its     uncheckedObject
 *     past its handler's deadline                      handler: confirm, or withdraw
 *   a group summary bit that disagrees with the        setting the bit from the objects    summaryBit
 *     objects (or a group missing from the directory)  (and listing the group); in a pool
 *                                                      of a range of lengths, its members
 *                                                      (service/repair/ranged.ts)
 *   a pool's counts that disagree with its summaries   the stream's recount                poolCounts
 *   a waiting claim that could be allocated or bound   allocating it (reconcileClaim)      waitingClaim
 *   a claim still Allocating past its deadline         finishing it (reconcileClaim)       stuckClaim
 *   an Allocated claim whose object is gone            allocating it again                 lostAllocation
 *   a stub whose offers all name objects gone          dropping it                         staleStub
 *   a name hold still pending past its deadline (its   judging it as the stream would:     pendingHold
 *     request died, its record was lost)               confirm it, or delete it
 *   a claim whose lease ended (TTL has not deleted it  deleting it (service/leases/leases.ts): a   expiredLease
 *     yet: it may take days)                           release, whose REMOVE the stream
 *                                                      works on
 *
 * Each fix re-reads what it changes and writes conditionally (the same conditional writes the stream
 * function uses), so it is idempotent and safe beside claim handlers and the stream function. A sweep over
 * a healthy namespace only reads. Reads go through keys and indexes, never a Scan. Cost is bounded per run:
 * `budget` requests; a sweep cut short keeps a cursor in the table, and the next run goes on from there.
 */
import { POOL_KINDS, type PoolKindInfo } from '../../domain/kinds.ts';
import type { NameHoldRecord, PoolRecord } from '../../domain/objects/records.ts';
import { LIST_SHARDS, objectKey } from '../../store/keys.ts';
import { RepairStore } from '../../store/repairs.ts';
import type { ClaimContext } from '../context.ts';
import { sweepPool, sweepPoolless } from './pools.ts';
import { sweepClaims } from './claims.ts';
import { judgeHold } from '../allocation/name-holds.ts';
import {
  exhausted,
  fix,
  REPAIR_BUDGET,
  REPAIR_GRACE_MS,
  REPAIR_KINDS,
  REPAIR_RECHECK_MS,
  spend,
  zeroCounts,
  type Cursor,
  type RepairCounts,
  type RepairReport,
  type Sweep,
  type SweepOptions,
} from './state.ts';

export {
  REPAIR_BUDGET,
  REPAIR_GRACE_MS,
  REPAIR_KINDS,
  type RepairCounts,
  type RepairKind,
  type RepairReport,
  type SweepOptions,
} from './state.ts';

/** Sweeps one namespace, from where the last run stopped; see the top of the file. */
export async function sweepNamespace(
  ctx: ClaimContext,
  namespace: string,
  options: SweepOptions = {},
): Promise<RepairReport> {
  const store = new RepairStore(ctx.table);
  const dryRun = options.dryRun === true;
  const saved = options.restart ? undefined : await store.readCursor<Cursor>(namespace);
  const sweep: Sweep = {
    ctx,
    store,
    namespace,
    dryRun,
    graceMs: options.graceMs ?? REPAIR_GRACE_MS,
    recheckMs: options.recheckMs ?? REPAIR_RECHECK_MS,
    stopBy: options.stopBy ?? Number.POSITIVE_INFINITY,
    budget: options.budget ?? REPAIR_BUDGET,
    signal: options.signal,
    historySince: options.historySince,
    requests: 1,
    cursor: saved ? { ...saved } : { stage: 0, shard: 0 },
    found: zeroCounts(),
    fixed: zeroCounts(),
    claims: new Map(),
    touched: new Set(),
  };
  const complete = await run(sweep);
  if (!dryRun) {
    // A healthy namespace swept in one run writes nothing, not even a cursor.
    if (!complete) await store.writeCursor(namespace, sweep.cursor);
    else if (saved) await store.clearCursor(namespace);
  }
  return {
    kind: 'RepairReport',
    namespace,
    dryRun,
    complete,
    requests: sweep.requests,
    found: sweep.found,
    fixed: sweep.fixed,
  };
}

const POOL_PAGE = 50;

/**
 * The pools of each kind in name order, then the objects of that kind's pools that do not exist, then the
 * claims; false when the budget ran out first.
 */
async function run(sweep: Sweep): Promise<boolean> {
  const { cursor } = sweep;
  for (; cursor.stage < POOL_KINDS.length; cursor.stage++) {
    const info = POOL_KINDS[cursor.stage]!;
    if (!cursor.poolless) {
      if (!(await sweepPools(sweep, info))) return false;
      Object.assign(cursor, {
        pool: undefined,
        poolDone: undefined,
        poolless: true,
        shard: 0,
        after: undefined,
      });
    }
    if (!(await sweepPoolless(sweep, info))) return false;
    Object.assign(cursor, { poolless: undefined, shard: 0, after: undefined });
  }
  if (!(await sweepPendingHolds(sweep))) return false;
  return sweepClaims(sweep);
}

/** The pools of one kind in name order, from the cursor; false when the budget ran out first. */
async function sweepPools(sweep: Sweep, info: PoolKindInfo): Promise<boolean> {
  const { ctx, namespace, cursor } = sweep;
  let after: string | undefined;
  if (cursor.pool !== undefined) {
    // Resuming inside a pool: go on with it (if it still exists), then with the pools after it.
    if (!cursor.poolDone) {
      spend(sweep);
      const pool = await ctx.table.get<PoolRecord>(objectKey(namespace, info.resource, cursor.pool));
      if (pool?.t === 'pool' && !(await sweepPool(sweep, pool))) return false;
      cursor.poolDone = true;
    }
    after = cursor.pool;
  }
  for (;;) {
    if (exhausted(sweep)) return false;
    spend(sweep, LIST_SHARDS);
    const page = await ctx.table.lists.objects<PoolRecord>(namespace, info.resource, POOL_PAGE, after);
    for (const pool of page.items) {
      Object.assign(cursor, { pool: pool.metadata.name, poolDone: false, shard: 0, after: undefined });
      if (!(await sweepPool(sweep, pool))) return false;
      cursor.poolDone = true;
    }
    if (page.last === undefined) return true;
    after = page.last;
  }
}

/** Pending name holds looked at per run (each past its deadline costs a few requests). */
const PENDING_HOLDS_LIMIT = 100;

/**
 * Name holds still pending past their request's deadline (service/allocation/name-holds.ts): the request died and
 * the hold's stream record, which would have had the stream function judge it, was lost. Judged here
 * the same way: confirmed when its object is in place, deleted when not.
 */
async function sweepPendingHolds(sweep: Sweep): Promise<boolean> {
  if (exhausted(sweep)) return false;
  spend(sweep);
  for (const key of await sweep.ctx.table.holds.pending(sweep.namespace, PENDING_HOLDS_LIMIT)) {
    spend(sweep);
    const hold = await sweep.ctx.table.get<NameHoldRecord>(key);
    if (hold?.t !== 'hold' || hold.state !== 'pending' || Date.now() < Date.parse(hold.until)) continue;
    await fix(sweep, 'pendingHold', async () => {
      await judgeHold(sweep.ctx, hold, false);
      return true;
    });
  }
  return true;
}

/** The namespaces to sweep: those the registry lists (every namespace a pool was ever created in). */
export async function registeredNamespaces(ctx: ClaimContext): Promise<string[]> {
  const store = new RepairStore(ctx.table);
  const namespaces: string[] = [];
  let after: string | undefined;
  do {
    const page = await store.namespaces(100, after);
    namespaces.push(...page.items);
    after = page.last;
  } while (after !== undefined);
  return namespaces;
}

/** Time kept back at the end of a Lambda run, and the least worth starting a namespace's run with. */
const MARGIN_MS = 10_000;

/**
 * Sweeps every registered namespace (one run each) while `timeLeft` allows another run before a Lambda
 * timeout. The order is shuffled, so when time runs out first the namespaces left over are not always
 * the same ones.
 */
export async function sweepAll(
  ctx: ClaimContext,
  options: SweepOptions & { timeLeft?: () => number; random?: () => number } = {},
): Promise<RepairReport[]> {
  const namespaces = await registeredNamespaces(ctx);
  const random = options.random ?? Math.random;
  for (let i = namespaces.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [namespaces[i], namespaces[j]] = [namespaces[j]!, namespaces[i]!];
  }
  const reports: RepairReport[] = [];
  for (const namespace of namespaces) {
    if (options.signal?.aborted) break;
    const left = options.timeLeft?.() ?? Number.POSITIVE_INFINITY;
    if (left < 2 * MARGIN_MS) break;
    reports.push(await sweepNamespace(ctx, namespace, { ...options, stopBy: Date.now() + left - MARGIN_MS }));
  }
  return reports;
}

/** The fixes of several reports, added up by kind. */
export function totalFixed(reports: readonly RepairReport[]): RepairCounts {
  const total = zeroCounts();
  for (const report of reports) for (const kind of REPAIR_KINDS) total[kind] += report.fixed[kind];
  return total;
}
