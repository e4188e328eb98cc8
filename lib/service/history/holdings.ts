/**
 * Who held each value, and when (api.md, "The history of a value"): the history function's second job.
 * Each stream record of an allocation object starts or ends a holding (domain/objects/holdings.ts), in
 * record order; a holding's items are put under the key its record names and ended conditionally, so a
 * record delivered twice, replayed or retried after a part of its writes changes nothing the second time.
 * No request is added to the claim or release paths: the history function reads the stream apart.
 */
import {
  DEFAULT_HOLDING_RETENTION_DAYS,
  holdingTransition,
  type Holding,
  type HoldingChange,
  type HoldingEnd,
} from '../../domain/objects/holdings.ts';
import type { ClaimRecord, PoolRecord } from '../../domain/objects/records.ts';
import { removalExpired } from '../../domain/events.ts';
import { holdingPool } from '../../store/holdings.ts';
import { holdingStart, objectKey, poolKeyOf } from '../../store/keys.ts';
import type { Table } from '../../store/table.ts';

/** A value's newest holdings read to find the one a record ends (records of a value come in order). */
const LATEST = 5;

export interface HoldingOptions {
  retentionDays?: number;
}

/**
 * How a holding whose object went ended, from who removed it: a cascade (its pool is gone or going), a
 * user who deleted it while its claim held it or while it held nothing, or the release of its claim.
 */
export async function removalOf(table: Table, holding: Holding): Promise<HoldingEnd> {
  const pool = await table.get<PoolRecord>(poolKeyOf(holdingPool(holding)));
  if (pool?.t !== 'pool' || pool.deleting) return 'PoolDeleted';
  if (!holding.claim) return 'Deleted';
  const claim = await table.get<ClaimRecord>(
    objectKey(holding.claim.namespace, 'claims', holding.claim.name),
  );
  return claim?.t === 'claim' && claim.metadata.uid === holding.claim.uid ? 'Deleted' : 'Released';
}

/** How long the mark of a claim that ended by its lease waits for its holding's end (a day and an hour). */
const EXPIRED_MARK_SECONDS = 25 * 3600;

/**
 * A claim removed once its lease ended: its holding ends `Expired`, not `Released`. The claim's record
 * and its object's are of two items, in no set order: whichever comes second decides. A holding ended
 * already is relabelled; one still open (or not yet started) finds the claim's mark when it ends.
 */
async function claimExpired(table: Table, change: HoldingChange): Promise<void> {
  const claim = change.oldImage as unknown as ClaimRecord;
  if (claim?.t !== 'claim' || change.newImage !== undefined) return;
  const recordedAt = new Date(change.recordedAt).toISOString();
  if (!removalExpired(claim, { eventName: 'REMOVE', recordedAt, byTtl: change.byTtl })) return;
  const { namespace, name, uid } = claim.metadata;
  await table.holdings.markExpired(uid, Math.ceil(change.at / 1000) + EXPIRED_MARK_SECONDS);
  for (const stored of await table.holdings.latestOfClaim(namespace, name, LATEST))
    if (stored.holding.claim?.uid === uid && stored.holding.ended === 'Released')
      await table.holdings.relabelExpired(stored);
}

/** How a holding for this claim ended by its release reads: `Expired` if its lease had ended. */
export const releasedOrExpired = async (table: Table, claimUid: string | undefined): Promise<HoldingEnd> =>
  claimUid !== undefined && (await table.holdings.expired(claimUid)) ? 'Expired' : 'Released';

/** The end of the key of a holding the repair sweep started (its sequence is 0: no record's). */
export const SWEPT = `#${'0'.repeat(40)}`;

/** Whether the holding is open already: started by the repair sweep when this record was late. */
async function alreadyOpen(table: Table, holding: Holding): Promise<boolean> {
  const [latest] = await table.holdings.latestOfValue(holdingPool(holding), holding.value, 1);
  return (
    latest !== undefined &&
    !latest.holding.until &&
    latest.holding.allocation.uid === holding.allocation.uid &&
    latest.holding.claim?.uid === holding.claim?.uid &&
    latest.start.endsWith(SWEPT)
  );
}

/** Starts and ends the holdings a batch's records of allocation objects say, in record order. */
export async function recordHoldings(
  table: Table,
  changes: readonly HoldingChange[],
  options: HoldingOptions = {},
): Promise<void> {
  const retentionSeconds = (options.retentionDays ?? DEFAULT_HOLDING_RETENTION_DAYS) * 86_400;
  for (const change of changes) {
    await claimExpired(table, change);
    const { end, start } = holdingTransition(change);
    if (end) {
      const latest = await table.holdings.latestOfValue(end.pool, end.value, LATEST);
      // The holding it ends started before it (a record delivered again late finds its own, ended), or
      // the repair sweep started it in the lost record's stead.
      const self = holdingStart(new Date(change.recordedAt).toISOString(), change.sequence);
      const open = latest.find(
        ({ holding, start }) =>
          (start < self || start.endsWith(SWEPT)) &&
          holding.allocation.uid === end.allocationUid &&
          holding.claim?.uid === end.claimUid,
      );
      // None: the object was there before holdings were kept (or a lost record left none).
      if (open) {
        let ended = open.holding.until
          ? open.holding.ended!
          : (end.ended ?? (await removalOf(table, open.holding)));
        if (ended === 'Released') ended = await releasedOrExpired(table, end.claimUid);
        const expiresAt = Math.ceil(Date.parse(end.until) / 1000) + retentionSeconds;
        await table.holdings.end(open, end.until, ended, expiresAt);
      }
    }
    if (start && !(await alreadyOpen(table, start)))
      await table.holdings.start({
        holding: start,
        start: holdingStart(new Date(change.recordedAt).toISOString(), change.sequence),
      });
  }
}
