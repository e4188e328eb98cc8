/**
 * Pools' records (a kind of lib/service/stream/kinds.ts). Every record is worked on, in order: each
 * transition of a pool means something of its own, and they are few.
 *
 *   record                          what is done
 *   INSERT                          recount (claims that wait for it may fit now); a pool carved from a
 *                                   claim takes that claim's value; a pool of a range of prefix lengths
 *                                   counts the prefixes held before it existed
 *   MODIFY of spec or uid           recount (the counts' own writes change neither: no loop)
 *   REMOVE                          its waiting claims now wait for it to exist (PoolNotFound)
 *
 * The pool's counts are read afresh when they are written (Touched.changedPool), not from the batch's read.
 */
import { poolKindInfo } from '../../domain/kinds.ts';
import type { NameHoldRecord, PoolRecord } from '../../domain/objects/records.ts';
import { spaceOf } from '../../domain/objects/objects.ts';
import { isRanged } from '../../domain/values/prefix-pools.ts';
import { familyOf } from '../../domain/values/values.ts';
import type { PoolId } from '../../store/keys.ts';
import { refreshCarved } from '../allocation/carving.ts';
import type { Batch, RecordKind, Touched } from './kinds.ts';
import type { ChangeRecord } from './records.ts';
import { heldPrefixTouched } from './holds.ts';

const idOf = (pool: PoolRecord): PoolId => ({
  namespace: pool.metadata.namespace,
  kind: pool.kind,
  name: pool.metadata.name,
});

export const poolRecords: RecordKind = {
  reads() {},

  async work(batch, _run, life): Promise<Touched[]> {
    const touched: Touched[] = [];
    for (const record of life.records) touched.push(...(await poolRecord(batch, record)));
    return touched.map((entry) => ({ ...entry, changedPool: true }));
  },
};

async function poolRecord(batch: Batch, record: ChangeRecord): Promise<Touched[]> {
  const pool = record.newImage as unknown as PoolRecord | undefined;
  // A carved pool created just as its claim got its value: whichever came last sees the other.
  if (record.eventName === 'INSERT' && pool?.spec.prefixesFrom !== undefined)
    await refreshCarved(
      batch.ctx,
      pool.metadata.namespace,
      poolKindInfo(pool.kind)!.resource,
      pool.metadata.name,
    );
  const touched = poolChanged(record);
  if (record.eventName === 'INSERT' && pool) touched.push(...(await heldBeforePool(batch, record, pool)));
  return touched;
}

function poolChanged(record: ChangeRecord): Touched[] {
  const pool = (record.newImage ?? record.oldImage) as unknown as PoolRecord;
  const id = idOf(pool);
  if (record.eventName === 'INSERT') return [{ pool: id, recount: true }];
  if (record.eventName === 'REMOVE') return [{ pool: id, removed: true }];
  const before = record.oldImage as unknown as PoolRecord | undefined;
  // A counts write by this function changes no generation: nothing to do, and no loop.
  return before?.metadata.generation === pool.metadata.generation && before.metadata.uid === pool.metadata.uid
    ? []
    : [{ pool: id, recount: true }];
}

/**
 * A new IPPrefixPool of a range of lengths: the prefixes held before it existed, from their marks
 * (store/overlaps.ts), as hold members for its first recount. (Their holds' records found no pool and
 * set a bit at the prefix's own slot, as for a pool of one length: the same slot when the prefix is a
 * /max, else a bit the repair sweep finds is no member's and clears.) A hold whose mark came after this
 * read is confirmed after it, and that record finds the pool.
 */
async function heldBeforePool(batch: Batch, record: ChangeRecord, pool: PoolRecord): Promise<Touched[]> {
  const { table } = batch.ctx;
  const id = idOf(pool);
  if (id.kind !== 'IPPrefixPool') return [];
  const current = await table.get<PoolRecord>({ pk: record.keys.pk, sk: record.keys.sk });
  const space = current?.t === 'pool' ? spaceOf(current) : undefined;
  if (!space || !isRanged(space)) return [];
  const touched: Touched[] = [];
  for (const mark of await table.overlaps.marks(id, familyOf(space) as 4 | 6)) {
    const hold = await table.get<NameHoldRecord>(mark.hold);
    const standing = hold?.t === 'hold' && hold.metadata.uid === mark.metadata.uid;
    touched.push(...heldPrefixTouched(id, space, mark.value, standing, `${record.id}#${mark.sk}`));
  }
  return touched;
}
