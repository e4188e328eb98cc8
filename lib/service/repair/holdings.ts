/**
 * Who held each value (service/history/holdings.ts), checked by the sweep against the objects a whole walk
 * of the pool saw:
 *
 *   found                                              fixed by                            kind
 *   an open mark whose value's copy was never put, or  finishing the start from the mark,  lostHolding
 *     has ended (the history function stopped           or the end as the copy says
 *     between two writes of one holding)
 *   an object older than the grace period with no      starting its holding from now       lostHolding
 *     open holding for it and its claim (a record the
 *     history function never read: a local server
 *     killed, a record dead-lettered; or an object
 *     made before holdings were kept)
 *   an open holding older than the grace period whose  ending it now, as its removal       lostHolding
 *     object is gone, or holds the value for another     would have (PoolDeleted, Deleted,
 *     claim                                              Released or Expired)
 *   the sweep's holding open beside the record's for   taking the sweep's back             lostHolding
 *     the same object and claim
 *
 * The walk read the objects before the open holdings: an object is read again before either fix, as a
 * claim released or bound meanwhile is a record the history function reads, not one it lost. A
 * quarantine's holding (a freed value held back) has no object: the value's key is read, and a
 * quarantine there is its own.
 *
 * A holding the sweep starts is keyed apart (sequence 0), and the history function, reading the lost
 * record late after all, leaves it be (service/history/holdings.ts `alreadyOpen`).
 */
import { holdingOf } from '../../domain/objects/holdings.ts';
import type { AllocationRecord, QuarantineRecord } from '../../domain/objects/records.ts';
import { poolKindInfo, type AllocationKind } from '../../domain/kinds.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import type { StoredHolding } from '../../store/holdings.ts';
import { allocationKey, holdingStart } from '../../store/keys.ts';
import { DEFAULT_HOLDING_RETENTION_DAYS } from '../../domain/objects/holdings.ts';
import { releasedOrExpired, removalOf, SWEPT } from '../history/holdings.ts';
import { fix, spend, type Sweep } from './state.ts';
import type { PoolWalk } from './walk.ts';

const same = (stored: StoredHolding, object: AllocationRecord) =>
  stored.holding.allocation.uid === object.metadata.uid &&
  stored.holding.claim?.uid === (object.spec.claimRef?.uid || undefined);

/**
 * Whether a holding's state since `at` (an object made, a holding started) is settled for the sweep:
 * past the grace period, or from before the history function began to read (then a record of it that
 * the function has not read, it never will).
 */
const settled = (sweep: Sweep, at: string) =>
  Date.now() - Date.parse(at) >= sweep.graceMs ||
  // An object's time has whole seconds: a second more, so one made just after is never taken for one before.
  (sweep.historySince !== undefined && Date.parse(at) + 1000 <= sweep.historySince);

/** The item at a value's key now, read consistently (an object, a quarantine, or nothing). */
async function atValue(
  sweep: Sweep,
  pool: PoolWalk['id'],
  allocationKind: AllocationKind,
  value: string,
): Promise<AllocationRecord | QuarantineRecord | undefined> {
  const parsed = valueKind(allocationKind).parse(value);
  if (!parsed.ok) return undefined;
  spend(sweep);
  return sweep.ctx.table.get<AllocationRecord | QuarantineRecord>(
    allocationKey(pool, allocationKind, parsed.value),
  );
}

/**
 * Whether the object as the walk saw it still holds its value as it did, with no open holding for it:
 * the walk read the objects before the open holdings, so an object may have changed since (a claim
 * released or bound) and the history function recorded it; that is not a lost record.
 */
async function stillWithout(
  sweep: Sweep,
  walk: PoolWalk,
  allocationKind: AllocationKind,
  object: AllocationRecord,
): Promise<boolean> {
  const now = await atValue(sweep, walk.id, allocationKind, object.value);
  if (now?.t !== 'alloc' || now.rv !== object.rv) return false;
  spend(sweep);
  const [latest] = await sweep.ctx.table.holdings.latestOfValue(walk.id, object.value, 1);
  return !(latest && !latest.holding.until && same(latest, object));
}

/** Whether the value is held back by the quarantine this holding is (no object walks by it). */
const quarantined = (item: AllocationRecord | QuarantineRecord | undefined, stored: StoredHolding) =>
  !stored.holding.claim && item?.t === 'quarantine' && item.metadata.uid === stored.holding.allocation.uid;

/**
 * Of a value's open holdings, those the sweep should end: not the walked object's, past the grace period,
 * and not the object's or the quarantine's at the value's key now (read again: it may have changed since
 * the walk); and a holding the sweep started in a record's stead when the record's own holding is open too
 * (both made at once), which goes without a trace.
 */
async function strayHoldings(
  sweep: Sweep,
  walk: PoolWalk,
  allocationKind: AllocationKind,
  holdings: readonly StoredHolding[],
): Promise<{ end: StoredHolding[]; remove: StoredHolding[] }> {
  const object = walk.objects!.get(holdings[0]!.holding.value);
  const mine = object ? holdings.filter((stored) => same(stored, object)) : [];
  const remove = mine.some((stored) => !stored.start.endsWith(SWEPT))
    ? mine.filter((stored) => stored.start.endsWith(SWEPT))
    : mine.slice(1).filter((stored) => stored.start.endsWith(SWEPT));
  const end: StoredHolding[] = [];
  for (const stored of holdings) {
    if (mine.includes(stored) || !settled(sweep, stored.holding.from)) continue;
    const now = await atValue(sweep, walk.id, allocationKind, stored.holding.value);
    if (now?.t === 'alloc' ? !same(stored, now) : !quarantined(now, stored)) end.push(stored);
  }
  return { end, remove };
}

/**
 * The pool's open holdings, by their marks checked against their value's copies: a start or an end the
 * history function did not finish (killed between two of its writes) is finished here from what it left,
 * once past the grace period (before, it may be at work on it still).
 */
async function openHoldings(sweep: Sweep, walk: PoolWalk): Promise<StoredHolding[]> {
  const { holdings } = sweep.ctx.table;
  const marks: StoredHolding[] = [];
  for await (const stored of holdings.open(walk.id)) marks.push(stored);
  spend(sweep, Math.ceil(marks.length / 100));
  const copies = await holdings.asTheirCopiesSay(marks);
  const open: StoredHolding[] = [];
  for (const [i, mark] of marks.entries()) {
    const copy = copies[i];
    if (copy && !copy.holding.until) open.push(copy);
    else if (!settled(sweep, mark.holding.from)) {
      if (!copy) open.push(mark);
    } else if (!copy) {
      await fix(sweep, 'lostHolding', async () => {
        await holdings.start(mark);
        return true;
      });
      open.push(mark);
    } else
      await fix(sweep, 'lostHolding', async () => {
        await holdings.end(copy, copy.holding.until!, copy.holding.ended!, expiryOf(copy.holding.until!));
        return true;
      });
  }
  return open;
}

const expiryOf = (until: string) =>
  Math.ceil(Date.parse(until) / 1000) + DEFAULT_HOLDING_RETENTION_DAYS * 86_400;

export async function checkHoldings(sweep: Sweep, walk: PoolWalk): Promise<void> {
  if (!walk.objects) return; // only after a walk of all the pool's objects in this run
  const { table } = sweep.ctx;
  const allocationKind = poolKindInfo(walk.id.kind)!.allocationKind;
  const open = new Map<string, StoredHolding[]>();
  spend(sweep);
  for (const stored of await openHoldings(sweep, walk))
    open.set(stored.holding.value, [...(open.get(stored.holding.value) ?? []), stored]);
  const now = new Date().toISOString();
  for (const object of walk.objects.values()) {
    if (
      !settled(sweep, object.metadata.creationTimestamp) ||
      open.get(object.value)?.some((stored) => same(stored, object))
    )
      continue;
    if (!(await stillWithout(sweep, walk, allocationKind, object))) continue;
    await fix(sweep, 'lostHolding', async () => {
      await table.holdings.start({ holding: holdingOf(object, now), start: holdingStart(now, '0') });
      return true;
    });
  }
  for (const holdings of open.values()) {
    const { end, remove } = await strayHoldings(sweep, walk, allocationKind, holdings);
    for (const stored of remove)
      await fix(sweep, 'lostHolding', async () => {
        await table.holdings.remove(stored);
        return true;
      });
    for (const stored of end)
      await fix(sweep, 'lostHolding', async () => {
        let ended = await removalOf(table, stored.holding);
        if (ended === 'Released') ended = await releasedOrExpired(table, stored.holding.claim?.uid);
        await table.holdings.end(stored, now, ended, expiryOf(now));
        return true;
      });
  }
}
