/**
 * Who held each value (service/history/holdings.ts), checked by the sweep against the objects a whole walk
 * of the pool saw:
 *
 *   found                                              fixed by                            kind
 *   an object older than the grace period with no      starting its holding from now       lostHolding
 *     open holding for it and its claim (a record the
 *     history function never read: a local server
 *     killed, a record dead-lettered; or an object
 *     made before holdings were kept)
 *   an open holding older than the grace period whose  ending it now, as its removal       lostHolding
 *     object is gone, or holds the value for another     would have (PoolDeleted, Deleted,
 *     claim                                              Released or Expired)
 *
 * A quarantine's holding (a freed value held back) has no object: the value's key is read, and a
 * quarantine there is its own.
 *
 * A holding the sweep starts is keyed apart (sequence 0), and the history function, reading the lost
 * record late after all, leaves it be (service/history/holdings.ts `alreadyOpen`).
 */
import { holdingOf } from '../../domain/objects/holdings.ts';
import type { AllocationRecord, QuarantineRecord } from '../../domain/objects/records.ts';
import { poolKindInfo, type AllocationKind } from '../../domain/kinds.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import { holdingPool, type StoredHolding } from '../../store/holdings.ts';
import { allocationKey, holdingStart } from '../../store/keys.ts';
import { DEFAULT_HOLDING_RETENTION_DAYS } from '../../domain/objects/holdings.ts';
import { releasedOrExpired, removalOf } from '../history/holdings.ts';
import { fix, spend, type Sweep } from './state.ts';
import { olderThanGrace, type PoolWalk } from './walk.ts';

const same = (stored: StoredHolding, object: AllocationRecord) =>
  stored.holding.allocation.uid === object.metadata.uid &&
  stored.holding.claim?.uid === (object.spec.claimRef?.uid || undefined);

/** Whether the value is held back by the quarantine this holding is (no object walks by it). */
async function quarantined(
  sweep: Sweep,
  allocationKind: AllocationKind,
  stored: StoredHolding,
): Promise<boolean> {
  if (stored.holding.claim) return false;
  const parsed = valueKind(allocationKind).parse(stored.holding.value);
  if (!parsed.ok) return false;
  spend(sweep);
  const item = await sweep.ctx.table.get<QuarantineRecord>(
    allocationKey(holdingPool(stored.holding), allocationKind, parsed.value),
  );
  return item?.t === 'quarantine' && item.metadata.uid === stored.holding.allocation.uid;
}

export async function checkHoldings(sweep: Sweep, walk: PoolWalk): Promise<void> {
  if (!walk.objects) return; // only after a walk of all the pool's objects in this run
  const { table } = sweep.ctx;
  const open = new Map<string, StoredHolding[]>();
  spend(sweep);
  for await (const stored of table.holdings.open(walk.id))
    open.set(stored.holding.value, [...(open.get(stored.holding.value) ?? []), stored]);
  const now = new Date().toISOString();
  for (const object of walk.objects.values()) {
    if (!olderThanGrace(sweep, object) || open.get(object.value)?.some((stored) => same(stored, object)))
      continue;
    await fix(sweep, 'lostHolding', async () => {
      await table.holdings.start({ holding: holdingOf(object, now), start: holdingStart(now, '0') });
      return true;
    });
  }
  const allocationKind = poolKindInfo(walk.id.kind)!.allocationKind;
  for (const [value, holdings] of open) {
    const object = walk.objects.get(value);
    for (const stored of holdings) {
      if (object && same(stored, object)) continue;
      if (Date.now() - Date.parse(stored.holding.from) < sweep.graceMs) continue;
      if (!object && (await quarantined(sweep, allocationKind, stored))) continue;
      await fix(sweep, 'lostHolding', async () => {
        let ended = await removalOf(table, stored.holding);
        if (ended === 'Released') ended = await releasedOrExpired(table, stored.holding.claim?.uid);
        const expiresAt = Math.ceil(Date.now() / 1000) + DEFAULT_HOLDING_RETENTION_DAYS * 86_400;
        await table.holdings.end(stored, now, ended, expiresAt);
        return true;
      });
    }
  }
}
