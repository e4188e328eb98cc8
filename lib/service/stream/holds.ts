/**
 * Name holds' records (a kind of lib/service/stream/kinds.ts; service/allocation/name-holds.ts says what a hold is):
 * one life of a hold at a time. The slot it holds (in a pool of a range of prefix lengths, a member of
 * the summaries when the pool hands out its length), and the hold judged: its request may have died, so
 * a pending hold is waited for until its deadline, then confirmed or deleted; a hold that went takes its
 * mark (service/allocation/prefix-check.ts) with it. Reads: the key (consistently) and, for a prefix's hold, its pool.
 * Every life's work is done (a REMOVE's depends on the old image: the mark it must take away).
 */
import type { AllocationRecord, NameHoldRecord, PoolRecord } from '../../domain/objects/records.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import { spaceOf } from '../../domain/objects/objects.ts';
import { isRanged } from '../../domain/values/prefix-pools.ts';
import type { PoolSpace } from '../../domain/values/values.ts';
import { heldPrefixKey } from '../../store/overlaps.ts';
import { poolKeyOf, type PoolId } from '../../store/keys.ts';
import { judgeHold } from '../allocation/name-holds.ts';
import { prefixMember } from '../counts/runs.ts';
import type { Batch, RecordKind, Touched } from './kinds.ts';
import { slotChanges } from './allocations.ts';
import { lastImage } from './records.ts';

/** The pool of an item that holds a value's key without being its object: a name hold, a quarantine. */
export const poolOfHold = (hold: Pick<NameHoldRecord, 'metadata' | 'poolRef'>): PoolId => ({
  namespace: hold.metadata.namespace,
  kind: hold.poolRef.kind,
  name: hold.poolRef.name,
});

export const holdRecords: RecordKind = {
  reads(batch, run, life) {
    const hold = lastImage(life) as unknown as NameHoldRecord;
    batch.reads.want(run.key, true);
    const pool = poolOfHold(hold);
    if (hold.kind === 'IPPrefix') batch.reads.want(poolKeyOf(pool), true);
    return { pools: [pool] };
  },

  async work(batch, run, life): Promise<Touched[]> {
    const hold = lastImage(life) as unknown as NameHoldRecord;
    const stored = await batch.reads.current<AllocationRecord | NameHoldRecord>(run.key);
    if (stored?.t === 'hold') await judgeHold(batch.ctx, stored, true);
    if (!(stored?.t === 'hold' && stored.metadata.uid === hold.metadata.uid))
      await unmarkHold(batch, poolOfHold(hold), hold);
    return [];
  },

  async slots(batch, run, life) {
    const hold = lastImage(life) as unknown as NameHoldRecord;
    const stored = await batch.reads.current<AllocationRecord | NameHoldRecord>(run.key);
    const pool = poolOfHold(hold);
    if (stored?.t === 'alloc' && stored.finest !== undefined) return []; // an object of a range pool replaced the hold: its own record counts it
    const space = hold.kind === 'IPPrefix' ? await poolSpace(batch, pool) : undefined;
    if (!space || !isRanged(space)) return slotChanges(pool, hold.kind, hold.value, run, life, stored);
    const ids = run.records.map((record) => record.id);
    const record = life.records.at(-1)!.id;
    const standing = stored?.t === 'hold' && stored.value === hold.value;
    return heldPrefixTouched(pool, space, hold.value, standing, record, ids.slice(0, ids.indexOf(record)));
  },
};

/** A held prefix of a pool of a range of lengths as a member change (none for a length it does not hand out). */
export function heldPrefixTouched(
  pool: PoolId,
  space: PoolSpace,
  valueText: string,
  present: boolean,
  record: string,
  also: readonly string[] = [],
): Touched[] {
  const value = valueKind('IPPrefix').parse(valueText);
  if (!value.ok || !space.fits(value.value)) return [];
  const run = prefixMember(value.value, space.prefixLengths!.max, true);
  const family = value.value.family;
  const change = {
    record,
    ...(also.length > 0 && { also }),
    slot: run.first,
    family,
    present,
    hold: true,
    run,
    // A hold that went gave its prefix back: the waiting claims are woken on every delivery of its
    // record, not only the one that counted it (that one may die before it wakes them).
    ...(!present && { released: true }),
  };
  return [{ pool, change }];
}

/** Drops the mark of a hold that went (conditional on its uid: a later hold's mark stays). */
async function unmarkHold(batch: Batch, pool: PoolId, hold: NameHoldRecord): Promise<void> {
  if (hold.kind !== 'IPPrefix') return;
  const value = valueKind(hold.kind).parse(hold.value);
  if (value.ok) await batch.ctx.table.overlaps.unmark(heldPrefixKey(pool, value.value), hold.metadata.uid);
}

/** The pool's space, when the pool exists. */
async function poolSpace(batch: Batch, id: PoolId): Promise<PoolSpace | undefined> {
  const pool = await batch.reads.current<PoolRecord>(poolKeyOf(id));
  return pool?.t === 'pool' ? spaceOf(pool) : undefined;
}
