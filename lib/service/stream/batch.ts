/**
 * One stream batch, worked on at a cost that follows the work rather than the records:
 *
 *   1. the records grouped by item key, each item's cut into lives (records.ts);
 *   2. one read for the whole batch (reads.ts): what each kind's work will decide on (kinds.ts), the
 *      pools it touches and their group summaries, in one BatchGetItem round trip;
 *   3. the items' work side by side, at most KEY_CONCURRENCY at once, each item's lives in order;
 *   4. each touched pool's counts (tally.ts, one write per pool and per summary group for the whole
 *      batch, as before), pools side by side;
 *   5. the records of an item whose work or whose pool's counts failed are reported failed, all of them,
 *      so the event source mapping delivers them again from the first (and everything after it, which
 *      is harmless: every effect is written to be done twice).
 *
 * Why order per item is enough. DynamoDB Streams gives an item's records in the order of its changes
 * ("for each item that is modified in a DynamoDB table, the stream records appear in the same sequence as
 * the actual modifications to the item", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html),
 * and Lambda keeps that order with several batches of a shard in flight ("When you increase the number
 * of concurrent batches per shard, Lambda still ensures in-order processing at the item (partition and
 * sort key) level", https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html). That is all this
 * function assumes, within a batch and across the concurrent batches of a shard alike:
 *
 * - Of one item, every record of a batch is worked on by one task, life after life (3); a later batch's
 *   records of it come after this batch is done (Lambda's order), and a retried batch brings them again
 *   from the first failed one (5). So an item's work sees its own changes in order, as before.
 * - Of two items, nothing is ordered: their records may be in one batch or two, in either order, worked
 *   on side by side. This was so before between shards; the effects were written for it, and still are:
 *   each decides on what it reads (a consistent read, or the batch's consistent read, which is the same
 *   read made a moment earlier) and writes only under a condition that holds exactly when the decision
 *   does (settle: the claim's uid and what it holds; unbind, give back, reclaim: the uid the object
 *   names; holds: their uid and state); a lost condition means another actor changed the item, and that
 *   change has a record of its own. Where an effect finds from an image or an eventual read that there is
 *   nothing to do, whatever happened since also has a record of its own (kinds.ts).
 * - The pair of items whose order matters (a claim settled on an object, and that object's removal) is
 *   checked from both sides, so whichever of the two is worked on last sees the other (claims.ts
 *   mustCheckBound, allocations.ts allocationRemoved).
 * - Counts: the slot's bit follows the store as it is now (allocations.ts), and markers are named after
 *   records (tally.ts), so a record counted once is never counted again, whatever the batches and their
 *   retries hold; concurrent batches of one pool write its summaries and counts under a version and a
 *   revision condition, the loser reading again.
 */
import type { ClaimContext } from '../context.ts';
import { eachAtMost } from '../concurrency.ts';
import { summaryOf, type GroupSummary } from '../../store/items.ts';
import { groupKey, poolKeyOf, type PoolId } from '../../store/keys.ts';
import { itemKeyText } from '../../store/table.ts';
import { trackWrites } from '../../store/client.ts';
import type { ClaimRecord, PoolRecord } from '../../domain/objects/records.ts';
import { refreshPool } from './reconcile.ts';
import { groupsOfChanges, refId, type SlotChange } from '../counts/tally.ts';
import { allocationRecords } from './allocations.ts';
import { claimRecords } from './claims.ts';
import { holdRecords } from './holds.ts';
import type { Batch, RecordKind, Touched } from './kinds.ts';
import { poolRecords } from './pools.ts';
import { quarantineRecords } from './quarantines.ts';
import { BatchReads } from './reads.ts';
import { StreamMemory } from './memory.ts';
import { lifeType, runsOf, type ChangeRecord, type KeyRun } from './records.ts';

/** The record kinds, by item type; a life of any other type (a stub on its own) needs no work. */
const KINDS: Record<string, RecordKind> = {
  claim: claimRecords,
  alloc: allocationRecords,
  hold: holdRecords,
  pool: poolRecords,
  quarantine: quarantineRecords,
};

/** Items worked on at once: enough to hide the store's latency, few enough not to flood it. */
export const KEY_CONCURRENCY = 32;
/** Pools whose counts are written at once. */
const POOL_CONCURRENCY = 8;

export interface BatchFailure {
  /** The ids of the records reported failed. */
  records: string[];
  /** What failed: an item's work, or a pool's counts. */
  what: string;
  error: unknown;
}

interface PoolWork {
  pool: PoolId;
  /** The slot changes, with the place of their item in the batch (the counts take them in that order). */
  changes: { at: number; change: SlotChange }[];
  recount: boolean;
  removed: boolean;
  changedPool: boolean;
  runs: Set<KeyRun>;
}

const poolText = (pool: PoolId) => `${pool.namespace}\u0000${pool.kind}\u0000${pool.name}`;

/**
 * Works on a batch's records; the failures, to report (the other records are done). `memory`: what the
 * instance keeps from batch to batch (memory.ts; a new one forgets, which costs reads, never a mistake).
 */
export async function handleBatch(
  ctx: ClaimContext,
  records: readonly ChangeRecord[],
  memory = new StreamMemory(),
): Promise<BatchFailure[]> {
  const runs = runsOf(records);
  const byKey = new Map(runs.map((run) => [run.text, run]));
  const writes = new Map<string, number>();
  const reads = new BatchReads(ctx.table, writes);
  const batch: Batch = { ctx, reads, runOf: (key) => byKey.get(itemKeyText(key)), memory };
  // Claims removed, for this batch and later ones (memory.ts): the records say so whatever their work does.
  for (const run of runs)
    for (const life of run.lives) {
      const removed = life.removed as unknown as ClaimRecord | undefined;
      if (removed?.t === 'claim' && removed.metadata?.uid)
        memory.claimRemoved(run.key, removed.metadata.uid, removed.bound);
    }

  // 2. What the work will read, and the pools and groups the counts will.
  const pools = new Map<string, { pool: PoolId; changes: SlotChange[] }>();
  const poolEntry = (pool: PoolId) => {
    const entry = pools.get(poolText(pool)) ?? { pool, changes: [] };
    pools.set(poolText(pool), entry);
    return entry;
  };
  for (const run of runs) {
    for (const life of run.lives) {
      const asked = KINDS[lifeType(life) ?? '']?.reads(batch, run, life);
      for (const pool of asked?.pools ?? []) poolEntry(pool);
      for (const { pool, change } of asked?.slots ?? []) if (change) poolEntry(pool).changes.push(change);
    }
  }
  for (const { pool, changes } of pools.values()) {
    reads.want(poolKeyOf(pool), true);
    for (const ref of groupsOfChanges(changes)) reads.want(groupKey(pool, ref), true);
  }
  await reads.fetch();

  // 3. The items' work; then the slots they change, from the store as the work left it.
  const failures: BatchFailure[] = [];
  const failed = new Set<KeyRun>();
  const work = new Map<string, PoolWork>();
  const place = new Map(runs.map((run, i) => [run, i]));
  const note = (run: KeyRun, touched: Touched) => {
    const text = poolText(touched.pool);
    const entry = work.get(text) ?? {
      pool: touched.pool,
      changes: [],
      recount: false,
      removed: false,
      changedPool: false,
      runs: new Set(),
    };
    if (touched.change) entry.changes.push({ at: place.get(run)!, change: touched.change });
    entry.recount ||= touched.recount === true;
    entry.removed ||= touched.removed === true;
    entry.changedPool ||= touched.changedPool === true;
    entry.runs.add(run);
    work.set(text, entry);
  };
  const fail = (run: KeyRun, what: string, error: unknown) => {
    if (failed.has(run)) return;
    failed.add(run);
    failures.push({ records: run.records.map((record) => record.id), what, error });
  };
  await trackWrites(writes, () =>
    eachAtMost(runs, KEY_CONCURRENCY, async (run) => {
      try {
        for (const life of run.lives)
          for (const touched of (await KINDS[lifeType(life) ?? '']?.work(batch, run, life)) ?? [])
            note(run, touched);
      } catch (error) {
        fail(run, `item ${run.text}`, error);
      }
    }),
  );
  const slotted = runs.filter((run) => !failed.has(run) && run.lives.some((life) => kindOf(life)?.slots));
  try {
    await reads.refresh(slotted.map((run) => run.key));
  } catch (error) {
    for (const run of slotted) fail(run, 'reading again what the batch wrote', error);
  }
  await eachAtMost(slotted, KEY_CONCURRENCY, async (run) => {
    if (failed.has(run)) return;
    try {
      for (const life of run.lives)
        for (const touched of (await kindOf(life)?.slots?.(batch, run, life)) ?? []) note(run, touched);
    } catch (error) {
      fail(run, `slots of ${run.text}`, error);
    }
  });

  // 4. The counts, with what the batch read of each pool and its groups.
  await eachAtMost([...work.values()], POOL_CONCURRENCY, async (entry) => {
    const changes = entry.changes.sort((a, b) => a.at - b.at).map(({ change }) => change);
    try {
      await refreshPool(
        ctx,
        entry.pool,
        changes,
        entry,
        knownOf(reads, entry.pool, changes, entry.changedPool),
      );
    } catch (error) {
      for (const run of entry.runs) fail(run, `counts of ${entry.pool.kind} ${entry.pool.name}`, error);
    }
  });
  return failures;
}

/**
 * What the batch read of a pool and its groups, for the first attempt of each counts write (a pool whose
 * own record is in the batch is read again: its work may have changed it).
 */
function knownOf(reads: BatchReads, id: PoolId, changes: readonly SlotChange[], changedPool: boolean) {
  const pool = changedPool ? undefined : reads.get<PoolRecord>(poolKeyOf(id));
  const groups = new Map<string, GroupSummary>();
  for (const ref of groupsOfChanges(changes)) {
    const read = reads.get(groupKey(id, ref));
    if (read?.consistent) groups.set(refId(ref), summaryOf(read.item));
  }
  return { pool: pool?.consistent ? pool.item : undefined, groups };
}

const kindOf = (life: KeyRun['lives'][number]) => KINDS[lifeType(life) ?? ''];
