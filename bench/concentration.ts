/**
 * Write concentration: in each one-second window, the share of a key space's writes (the table, each
 * index) that its busiest partition-key value receives, and the per-pool ceiling that implies when one
 * partition-key value takes at most 1,000 writes a second.
 */
import type { KeySpace, RequestRecord } from './measure.ts';
import { round } from './measure.ts';

/** DynamoDB's write limit for one partition (and so for one partition-key value), in writes/s of ≤ 1 KB. */
export const PARTITION_WRITES_PER_SECOND = 1000;
/** Windows with fewer writes than this (in the key space) say little and are ignored. */
export const MIN_WINDOW_WRITES = 100;

export interface SpaceConcentration {
  space: KeySpace;
  /** Writes to this key space, and per claim. */
  writes: number;
  writesPerClaim: number;
  /** Writes whose key the request does not show (updates/deletes of allocation items); not in the shares. */
  unattributed: number;
  windows: number;
  windowsIgnored: number;
  /** The largest share over the windows considered; null when no window had enough writes. */
  busiestShare: number | null;
  busiestKey?: string;
  busiestWindow?: { second: number; writes: number; busiestKeyWrites: number };
  /** 1000 ÷ (busiestShare × writesPerClaim): claims/s at which the busiest key reaches 1,000 writes/s. */
  ceilingClaimsPerSecond: number | null;
  /** The same share counting only writes that succeeded (failed conditional puts left out). */
  busiestShareSucceededOnly: number | null;
  /** The busiest key's share of the whole run's writes (context only: the target is per window). */
  wholeRunShare: number | null;
}

interface Busiest {
  busiestShare: number | null;
  busiestKey?: string;
  busiestWindow?: { second: number; writes: number; busiestKeyWrites: number };
  windows: number;
  windowsIgnored: number;
}

/** The largest share of a window's writes that one key took, over the windows with enough writes. */
function busiest(
  records: readonly RequestRecord[],
  space: KeySpace,
  start: number,
  include: (record: RequestRecord) => boolean,
): Busiest {
  const windows = new Map<number, Map<string, number>>();
  for (const record of records) {
    if (!include(record)) continue;
    for (const write of record.writes) {
      if (write.space !== space || write.key === undefined) continue;
      const second = Math.floor((record.at - start) / 1000);
      const keys = windows.get(second) ?? new Map<string, number>();
      keys.set(write.key, (keys.get(write.key) ?? 0) + 1);
      windows.set(second, keys);
    }
  }
  let ignored = 0;
  let best: Busiest = { busiestShare: null, windows: windows.size, windowsIgnored: 0 };
  for (const [second, keys] of [...windows].sort((a, b) => a[0] - b[0])) {
    const total = [...keys.values()].reduce((sum, n) => sum + n, 0);
    if (total < MIN_WINDOW_WRITES) {
      ignored++;
      continue;
    }
    const [key, top] = [...keys].reduce((a, b) => (b[1] > a[1] ? b : a));
    const share = top / total;
    if (best.busiestShare === null || share > best.busiestShare) {
      best = {
        ...best,
        busiestShare: round(share, 4),
        busiestKey: key,
        busiestWindow: { second, writes: total, busiestKeyWrites: top },
      };
    }
  }
  return { ...best, windowsIgnored: ignored };
}

export function concentration(
  records: readonly RequestRecord[],
  claims: number,
  start: number,
): SpaceConcentration[] {
  const spaces: KeySpace[] = ['table', 'allocations', 'waiting'];
  return spaces.map((space) => {
    let writes = 0;
    let unattributed = 0;
    const perKey = new Map<string, number>();
    for (const record of records)
      for (const write of record.writes) {
        if (write.space !== space) continue;
        writes++;
        if (write.key === undefined) unattributed++;
        else perKey.set(write.key, (perKey.get(write.key) ?? 0) + 1);
      }
    const top = Math.max(0, ...perKey.values());
    const all = busiest(records, space, start, () => true);
    const succeeded = busiest(records, space, start, (record) => !record.conditionalFailure);
    const writesPerClaim = claims > 0 ? writes / claims : 0;
    const ceiling =
      all.busiestShare === null || writesPerClaim === 0
        ? null
        : Math.round(PARTITION_WRITES_PER_SECOND / (all.busiestShare * writesPerClaim));
    return {
      space,
      writes,
      writesPerClaim: round(writesPerClaim, 3),
      unattributed,
      ...all,
      ceilingClaimsPerSecond: ceiling,
      busiestShareSucceededOnly: succeeded.busiestShare,
      wholeRunShare: writes - unattributed > 0 ? round(top / (writes - unattributed), 4) : null,
    };
  });
}
