/**
 * Quarantines' records (a kind of lib/service/stream/kinds.ts; service/leases/quarantine.ts says what one is):
 * the slot it holds back, as the store holds its key now. Its INSERT changes nothing the allocation
 * object's REMOVE did not already count (the work on that REMOVE put it); its REMOVE frees the slot, and
 * the counts' `freed` wakes the pool's waiting claims (reconcile.ts). Reads: the key, consistently.
 */
import type { QuarantineRecord } from '../../domain/objects/records.ts';
import { slotChanges } from './allocations.ts';
import { poolOfHold } from './holds.ts';
import type { RecordKind } from './kinds.ts';
import { lastImage } from './records.ts';

export const quarantineRecords: RecordKind = {
  reads(batch, run, life) {
    batch.reads.want(run.key, true);
    return { pools: [poolOfHold(lastImage(life) as unknown as QuarantineRecord)] };
  },

  work: () => Promise.resolve([]),

  async slots(batch, run, life) {
    const quarantine = lastImage(life) as unknown as QuarantineRecord;
    const stored = await batch.reads.current<QuarantineRecord>(run.key);
    return slotChanges(poolOfHold(quarantine), quarantine.kind, quarantine.value, run, life, stored);
  },
};
