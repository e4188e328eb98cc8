/**
 * The repair sweep's checks of an IPPrefixPool of a range of prefix lengths (service/repair/pools.ts does
 * the rest, as for any pool: bindings, counts, waiting claims). Its group summaries are member runs
 * (service/counts/runs.ts): an allocation object is a member of every group its prefix's run touches, a
 * name hold of a prefix the pool hands out is a hold member, and the bitmaps (`b`, `h`) are the union of
 * the members' runs. So the sweep checks members, not bits:
 *
 *   found                                           fixed by
 *   a user's object left unchecked past its         checking it for overlap on its handler's behalf:
 *     handler's deadline (its record lost)          confirmed, or withdrawn (uncheckedObject)
 *   an object (older than the grace period) that    adding its member (and listing the group)
 *     is not a member of a group its run touches
 *   a member whose object (or hold) is gone         dropping it
 *   a standing hold whose member is missing         adding it
 *   bitmaps that are not the union of the members   writing them from the members (a bit left by
 *                                                   a hold recorded before the pool existed)
 *
 * Every fix re-reads the summary and what the member stands for (strongly), and writes conditionally on
 * the summary's version, as the pool-of-one-length fixes do; the counts are then recounted by
 * checkCounts, which reads members (counts/count.ts countSummaries).
 */
import { countCandidates, ordinalOf } from '../../domain/values/candidates.ts';
import { claimSpace, prefixValueAt } from '../../domain/values/prefix-pools.ts';
import { ipPrefixValues } from '../../domain/values/ip.ts';
import { spaceOf } from '../../domain/objects/objects.ts';
import type {
  AllocationRecord,
  ClaimRecord,
  ItemKey,
  NameHoldRecord,
  PoolRecord,
} from '../../domain/objects/records.ts';
import type { ParsedValue, PoolSpace } from '../../domain/values/values.ts';
import type { GroupSummary, Stored } from '../../store/items.ts';
import { allocationKey, type GroupRef } from '../../store/keys.ts';
import { rangedAllocationKey } from '../../store/overlaps.ts';
import { layoutOf, resolvePlacement } from '../allocation/prefix-check.ts';
import { fix, keyText, spend, type Sweep } from './state.ts';
import { listGroup, olderThanGrace, readSummary, refId, type PoolWalk } from './walk.ts';
import { bitmapsOfMembers, groupsOfRun, isHoldMember, memberRun, prefixMember } from '../counts/runs.ts';

/** The member of a prefix of the pool, and the groups its run touches. */
function memberOf(space: PoolSpace, value: ParsedValue, hold: boolean) {
  const { member, first, span } = prefixMember(value, space.prefixLengths!.max, hold);
  const refs = groupsOfRun(first, span).map(({ group }) => ({ family: value.family, group }));
  return { member, refs };
}

/** One object of the pool: a member of every group its run touches (once older than the grace period). */
export async function checkRangedAllocation(
  sweep: Sweep,
  walk: PoolWalk,
  allocation: Stored<AllocationRecord>,
  value: ParsedValue,
  key: ItemKey,
): Promise<void> {
  const space = spaceOf(walk.pool);
  if (!space.fits(value)) return;
  const { member, refs } = memberOf(space, value, false);
  for (const ref of refs) {
    if (!walk.seenMembers) break;
    const members = walk.seenMembers.get(refId(ref)) ?? new Set<string>();
    members.add(member);
    walk.seenMembers.set(refId(ref), members);
  }
  if (allocation.unchecked !== undefined && Date.now() >= allocation.unchecked) {
    // A user's object whose handler died before its check for overlap, and whose record (on which the
    // stream function would check it on its behalf) was lost: checked now, confirmed or withdrawn.
    await fix(sweep, 'uncheckedObject', async () => {
      sweep.touched.add(keyText(key));
      await resolvePlacement(sweep.ctx, key, allocation, key);
      return true;
    });
    return;
  }
  if (!olderThanGrace(sweep, allocation)) return;
  for (const ref of refs) {
    const summary = await readSummary(sweep, walk, ref);
    if (!summary.members.has(member))
      await fix(sweep, 'summaryBit', () => setMember(sweep, walk, ref, member, key, true));
    else if (!summary.listed) await fix(sweep, 'summaryBit', () => listGroup(sweep, walk, ref));
  }
}

/** Marks read per pool (each costs one more read, of its hold). */
const MARKS_LIMIT = 1000;

/**
 * The pool's standing holds (by their marks, store/overlaps.ts) as hold members; then each listed group's
 * members against what they stand for, and its bitmaps against its members.
 */
export async function checkRangedGroups(sweep: Sweep, walk: PoolWalk): Promise<void> {
  const space = spaceOf(walk.pool);
  const layout = layoutOf(space);
  spend(sweep);
  // The members of the holds that stand (pending or held); only a held one's is added when missing (a
  // pending one is its request's, or the pending-hold check's, to settle).
  const holds = new Set<string>();
  for (const mark of await sweep.ctx.table.overlaps.marks(walk.id, layout.family, MARKS_LIMIT)) {
    const value = ipPrefixValues.parse(mark.value);
    if (!value.ok || !space.fits(value.value)) continue;
    spend(sweep);
    const hold = await sweep.ctx.table.get<NameHoldRecord>(mark.hold);
    if (hold?.t !== 'hold' || hold.metadata.uid !== mark.metadata.uid) continue;
    const { member, refs } = memberOf(space, value.value, true);
    holds.add(member);
    if (hold.state !== 'held') continue;
    for (const ref of refs) {
      const summary = await readSummary(sweep, walk, ref);
      if (!summary.members.has(member))
        await fix(sweep, 'summaryBit', () => setMember(sweep, walk, ref, member, mark.hold, true));
    }
  }
  spend(sweep);
  for await (const ref of sweep.ctx.table.summaries.listedGroups(walk.id)) {
    const summary = await readSummary(sweep, walk, ref);
    const seen = walk.seenMembers?.get(refId(ref));
    for (const member of summary.members) {
      const hold = isHoldMember(member);
      if (hold ? holds.has(member) : seen?.has(member)) continue;
      const key = memberKey(walk, space, ref, member);
      if (sweep.touched.has(keyText(key))) continue; // this run deleted it: its record is the stream's
      if (!hold && !seen) {
        // Walked in part (a run cut short): the object is read.
        spend(sweep);
        if (await stands(sweep, key, false)) continue;
      }
      await fix(sweep, 'summaryBit', () => setMember(sweep, walk, ref, member, key, false));
    }
    const current = walk.summaries.get(refId(ref))!.summary;
    const expected = bitmapsOfMembers(current.members, ref.group, current.bits.length);
    if (!sameBits(current.bits, expected.bits) || !sameBits(current.holds, expected.holds))
      await fix(sweep, 'summaryBit', () => setMember(sweep, walk, ref, undefined, undefined, false));
  }
}

/** Where what a member stands for is: its object's key, or (a hold member) its hold's. */
function memberKey(walk: PoolWalk, space: PoolSpace, ref: GroupRef, member: string): ItemKey {
  const shift = Number.parseInt(member.split('+')[1] ?? '0', 10);
  const first = memberRun(member).first;
  const value = prefixValueAt(ref.family as 4 | 6, space.prefixLengths!.max - shift, first >> BigInt(shift));
  return isHoldMember(member)
    ? allocationKey(walk.id, 'IPPrefix', value)
    : rangedAllocationKey(walk.id, layoutOf(space), value);
}

/** Whether what a member stands for is there: an object at `key`, or (`hold`) a hold, held or pending. */
async function stands(sweep: Sweep, key: ItemKey, hold: boolean): Promise<boolean> {
  const item = await sweep.ctx.table.get<AllocationRecord | NameHoldRecord>(key);
  return item?.t === (hold ? 'hold' : 'alloc');
}

function sameBits(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/**
 * Adds or drops a member (`member` undefined: only writes the bitmaps from the members), if the summary
 * still disagrees and what the member stands for (read strongly: the object at `key`, or the hold)
 * confirms it; conditional on the summary's version, so a stream batch writing the group meanwhile wins
 * and this tries again on what it wrote. The bitmaps follow the members.
 */
async function setMember(
  sweep: Sweep,
  walk: PoolWalk,
  ref: GroupRef,
  member: string | undefined,
  key: ItemKey | undefined,
  present: boolean,
): Promise<boolean> {
  const { summaries } = sweep.ctx.table;
  for (let attempt = 0; attempt < 5; attempt++) {
    const summary: GroupSummary = await summaries.readGroup(walk.id, ref);
    walk.summaries.set(refId(ref), { ref, summary });
    const members = new Set(summary.members);
    if (member !== undefined) {
      // Already so, perhaps by this very write with its answer lost: its group must still be listed.
      if (members.has(member) === present)
        return present && !summary.listed ? listGroup(sweep, walk, ref) : false;
      const there = key !== undefined && (await stands(sweep, key, isHoldMember(member)));
      if (there !== present) return false;
      if (present) members.add(member);
      else members.delete(member);
    }
    const { bits, holds } = bitmapsOfMembers(members, ref.group, summary.bits.length);
    if (member === undefined && sameBits(bits, summary.bits) && sameBits(holds, summary.holds)) return false;
    if (await summaries.writeGroup(walk.id, ref, bits, summary.version, [], { holds }, members)) {
      walk.summaries.set(refId(ref), {
        ref,
        summary: { ...summary, bits, holds, members, version: (summary.version ?? 0) + 1 },
      });
      if (!summary.listed) await listGroup(sweep, walk, ref);
      return true;
    }
  }
  return false;
}

/**
 * Whether a candidate the claim may take (its value, or one of its length within its limits) has no held
 * finest slot (`held`: the pool's, from its summaries).
 */
export function couldTakeRanged(
  _pool: PoolRecord,
  space: PoolSpace,
  claim: ClaimRecord,
  held: Set<bigint>,
): boolean {
  const asked = claim.spec.value === undefined ? undefined : ipPrefixValues.parse(claim.spec.value);
  if (asked && !asked.ok) return false;
  const chosen = claimSpace(space, claim.spec.prefixLength, asked?.value);
  if ('causes' in chosen) return false;
  const restricted = chosen.space.claimSegments(claim.spec.within, claim.spec.reserved);
  if ('causes' in restricted) return false;
  const shift = BigInt(space.prefixLengths!.max - chosen.length!);
  // The candidates of the claim's length that some held slot lies in.
  const taken = new Set<bigint>();
  for (const slot of held)
    if (ordinalOf(restricted.segments, slot >> shift) !== undefined) taken.add(slot >> shift);
  if (asked) {
    const value = asked.value;
    if (!chosen.space.fits(value) || ordinalOf(restricted.segments, value.slot) === undefined) return false;
    return !taken.has(value.slot);
  }
  return BigInt(taken.size) < countCandidates(restricted.segments);
}
