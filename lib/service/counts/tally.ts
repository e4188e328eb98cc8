/**
 * A pool's counts (allocated, held, free) and search hint, kept by the stream function at a cost that
 * does not grow with the pool: a batch touches the group summaries its records name, never the pool.
 *
 * Lambda delivers stream records at least once, and a record names no shard, so a plain "add 1" would
 * count a redelivered record twice. Instead each group of 4096 slots has a summary, a bitmap of held
 * slots (lib/store/table.ts) that a record makes true again however often it is applied. The write that flips a
 * bit also leaves a marker named after the record, and markers, not records, reach the counts:
 *
 *   0. read the group's summary          what the record changes (a repeat changes nothing, or finds
 *                                          its own marker left by an attempt that died)
 *   A. write bits + markers, and drop    one write, conditional on the summary's version; the markers
 *      the markers the counts hold         an earlier batch left, which the counts held when this batch
 *                                          read the pool, go in the same write
 *      list the group in the directory   once per group, before its markers can reach the counts
 *   B. counts += markers; applied += ids conditional on the counts' revision: a marker counts once; the
 *      applied −= the ids A dropped        ids of the markers A dropped go (a crash between A and B
 *                                          leaves them, never a wrong count, until they age out)
 *
 * So a batch makes two writes, where taking its markers and ids away at once made four: its markers stay
 * on the summary, counted, until the next batch that writes the group takes them away. An id leaves
 * `applied` only after its marker has left the summary, so a marker still there whose id the counts held
 * is counted whatever else has happened since.
 *
 * Records of one item arrive in order, so a bit ends as its slot is. A batch applies only the markers of
 * its own records, so two batches never count one marker. A recount (a new pool, a spec change) counts
 * the bits of the groups the directory lists, and takes every marker it sees as counted.
 *
 * A slot is free, held by an allocation object, or held by a name hold (service/allocation/name-holds.ts): a second
 * bitmap marks the holds, so a name-held value is not free (claims skip it, as they read the first
 * bitmap only) but is no allocation object of the pool (`allocated` leaves it out). A quarantine (a freed
 * value held back, domain/objects/records.ts) is such a hold, marked in a third bitmap and counted apart
 * (`quarantined`). In a pool of a range of prefix lengths a hold is a member whose run is held and
 * name-held (service/counts/runs.ts); such pools have no quarantine.
 */
import { createHash, randomUUID } from 'node:crypto';
import { runsFrom } from '../../domain/values/candidates.ts';
import type { ClaimContext } from '../context.ts';
import { spaceOf, timestamp } from '../../domain/objects/objects.ts';
import type { PoolCounts, PoolRecord } from '../../domain/objects/records.ts';

import { familyOf, type PoolSpace } from '../../domain/values/values.ts';
import { GROUP_BITS, poolKeyOf, type GroupRef, type PoolId } from '../../store/keys.ts';
import { isHeld, setHeld, type GroupSummary, type MarkerEntry, type Stored } from '../../store/items.ts';
import { MARKERS_PER_WRITE } from '../../store/summaries.ts';
import { bitmapsOfMembers, countedIn, flippedRuns, groupsOfRun } from './runs.ts';
import { candidateOrdinal, countSummaries } from './count.ts';

/** An allocation object of the pool appeared (present) or went, as stream record `record` says. */
export interface SlotChange {
  /** The stream record's id: the same record delivered again makes the same marker. */
  record: string;
  /**
   * Earlier records of the same item in the batch, coalesced into this change (lib/service/stream): an
   * attempt at the batch that died after step A may have left a marker under one of their ids, which this
   * change then takes as its own.
   */
  also?: readonly string[];
  family: 4 | 6 | undefined;
  slot: bigint;
  present: boolean;
  /** What holds the slot now is a name hold, not an allocation object (it is held, but not counted). */
  hold?: boolean;
  /** What holds the slot now is a quarantine (`hold` too): counted in `quarantined`. */
  quarantined?: boolean;
  /** The allocation was made after a lost race: claimers are contending for this pool. */
  raced?: boolean;
  /**
   * A pool of a range of prefix lengths: the object's run (from `slot`, the first finest slot of the
   * run inside this change's group) and its member id (service/counts/runs.ts).
   */
  run?: { member: string; first: bigint; span: bigint };
  /**
   * A run's object went after its claim did (a release's reclaim, or a delete of an unbound object), or
   * a name hold went: a value given back, which wakes the pool's waiting claims even when the batch
   * coalesced its INSERT and REMOVE, or counted it in an attempt that died before the wake. (A pick that
   * lost its overlap check takes its object back with its claim still there: waking the waiting claims
   * for that would make them pick again, and again.)
   */
  released?: boolean;
}

export interface TallyResult {
  /** Values may have been freed (or the pool is new or its spec changed): waiting claims may fit now. */
  freed: boolean;
  /** A candidate is free. */
  available: boolean;
}

/** How often a conditional write is retried after another write to the same item came first. */
const WRITE_ATTEMPTS = 25;
/** How long every instance spreads its searches after the stream sees an allocation made after a race. */
const POOL_CONTENTION_MS = 10_000;
/** Groups the hint may be moved over in one batch; the next batch goes on from there. */
const HINT_GROUPS = 4;
const GROUP_SIZE = 1n << GROUP_BITS;

type Touched = Map<string, { ref: GroupRef; summary: GroupSummary; mine: Set<string> }>;

/** A group's id among a pool's groups (the key of `Known.groups`). */
export const refId = (ref: GroupRef) => `${ref.family ?? 0}:${ref.group.toString(16)}`;

/**
 * What the stream function already read of a pool, consistently, at the start of its batch: the first
 * attempt of each conditional write goes from there instead of reading again (a write that finds the item
 * changed meanwhile reads it again, as always). A pool the batch found missing is not known: the counts
 * step reads it again (applyMarkers).
 */
export interface Known {
  pool?: Stored<PoolRecord>;
  groups?: ReadonlyMap<string, GroupSummary>;
}

/** The groups a batch's slot changes of one pool touch (for the batch's reads). */
export function groupsOfChanges(changes: readonly SlotChange[]): GroupRef[] {
  const refs = new Map<string, GroupRef>();
  for (const change of splitByGroup(changes)) {
    const ref = { family: change.family, group: change.slot >> GROUP_BITS };
    refs.set(refId(ref), ref);
  }
  return [...refs.values()];
}

/** A prefix of a pool of a range of lengths changes every group its run touches: one change a group. */
function splitByGroup(changes: readonly SlotChange[]): SlotChange[] {
  return changes.flatMap((change) =>
    change.run
      ? groupsOfRun(change.run.first, change.run.span).map(({ slot }) => ({ ...change, slot }))
      : [change],
  );
}

/** The ids a change's markers may have, in a group: its own and those of the records it coalesces. */
function markersOf(change: SlotChange, ref: GroupRef): string[] {
  const ids = [change.record, ...(change.also ?? [])];
  if (!change.run) return ids.map(markerId);
  const group = ref.group.toString(16);
  return ids.flatMap((id) => [markerId(`${id}#${group}#+`), markerId(`${id}#${group}#-`)]);
}

/** A record's marker id: short, and the same for every delivery of the record. */
export function markerId(record: string): string {
  return createHash('sha256').update(record).digest('base64url').slice(0, 12);
}

/**
 * Applies a batch's slot changes of one pool (in record order) to its group summaries and its counts;
 * with `recount`, recounts the pool from its summaries instead (a new pool, a spec change). 'no pool':
 * the pool does not exist (the changes stay on the summaries, for its first recount).
 */
export async function tallyPool(
  ctx: ClaimContext,
  id: PoolId,
  changes: readonly SlotChange[],
  options: { recount?: boolean } = {},
  known: Known = {},
): Promise<TallyResult | 'no pool'> {
  const byGroup = new Map<string, { ref: GroupRef; changes: SlotChange[] }>();
  for (const change of splitByGroup(changes)) {
    const ref = { family: change.family, group: change.slot >> GROUP_BITS };
    const entry = byGroup.get(refId(ref)) ?? { ref, changes: [] };
    entry.changes.push(change);
    byGroup.set(refId(ref), entry);
  }
  const touched: Touched = new Map();
  // What the counts held when the batch read the pool: markers among them are counted, for good.
  const counted = known.pool?.t === 'pool' ? known.pool.counts?.applied : undefined;
  const dropped = new Set<string>();
  // Groups are items of their own: written side by side.
  await Promise.all(
    [...byGroup.values()].map(async ({ ref, changes: inGroup }) => {
      const group = known.groups?.get(refId(ref));
      const { summary, mine, drops } = await recordInParts(ctx, id, ref, inGroup, group, counted);
      for (const marker of drops) dropped.add(marker);
      // A write lists its group first; markers on a summary not noted as listed are from before that
      // order (the protocol listed after its write), left by an attempt that died.
      if (!summary.listed && mine.size > 0) await ctx.table.summaries.listGroup(id, ref);
      touched.set(refId(ref), { ref, summary, mine });
    }),
  );

  // A slot that ends free may have been taken and freed within the batch (its object's INSERT and REMOVE
  // coalesced), leaving no marker: the counts still get a new epoch, or a handler that took the value
  // would go on searching past it (search-memory.ts frontiers, prefix-search.ts recent runs), and it
  // wakes the waiting claims. In a pool of a range of prefix lengths a removal wakes them only when the
  // object was given back (`released`); any removal there still moves the epoch.
  const removal = changes.some((change) => !change.present && (change.run === undefined || change.released));
  const forget = changes.some((change) => !change.present);
  const outcome = options.recount
    ? await recount(ctx, id, dropped)
    : await applyMarkers(ctx, id, touched, known, { removal, forget }, dropped);
  if (!outcome) return 'no pool';
  return { freed: outcome.freed, available: outcome.available };
}

/**
 * Steps 0 and A in writes of at most MARKERS_PER_WRITE changes (a stream batch needs one; a bulk refresh,
 * such as a fill's, several): each write still carries its bits and their markers together.
 */
async function recordInParts(
  ctx: ClaimContext,
  id: PoolId,
  ref: GroupRef,
  changes: readonly SlotChange[],
  known?: GroupSummary,
  counted?: Readonly<Record<string, number>>,
): Promise<{ summary: GroupSummary; mine: Set<string>; drops: Set<string> }> {
  const mine = new Set<string>();
  const drops = new Set<string>();
  let summary: GroupSummary | undefined = known;
  for (let start = 0; start < changes.length || start === 0; start += MARKERS_PER_WRITE) {
    const part = changes.slice(start, start + MARKERS_PER_WRITE);
    const written = await recordChanges(ctx, id, ref, part, summary, counted);
    for (const marker of written.mine) mine.add(marker);
    for (const marker of written.drops) drops.add(marker);
    // Each part reads the group afresh, so the last one's summary holds every part's markers.
    summary = written.summary;
  }
  return { summary: summary!, mine, drops };
}

/**
 * Steps 0 and A for one group: flips the bits the changes flip and leaves a marker for each, and takes
 * away the markers `counted` (the counts as the batch read them) holds. `known`: the group as last read
 * (the batch's read, or the previous part's write), for the first attempt.
 */
async function recordChanges(
  ctx: ClaimContext,
  id: PoolId,
  ref: GroupRef,
  changes: readonly SlotChange[],
  known?: GroupSummary,
  counted?: Readonly<Record<string, number>>,
): Promise<{ summary: GroupSummary; mine: Set<string>; drops: Set<string> }> {
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    if (attempt > 0) await backOff(attempt);
    const summary = attempt === 0 && known ? copyOf(known) : await ctx.table.summaries.readGroup(id, ref);
    let bits: Uint8Array = summary.bits.slice();
    const holds = summary.holds.slice();
    const quarantines = summary.quarantines.slice();
    const members = new Set(summary.members);
    const mine = new Set<string>();
    const markers: { id: string; entries: MarkerEntry[] }[] = [];
    for (const change of changes) {
      // A run's record touches several groups: a marker for each. And it names its direction: a record
      // delivered again after its object went removes it (when its REMOVE is yet to come), and that
      // change must not share the id of the one that added it, which the counts may still hold.
      const marker = markerId(
        change.run
          ? `${change.record}#${ref.group.toString(16)}#${change.present ? '+' : '-'}`
          : change.record,
      );
      // An attempt that died after step A left markers: they are this batch's (their flips are in the
      // bits already), and what is left to flip is from there to the slot as it is now.
      const left = markersOf(change, ref).filter((id) => summary.pending.has(id));
      for (const id of left) mine.add(id);
      if (left.includes(marker)) continue;
      if (change.run) {
        const { member } = change.run;
        if (change.present === members.has(member)) continue; // applied already, or changes nothing
        if (change.present) members.add(member);
        else members.delete(member);
        const after = bitmapsOfMembers(members, ref.group, bits.length);
        const counted = countedIn(member, ref.group) ? (change.present ? 1 : -1) : 0;
        markers.push({ id: marker, entries: flippedRuns(bits, after.bits, change.raced === true, counted) });
        bits = after.bits;
        holds.set(after.holds);
        continue;
      }
      const offset = Number(change.slot & (GROUP_SIZE - 1n));
      const was = {
        held: isHeld(bits, offset),
        hold: isHeld(holds, offset),
        quarantined: isHeld(quarantines, offset),
      };
      const isHold = change.present && change.hold === true;
      const isQuarantined = isHold && change.quarantined === true;
      if (change.present === was.held && isHold === was.hold && isQuarantined === was.quarantined) continue; // applied already, or changes nothing
      setHeld(bits, offset, change.present);
      setHeld(holds, offset, isHold);
      setHeld(quarantines, offset, isQuarantined);
      markers.push({ id: marker, entries: [markerEntry(offset, change, was)] });
    }
    if (markers.length === 0) return { summary, mine, drops: new Set() };
    // An id leaves the counts only after its marker left the summary, and the write is conditional on
    // the summary's version: a marker still here whose id the counts held when read is counted still.
    const drops = [...summary.pending.keys()]
      .filter((marker) => counted?.[marker] !== undefined)
      .slice(0, MARKERS_PER_WRITE);
    const ranged = changes.some((change) => change.run !== undefined);
    // Listed before its markers can reach the counts, so a recount never misses a counted group; and
    // before this write, which then notes it on the summary (where the sweep and later batches look).
    if (!summary.listed) await ctx.table.summaries.listGroup(id, ref);
    if (
      await ctx.table.summaries.writeGroup(
        id,
        ref,
        bits,
        summary.version,
        markers,
        { holds, quarantines },
        ranged ? members : undefined,
        { drop: drops, listed: true },
      )
    ) {
      for (const marker of drops) summary.pending.delete(marker);
      for (const marker of markers) {
        mine.add(marker.id);
        summary.pending.set(marker.id, marker.entries);
      }
      const version = (summary.version ?? 0) + 1;
      return {
        summary: { ...summary, bits, holds, quarantines, members, version, listed: true },
        mine,
        drops: new Set(drops),
      };
    }
  }
  throw new Error(`summary of ${id.kind} ${id.name} kept changing; the batch is retried`);
}

function copyOf(summary: GroupSummary): GroupSummary {
  return {
    ...summary,
    bits: summary.bits.slice(),
    holds: summary.holds.slice(),
    quarantines: summary.quarantines.slice(),
    pending: new Map(summary.pending),
    members: new Set(summary.members),
  };
}

/**
 * A pause before writing again after another writer came first (the concurrent batches of a shard write
 * one pool's counts): short and jittered, so the writers drift apart without waiting long.
 */
function backOff(attempt: number): Promise<void> {
  const ms = Math.random() * Math.min(4 * attempt, 40);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A slot's change as the counts see it: held (by anything) ±1, allocation objects ±1, which differ when a
 * name hold or quarantine comes or goes (it holds the slot, but is no allocation object of the pool), and
 * quarantines ±1.
 */
function markerEntry(
  offset: number,
  change: SlotChange,
  was: { held: boolean; hold: boolean; quarantined: boolean },
): MarkerEntry {
  const hold = change.present && change.hold === true;
  const object = (held: boolean, isHold: boolean) => (held && !isHold ? 1 : 0);
  const objects = (object(change.present, hold) - object(was.held, was.hold)) as 1 | 0 | -1;
  const quarantined = ((hold && change.quarantined === true ? 1 : 0) - (was.quarantined ? 1 : 0)) as
    1 | 0 | -1;
  const delta = ((change.present ? 1 : 0) - (was.held ? 1 : 0)) as 1 | 0 | -1;
  const raced = change.present && change.raced ? 1 : 0;
  if (quarantined !== 0) return [offset, delta, raced, 1, objects, quarantined];
  return objects === delta
    ? delta > 0
      ? [offset, 1, raced]
      : [offset, delta]
    : [offset, delta, raced, 1, objects];
}

/**
 * Step B: adds this batch's markers that the counts do not hold yet. `unmarked`: the batch changed a slot
 * into no marker (a coalesced removal): `forget` writes the counts all the same, with a new epoch;
 * `removal` also counts as a value freed (the waiting claims are woken).
 */
async function applyMarkers(
  ctx: ClaimContext,
  id: PoolId,
  touched: Touched,
  known: Known = {},
  unmarked: { removal: boolean; forget: boolean } = { removal: false, forget: false },
  dropped: ReadonlySet<string> = new Set(),
): Promise<TallyResult | undefined> {
  const markers = [...touched.values()].flatMap(({ ref, summary, mine }) =>
    [...mine].map((marker) => ({ marker, ref, entries: summary.pending.get(marker) ?? [] })),
  );
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    if (attempt > 0) await backOff(attempt);
    // A pool the batch found missing is read again: it may have been made since, and its first recount
    // may have read the summaries before step A put this batch's markers there.
    const pool = attempt === 0 && known.pool ? known.pool : await ctx.table.get<PoolRecord>(poolKeyOf(id));
    // No pool (yet), read after step A: the markers stay on the summaries; the pool's first recount,
    // which reads them after this, takes them.
    if (pool?.t !== 'pool') return undefined;
    const previous = pool.counts;
    const fresh = markers.filter(({ marker }) => previous?.applied?.[marker] === undefined);
    if (fresh.length === 0 && !unmarked.forget)
      return { freed: false, available: previous?.available ?? true };
    const space = spaceOf(pool);
    const applied = appliedWith(
      previous?.applied,
      fresh.map(({ marker }) => marker),
      dropped,
    );
    let allocated = previous?.allocated ?? 0;
    let held = BigInt(previous?.held ?? '0');
    let quarantined = BigInt(previous?.quarantined ?? '0');
    let hint =
      previous && previous.generation === pool.metadata.generation ? BigInt(previous.searchFrom) : 0n;
    let freed = unmarked.removal;
    let took = false;
    let raced = false;
    for (const { ref, entries } of fresh) {
      // One slot and one object (or a name hold's change: held, objects 0 or −1; a hold's change only:
      // delta 0), or (a pool of a range of prefix lengths) a run and a count of objects.
      for (const [offset, delta, racedEntry, span = 1, objects = delta, quarantine = 0] of entries) {
        allocated += objects;
        raced ||= racedEntry === 1;
        if (
          quarantine !== 0 &&
          candidateOrdinal(space, ref.family, (ref.group << GROUP_BITS) + BigInt(offset)) !== undefined
        )
          quarantined += BigInt(quarantine);
        if (delta === 0) continue;
        for (let i = 0; i < span; i++) {
          const slot = (ref.group << GROUP_BITS) + BigInt(offset + i);
          const ordinal = candidateOrdinal(space, ref.family, slot);
          if (ordinal === undefined) continue;
          held += BigInt(delta);
          if (delta < 0) {
            freed = true;
            if (ordinal < hint) hint = ordinal;
          } else if (ordinal >= hint) took = true;
        }
      }
    }
    if (took) hint = await advanceHint(ctx, id, space, hint, touched);
    const counts = nextCounts(
      pool,
      previous,
      { allocated, held, quarantined, searchFrom: hint, freed: freed || unmarked.forget, applied },
      space,
    );
    if (raced) counts.contendedUntil = new Date(Date.now() + POOL_CONTENTION_MS).toISOString();
    if (await ctx.table.summaries.writeTally(poolKeyOf(id), pool.metadata.uid, previous?.revision, counts)) {
      return { freed, available: counts.available ?? true };
    }
  }
  throw new Error(`counts of ${id.kind} ${id.name} kept changing; the batch is retried`);
}

/**
 * The first candidate at or after `from` that the summaries show free, looking at no more than
 * HINT_GROUPS groups (the hint only has to be at or below the first free candidate).
 */
async function advanceHint(
  ctx: ClaimContext,
  id: PoolId,
  space: PoolSpace,
  from: bigint,
  known: Touched,
): Promise<bigint> {
  const family = familyOf(space);
  let groups = 0;
  let ordinal = from;
  for (const run of runsFrom(space.segments, from)) {
    let cursor = run.first;
    while (cursor <= run.last) {
      if (groups++ >= HINT_GROUPS) return ordinal;
      const ref = { family, group: cursor >> GROUP_BITS };
      const summary = known.get(refId(ref))?.summary ?? (await ctx.table.summaries.readGroup(id, ref));
      const last = run.last < (cursor | (GROUP_SIZE - 1n)) ? run.last : cursor | (GROUP_SIZE - 1n);
      for (let slot = cursor; slot <= last; slot++, ordinal++) {
        if (!isHeld(summary.bits, Number(slot & (GROUP_SIZE - 1n)))) return ordinal;
      }
      cursor = last + 1n;
    }
  }
  return ordinal;
}

/**
 * Recounts the pool from the bits of the groups its directory lists (this batch's groups among them:
 * they were listed before). Every marker seen is taken as counted (its bit is), and stays on its summary
 * until the group's next write takes it away.
 */
async function recount(
  ctx: ClaimContext,
  id: PoolId,
  dropped: ReadonlySet<string> = new Set(),
): Promise<TallyResult | undefined> {
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    if (attempt > 0) await backOff(attempt);
    const pool = await ctx.table.get<PoolRecord>(poolKeyOf(id));
    if (pool?.t !== 'pool') return undefined;
    const space = spaceOf(pool);
    const previous = pool.counts;
    const { allocated, heldOrdinals, quarantined, seen } = await countSummaries(ctx, id, space);
    const applied = appliedWith(previous?.applied, seen, dropped);
    const counts = nextCounts(
      pool,
      previous,
      {
        allocated,
        held: BigInt(heldOrdinals.length),
        quarantined: BigInt(quarantined),
        searchFrom: firstFree(heldOrdinals, 0n),
        freed: true,
        applied,
      },
      space,
    );
    if (await ctx.table.summaries.writeTally(poolKeyOf(id), pool.metadata.uid, previous?.revision, counts)) {
      return { freed: true, available: counts.available ?? true };
    }
  }
  throw new Error(`counts of ${id.kind} ${id.name} kept changing; the batch is retried`);
}

/**
 * An id stays in `applied` until the batch that takes its marker away drops it (steps A and B). One left
 * behind (the function died between them, or the group was not written again) is dropped once no delivery
 * of its record can come: a stream keeps records for 24 hours.
 */
const APPLIED_KEPT_SECONDS = 25 * 60 * 60;

/**
 * `applied` with `added` (applied now, in epoch seconds: a number is the least a pool item, which every
 * claim reads, can carry per id) and without ids kept past APPLIED_KEPT_SECONDS.
 */
function appliedWith(
  previous: Record<string, number> | undefined,
  added: Iterable<string>,
  dropped: ReadonlySet<string> = new Set(),
): Record<string, number> {
  const now = Math.floor(Date.now() / 1000);
  const applied: Record<string, number> = {};
  for (const [marker, at] of Object.entries(previous ?? {})) {
    if (dropped.has(marker)) continue;
    if (!(typeof at === 'number' && now - at > APPLIED_KEPT_SECONDS)) applied[marker] = at;
  }
  for (const marker of added) applied[marker] ??= now;
  return applied;
}

/** The first position at or after `from` that is not in `sortedHeld` (ascending). */
export function firstFree(sortedHeld: readonly bigint[], from: bigint): bigint {
  let free = from;
  for (const ordinal of sortedHeld) {
    if (ordinal === free) free++;
    else if (ordinal > free) break;
  }
  return free;
}

/**
 * The counts to write. The epoch (what a claim handler's search memory is keyed on) changes only when
 * values may have been freed or the spec changed, so the memory survives tallies that only saw claims.
 */
function nextCounts(
  pool: PoolRecord,
  previous: PoolCounts | undefined,
  tally: {
    allocated: number;
    held: bigint;
    quarantined: bigint;
    searchFrom: bigint;
    freed: boolean;
    applied: Record<string, number>;
  },
  space: PoolSpace,
): PoolCounts {
  const now = timestamp();
  const available = tally.held < space.total;
  const freed =
    tally.freed ||
    previous?.generation !== pool.metadata.generation ||
    BigInt(previous.searchFrom) > tally.searchFrom;
  return {
    allocated: tally.allocated,
    held: tally.held.toString(),
    ...(tally.quarantined !== 0n && { quarantined: tally.quarantined.toString() }),
    searchFrom: tally.searchFrom.toString(),
    generation: pool.metadata.generation,
    updatedAt: now,
    revision: randomUUID(),
    epoch: !freed && previous?.epoch ? previous.epoch : randomUUID(),
    applied: tally.applied,
    ...(previous?.contendedUntil && Date.parse(previous.contendedUntil) > Date.now()
      ? { contendedUntil: previous.contendedUntil }
      : {}),
    available,
    availableSince:
      previous?.available === available && previous.availableSince ? previous.availableSince : now,
  };
}
