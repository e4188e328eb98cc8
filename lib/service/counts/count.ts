/**
 * What a pool's group summaries hold, counted from their bitmaps (service/counts/tally.ts keeps them): the
 * recount's reading, and the repair sweep's, which compares it with the pool's counts.
 */
import type { ClaimContext } from '../context.ts';
import { ordinalOf } from '../../domain/values/candidates.ts';
import { familyOf, type PoolSpace } from '../../domain/values/values.ts';
import { GROUP_BITS, type PoolId } from '../../store/keys.ts';
import { countedIn } from './runs.ts';

/** The slot's position in candidate order, when it is a candidate of the pool's current spec. */
export function candidateOrdinal(
  space: PoolSpace,
  family: 4 | 6 | undefined,
  slot: bigint,
): bigint | undefined {
  return family === familyOf(space) ? ordinalOf(space.segments, slot) : undefined;
}

/**
 * What a pool's listed group summaries hold: every held slot (`allocated`), the candidate positions of
 * those that are candidates of `space` (ascending), and every marker they carry. The recount's reading,
 * shared with the repair sweep, which compares it with the pool's counts.
 */
export async function countSummaries(
  ctx: ClaimContext,
  id: PoolId,
  space: PoolSpace,
): Promise<{ allocated: number; heldOrdinals: bigint[]; quarantined: number; seen: Set<string> }> {
  const seen = new Set<string>();
  const heldOrdinals: bigint[] = [];
  let allocated = 0;
  let quarantined = 0;
  for await (const ref of ctx.table.summaries.listedGroups(id)) {
    const summary = await ctx.table.summaries.readGroup(id, ref);
    for (const marker of summary.pending.keys()) seen.add(marker);
    // A pool of a range of prefix lengths counts its objects (members), not its bits.
    const ranged = summary.members.size > 0;
    for (const member of summary.members) if (countedIn(member, ref.group)) allocated++;
    summary.bits.forEach((byte, index) => {
      for (let bit = 0; bit < 8; bit++) {
        if (((byte >> bit) & 1) === 0) continue;
        // A name hold keeps the value from being handed out, but is no allocation object of the pool.
        if (!ranged && ((summary.holds[index]! >> bit) & 1) === 0) allocated++;
        const slot = (ref.group << GROUP_BITS) + BigInt(index * 8 + bit);
        const ordinal = candidateOrdinal(space, ref.family, slot);
        if (ordinal === undefined) continue;
        heldOrdinals.push(ordinal);
        if (((summary.quarantines[index]! >> bit) & 1) === 1) quarantined++;
      }
    });
  }
  heldOrdinals.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { allocated, heldOrdinals, quarantined, seen };
}
