/**
 * Names of pre-provisioned allocation objects (api.md, "Allocation objects"): any valid name is
 * accepted, and names stay unique per namespace and kind with the name as the arbiter, as in Kubernetes.
 *
 * A name has one of three roles (domain/objects/name-roles.ts, nameRole). The deterministic name of the object's own
 * value is found by its key. A name no pool gives (`lp-obj-a`) has a name item pointing at the object.
 * The deterministic name of another value (`idx-1`, value 1 of pool `idx`, for an object of pool `p1`;
 * `x-10-0-0-1`; an IPv6 name in full; a prefix name), of a pool that exists or not, gets a **name hold**:
 * an item at that value's allocation key, pointing at the object. One key holds one item, so:
 *
 * - a claim of pool `idx` that tries value 1 finds the key taken, exactly as for a held value: its own
 *   conditional put is what loses, and the claim path costs nothing more (the stream function marks the
 *   slot held in the pool's summaries, so claims skip it without trying);
 * - the name cannot be given twice: a second object named `idx-1`, or the server's object for value 1 of
 *   `idx`, finds the key taken (409 AlreadyExists), and a hold cannot be put where an object holds value
 *   1 already (409, naming that object);
 * - `GET …/indices/idx-1` reads the key, finds the hold and follows it (two reads, on this rare path).
 *
 * The writes, in order, each conditional (pre-provision, `createAllocation`):
 *
 *   1. put the hold, `pending`, with a deadline      attribute_not_exists(pk): of concurrent POSTs of one
 *                                                    name exactly one lands; the others read it and 409
 *   2. put the object at its own key                 attribute_not_exists(pk), as before
 *   3. confirm the hold (`held`)                     only while `pending` and of this object's uid
 *   4. answer 201                                    only after 3
 *
 * A request that dies leaves a pending hold. Once its deadline has passed (the handler's Lambda timeout
 * with margin, the same deadline a claim's handler has), whoever meets it (the stream function on the
 * hold's record, or a later request for the name) repairs it: if the object is in place, it confirms the
 * hold (the request died between 2 and 3); if not, it deletes the hold, conditional on `pending` and the
 * uid. Confirm and that delete exclude each other (each is conditional on `pending`), so a live but slow
 * request racing the repair either confirms first (and its hold stands) or fails to confirm (and deletes
 * its own object before answering, 409 "retry"). An object left without its hold (that request died
 * after a lost confirm) is deleted by the stream function, which checks the hold of every object with
 * such a name: it was never answered 201.
 *
 * A hold goes with its object: a delete (by the user, a cascade, the Recycle reclaim) deletes the object
 * first, then the hold, conditional on the uid; the object's REMOVE record makes the stream function
 * delete the hold too, so a delete that died in between leaves nothing. A held hold whose object is gone
 * is deleted by whoever meets it. Names are immutable (a PUT cannot rename), so nothing else moves one.
 *
 * A prefix's hold, kept from a pool of a range of lengths too: such a pool keys its objects by its own
 * layout, not at the hold's key, so step 1 also leaves a mark that the pool's overlap check reads, and
 * then checks that pool's objects itself (service/allocation/prefix-check.ts gives the order and why it is enough).
 *
 * A hold is no allocation object: lists and `?pool=` do not show it (it has no index entry), `allocated`
 * does not count it, `Valid` of the object is of its own pool and value. It does make the value it names
 * not free: the summaries mark it in a second bitmap (service/counts/tally.ts), so `free` and `Available` of
 * that pool leave it out, and a pool created later counts it at its first recount.
 */
import { AlreadyExistsError } from '../../domain/errors.ts';
import type { AllocationKind, PoolKind, Resource } from '../../domain/kinds.ts';
import { nameRole, type NameRole } from '../../domain/objects/name-roles.ts';
import type { AllocationRecord, ItemKey, NameHoldRecord, PoolRecord } from '../../domain/objects/records.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import { familyOf, type ParsedValue } from '../../domain/values/values.ts';
import { ipPrefixValues } from '../../domain/values/ip.ts';
import { spaceOf } from '../../domain/objects/objects.ts';
import { isRanged } from '../../domain/values/prefix-pools.ts';
import { allocationKey, nameKey, poolKeyOf, type PoolId } from '../../store/keys.ts';
import type { Stored } from '../../store/items.ts';
import { heldPrefixKey, rangedAllocationKey, type HeldPrefixRecord } from '../../store/overlaps.ts';
import { HANDLER_DEADLINE_MS, type ClaimContext } from '../context.ts';

/** What sits at an allocation key: an allocation object or a name hold. */
export type AtAllocationKey = Stored<AllocationRecord> | Stored<NameHoldRecord>;

/** The key of the value a `held` name stands for (its pool of the object's pool kind). */
export function holdKeyOf(
  namespace: string,
  poolKind: PoolKind,
  kind: AllocationKind,
  named: { pool: string; value: ParsedValue },
): ItemKey {
  return allocationKey({ namespace, kind: poolKind, name: named.pool }, kind, named.value);
}

/** The role of an allocation object's name, from the object alone. */
export function roleOf(allocation: AllocationRecord): NameRole {
  const value = valueKind(allocation.kind).parse(allocation.value);
  if (!value.ok) return { role: 'custom' };
  return nameRole(allocation.kind, allocation.metadata.name, allocation.spec.poolRef.name, value.value);
}

/** Where the name hold of an object with a `held` name sits; undefined for any other name. */
export function holdKeyOfObject(allocation: AllocationRecord): ItemKey | undefined {
  const role = roleOf(allocation);
  if (role.role !== 'held') return undefined;
  return holdKeyOf(
    allocation.metadata.namespace,
    allocation.spec.poolRef.kind as PoolKind,
    allocation.kind,
    role,
  );
}

/** A pending hold for `allocation` (at `target`), named value `named` of a pool of `poolKind`. */
export function newHold(
  allocation: AllocationRecord,
  target: ItemKey,
  poolKind: PoolKind,
  named: { pool: string; value: ParsedValue },
): NameHoldRecord {
  const { name, namespace, uid } = allocation.metadata;
  return {
    t: 'hold',
    kind: allocation.kind,
    metadata: { name, namespace, uid },
    poolRef: { kind: poolKind, name: named.pool },
    value: named.value.value,
    target,
    state: 'pending',
    until: new Date(Date.now() + HANDLER_DEADLINE_MS).toISOString(),
  };
}

/**
 * Step 1: puts the hold. Returns what is in the way (an object at the key, or another object's hold
 * that stands), or undefined once the hold is there. A hold left by a request that died is repaired on
 * the way (see judgeHold); this request's own hold (a retried put whose answer was lost) is its own.
 */
export async function placeHold(
  ctx: ClaimContext,
  key: ItemKey,
  hold: NameHoldRecord,
): Promise<AtAllocationKey | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await ctx.table.holds.put(key, hold)) return markPrefix(ctx, key, hold);
    const there = await ctx.table.get<AllocationRecord | NameHoldRecord>(key);
    if (!there) continue;
    if (there.t !== 'hold') return there;
    if (there.metadata.uid === hold.metadata.uid) return markPrefix(ctx, key, hold);
    if ((await judgeHold(ctx, there, false)) === 'stands') return there;
  }
  throw new AlreadyExistsError(`${hold.kind} "${hold.metadata.name}" kept changing; retry`).about(
    hold.kind,
    hold.metadata.name,
  );
}

/**
 * Step 1 of a prefix's hold, after the hold's put: its mark, then the check of the pool's objects when
 * the pool is one of a range of lengths that hands out the prefix's length (service/allocation/prefix-check.ts).
 * Returns the object in the way (the mark and the hold withdrawn), or undefined: the hold stands.
 */
async function markPrefix(
  ctx: ClaimContext,
  key: ItemKey,
  hold: NameHoldRecord,
): Promise<Stored<AllocationRecord> | undefined> {
  if (hold.kind !== 'IPPrefix') return undefined;
  const value = ipPrefixValues.parse(hold.value);
  if (!value.ok) return undefined;
  const pool: PoolId = {
    namespace: hold.metadata.namespace,
    kind: hold.poolRef.kind,
    name: hold.poolRef.name,
  };
  const mark: HeldPrefixRecord = {
    t: 'heldPrefix',
    value: hold.value,
    length: value.value.length!,
    metadata: hold.metadata,
    hold: key,
  };
  await ctx.table.overlaps.mark(pool, value.value, mark);
  const record = await ctx.table.get<PoolRecord>(poolKeyOf(pool));
  const space = record?.t === 'pool' ? spaceOf(record) : undefined;
  if (!space || !isRanged(space) || !space.fits(value.value)) return undefined;
  const layout = {
    family: familyOf(space) as 4 | 6,
    min: space.prefixLengths!.min,
    max: space.prefixLengths!.max,
  };
  const own = await ctx.table.get<AllocationRecord>(rangedAllocationKey(pool, layout, value.value));
  const other =
    own?.t === 'alloc'
      ? own
      : ((await ctx.table.overlaps.overlapping(pool, layout, value.value, { marks: false })) as
          Stored<AllocationRecord> | undefined);
  if (!other) return undefined;
  await ctx.table.overlaps.unmark(heldPrefixKey(pool, value.value), hold.metadata.uid);
  await ctx.table.holds.release(key, hold.metadata.uid);
  return other;
}

/**
 * Whether a held prefix's mark met by a claim's overlap check stands for a hold that stands (judged
 * without waiting, as a request does); a mark whose hold is gone is dropped.
 */
export async function markStands(ctx: ClaimContext, mark: Stored<HeldPrefixRecord>): Promise<boolean> {
  const hold = await ctx.table.get<NameHoldRecord>(mark.hold);
  const own = hold?.t === 'hold' && hold.metadata.uid === mark.metadata.uid;
  if (own && (await judgeHold(ctx, hold, false)) === 'stands') return true;
  await ctx.table.overlaps.unmark({ pk: mark.pk, sk: mark.sk }, mark.metadata.uid);
  return false;
}

/** Step 3: true once this object's hold is `held` (a retried confirm whose answer was lost included). */
export async function confirmHold(ctx: ClaimContext, key: ItemKey, uid: string): Promise<boolean> {
  if (await ctx.table.holds.confirm(key, uid)) return true;
  const there = await ctx.table.get<NameHoldRecord>(key);
  return there?.t === 'hold' && there.metadata.uid === uid && there.state === 'held';
}

const POLL_MAX_MS = 250;

/**
 * Whether a hold stands, repairing it when the request that put it is gone: a pending hold past its
 * deadline is confirmed when its object is in place and deleted when not; a held hold whose object is
 * gone is deleted. `wait` (the stream function) waits for a pending hold's request until its deadline,
 * as for a claim's handler; a request does not wait (a pending hold stands: its name is being taken).
 */
export async function judgeHold(
  ctx: ClaimContext,
  hold: Stored<NameHoldRecord>,
  wait: boolean,
): Promise<'stands' | 'gone'> {
  const key = { pk: hold.pk, sk: hold.sk };
  const uid = hold.metadata.uid;
  let current: Stored<NameHoldRecord> | undefined = hold;
  let delay = 10;
  for (let attempt = 0; attempt < 1000; attempt++) {
    if (current?.t !== 'hold' || current.metadata.uid !== uid) return 'gone';
    const pending = current.state === 'pending';
    if (pending && Date.now() < Date.parse(current.until)) {
      if (!wait) return 'stands';
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, POLL_MAX_MS);
    } else {
      const object = await ctx.table.get<AllocationRecord>(current.target);
      const inPlace = object?.t === 'alloc' && object.metadata.uid === uid;
      if (inPlace && (!pending || (await ctx.table.holds.confirm(key, uid)))) return 'stands';
      if (!inPlace && (await ctx.table.holds.release(key, uid, current.state))) return 'gone';
    }
    current = await ctx.table.get<NameHoldRecord>(key);
  }
  return 'stands';
}

/**
 * After an object left: its name goes with it (a custom name's item, or a held name's hold), conditional
 * on it still being this object's.
 */
export async function releaseName(
  ctx: ClaimContext,
  allocation: Stored<AllocationRecord>,
  resource: Resource,
): Promise<void> {
  const role = roleOf(allocation);
  if (role.role === 'custom') {
    await ctx.table.deleteName(
      nameKey(allocation.metadata.namespace, resource, allocation.metadata.name),
      allocation,
    );
  } else if (role.role === 'held') {
    await ctx.table.holds.release(holdKeyOfObject(allocation)!, allocation.metadata.uid);
  }
}

/**
 * The stream function's check of an object with a `held` name: its hold must be there and its own. One
 * that is not was left by a create that never answered 201 (its hold was repaired away while it was
 * slow, and it died before deleting its object): the object goes. True when it went.
 */
export async function dropUnheldObject(
  ctx: ClaimContext,
  key: ItemKey,
  allocation: AllocationRecord,
  known?: { hold: Stored<NameHoldRecord> | undefined },
): Promise<boolean> {
  if (allocation.origin !== 'user') return false;
  const holdKey = holdKeyOfObject(allocation);
  if (!holdKey) return false;
  // `known`: the hold as the caller read it, consistently, after the object was put.
  const hold = known ? known.hold : await ctx.table.get<NameHoldRecord>(holdKey);
  if (hold?.t === 'hold' && hold.metadata.uid === allocation.metadata.uid) return false;
  return (await ctx.table.deleteItem(key, { uid: allocation.metadata.uid })) !== undefined;
}
