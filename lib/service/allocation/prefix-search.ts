/**
 * How a claim on an IPPrefixPool of a range of lengths gets its value, and the preview of that pool.
 * Its candidates are the aligned prefixes of the claim's length (`prefixLength`, else its `value`'s,
 * else the pool's `default`); the group summaries, bitmaps of the pool's finest slots, show which runs
 * look free (domain/search/free-runs.ts), and each pick is placed by W then R (prefix-check.ts). A pick that
 * loses says what holds it, and the search skips that object's whole run, so a summary that lags
 * behind a large allocation costs one lost pick, not one per prefix inside it.
 *
 * decide.ts calls this with the pieces of a claim's decision it owns (`RangedParts`), so the two do
 * not import each other.
 */
import { claimNamespaceOf } from '../../domain/objects/sharing.ts';
import { runsFrom, ordinalOf, slotAt, type Segment } from '../../domain/values/candidates.ts';
import {
  freeCandidatesInGroup,
  groupsOfCandidate,
  lastCandidateOfGroup,
  RUN_GROUP_BITS,
} from '../../domain/search/free-runs.ts';
import { claimSpace, finestRun, prefixValueAt } from '../../domain/values/prefix-pools.ts';
import type { AllocationRecord, ClaimRecord, ItemKey, PoolRecord } from '../../domain/objects/records.ts';
import { ipPrefixValues } from '../../domain/values/ip.ts';
import type { ParsedValue, PoolSpace } from '../../domain/values/values.ts';
import { isHeld } from '../../store/items.ts';
import type { PoolId } from '../../store/keys.ts';
import type { ClaimContext } from '../context.ts';
import { rangedAllocationKey } from '../../store/overlaps.ts';
import { layoutOf, placeChecked, recheck } from './prefix-check.ts';

/** What decide.ts lends a ranged decision: its outcomes, its allocation record and its search memory. */
export interface RangedParts<Outcome> {
  now: string;
  waiting(reason: 'PoolExhausted' | 'ValueTaken', message: string): Outcome;
  allocated(record: AllocationRecord, key: ItemKey): Outcome;
  bind(key: ItemKey, holder: AllocationRecord): Promise<Outcome | undefined>;
  bindable(holder: AllocationRecord): boolean;
  newAllocation(value: ParsedValue): AllocationRecord;
  /** Before each put: a shared pool's place taken (it throws when the quota refuses it). */
  beforePut?(): Promise<void>;
  summarised: boolean;
  /** The pool's hint: the lowest position, in finest slots, that may be free. */
  hint: bigint;
  /** Past what this instance found held among the candidates of `length` (as for a pool of one length). */
  frontier(length: number): bigint | undefined;
  /** The pool's counts epoch (new once values may have been freed); undefined before its first count. */
  epoch: string | undefined;
  rememberFrontier(length: number, after: bigint): void;
  contended: boolean;
  markContended(): void;
}

/** Lost picks that show other callers claiming here now (one may be a summary that lags). */
const RACING_EVIDENCE = 1;
/** Picks after which a search stops trusting what it reads and calls the pool exhausted for now. */
const MAX_LOST_PICKS = 64;
/** Free candidates, lowest first, that a contended search picks among at random. */
const SPREAD_WINDOW = 64;
/**
 * Groups a contended search chooses its first among, at random, so concurrent callers spread out. With
 * 32 callers and summaries a few dozen claims behind, 64 left one claim in 100 losing twice (15 requests
 * or more); 128 halves that (bench/prefix-lengths.ts). Wider still would scatter small prefixes over
 * more of the pool, leaving less room for large ones.
 */
const SPREAD_GROUPS = 128;

export async function decideRanged<Outcome>(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  space: PoolSpace,
  parts: RangedParts<Outcome>,
): Promise<{ outcome: Outcome; collisions: number }> {
  const ref = claim.spec.poolRef;
  // The pool's namespace: a claim of another namespace (a shared pool) is placed among its objects.
  const poolId: PoolId = { namespace: pool.metadata.namespace, kind: pool.kind, name: pool.metadata.name };
  const layout = layoutOf(space);
  const asked = claim.spec.value === undefined ? undefined : ipPrefixValues.parse(claim.spec.value);
  const chosen = claimSpace(space, claim.spec.prefixLength, asked?.ok ? asked.value : undefined);
  const restricted =
    'causes' in chosen ? chosen : chosen.space.claimSegments(claim.spec.within, claim.spec.reserved);
  if ('causes' in restricted || 'causes' in chosen) {
    const causes = 'causes' in restricted ? restricted.causes : [];
    const message = causes.map((cause) => `${cause.field}: ${cause.message}`).join('; ');
    return { outcome: parts.waiting('PoolExhausted', `cannot be met: ${message}`), collisions: 0 };
  }
  const length = chosen.length!;
  const lengthSpace = chosen.space;
  let placed: { record: AllocationRecord; key: ItemKey } | undefined;
  const place = async (value: ParsedValue, raced: boolean) => {
    await parts.beforePut?.();
    const record = parts.newAllocation(value);
    if (raced) record.raced = true;
    const result = await placeChecked(ctx, poolId, layout, value, record, 'ipprefixes');
    if (result.kind === 'placed') placed = { record: { ...record, finest: layout.max }, key: result.key };
    return result;
  };

  if (asked !== undefined) {
    if (
      !asked.ok ||
      !lengthSpace.fits(asked.value) ||
      ordinalOf(restricted.segments, asked.value.slot) === undefined
    ) {
      const shown = asked.ok ? asked.value.value : String(claim.spec.value);
      const message = `${shown} is not a candidate of ${ref.name} for this claim`;
      return { outcome: parts.waiting('PoolExhausted', message), collisions: 0 };
    }
    const result = await place(asked.value, false);
    if (result.kind === 'placed')
      return { outcome: parts.allocated(placed!.record, placed!.key), collisions: 0 };
    const found = result.kind === 'taken' ? await ctx.table.get<AllocationRecord>(result.key) : result.other;
    // An object, or a name hold's mark (prefix-check.ts): then no object is in the way, a name is.
    const holder = found?.t === 'heldPrefix' ? undefined : found;
    // Its own object, put by an attempt that died before its check: checked now, then bound.
    const own = holder?.origin === 'claim' && holder.spec.claimRef?.uid === claim.metadata.uid;
    const checked = !own || (await recheck(ctx, poolId, layout, asked.value, result.key, holder!));
    if (result.kind === 'taken' && holder && checked && parts.bindable(holder)) {
      const outcome = await parts.bind(result.key, holder);
      if (outcome) return { outcome, collisions: 0 };
    }
    const verb = result.kind === 'taken' ? 'is held by' : 'overlaps';
    // Another namespace's claim is not named to this one (api.md, "Pools shared with other namespaces").
    const by = !holder?.spec.claimRef?.name
      ? ''
      : claimNamespaceOf(holder) === claim.metadata.namespace
        ? ` (claim ${holder.spec.claimRef.name})`
        : ' (a claim of another namespace)';
    const message = `${asked.value.value} ${verb} ${found?.metadata.name ?? 'another allocation object'}${by}`;
    return { outcome: parts.waiting('ValueTaken', message), collisions: 1 };
  }

  const unrestricted = claim.spec.within === undefined && claim.spec.reserved === undefined;
  const spread = parts.contended && unrestricted;
  const hinted = unrestricted ? startOrdinal(space, restricted.segments, length, parts.hint) : 0n;
  const frontier = unrestricted && !spread ? parts.frontier(length) : undefined;
  const from = frontier !== undefined && frontier > hinted ? frontier : hinted;
  let collisions = 0;
  let raced = false;
  const recent = recentRunsOf(ctx, pool, parts.epoch);
  const search = (start: bigint) =>
    searchRuns(ctx, poolId, space, length, restricted.segments, start, {
      known: recent,
      summarised: parts.summarised,
      random: ctx.random ?? Math.random,
      spread,
      pick: async (value) => {
        const result = await place(value, raced);
        if (result.kind === 'placed') return { placed: true };
        collisions++;
        raced = collisions >= RACING_EVIDENCE;
        return { placed: false, held: result.kind === 'overlaps' ? result.other : undefined };
      },
    });
  // What this instance found held below its frontier may have been freed since, the stream not yet
  // having said so (a new epoch): once more from the hint before the claim waits.
  const found = (await search(from)) || (from > hinted && (await search(hinted)));
  if (raced) parts.markContended();
  if (found && placed) {
    const value = ipPrefixValues.parse(placed.record.value);
    if (value.ok) rememberRun(ctx, pool, parts.epoch, finestRun(value.value, layout.max));
    // A search in order from the hint found everything before its pick held: start past it next time.
    const ordinal = value.ok ? ordinalOf(restricted.segments, value.value.slot) : undefined;
    if (unrestricted && !spread && collisions === 0 && ordinal !== undefined)
      parts.rememberFrontier(length, ordinal + 1n);
  }
  if (!found || !placed) {
    const what = unrestricted
      ? `no /${length} of ${ref.name} is free`
      : `no /${length} of ${ref.name} within this claim's limits is free`;
    return { outcome: parts.waiting('PoolExhausted', what), collisions };
  }
  return { outcome: parts.allocated(placed.record, placed.key), collisions };
}

/** The first candidate of `length` that may be free: the one holding the pool's hint (a finest slot). */
function startOrdinal(space: PoolSpace, segments: readonly Segment[], length: number, hint: bigint): bigint {
  const finest = slotAt(space.segments, hint);
  if (finest === undefined) return 0n;
  const shift = BigInt(space.prefixLengths!.max - length);
  return ordinalOf(segments, finest >> shift) ?? 0n;
}

/**
 * What this instance took last in a pool: runs the summaries may not show yet. Forgotten when the
 * pool's counts show values freed (a new epoch), so a run this instance took and its claim released is
 * tried again. Runs taken before the pool's first count are kept across it (it frees nothing, and the
 * summaries lag most then), but no run longer than the summaries may lag: one freed before that count
 * is hidden from this instance for that long at most.
 */
const RECENT_RUNS = 256;
const RECENT_RUN_MS = 10_000;

function recentRunsOf(ctx: ClaimContext, pool: PoolRecord, epoch: string | undefined): Segment[] {
  const memory = ctx.recentRuns?.get(pool.metadata.uid);
  if (!memory) return [];
  if (memory.epoch !== undefined && epoch !== undefined && memory.epoch !== epoch) memory.runs.length = 0;
  memory.epoch ??= epoch;
  const since = Date.now() - RECENT_RUN_MS;
  while (memory.runs.length > 0 && memory.runs[0]!.at < since) memory.runs.shift();
  return memory.runs;
}

function rememberRun(ctx: ClaimContext, pool: PoolRecord, epoch: string | undefined, run: Segment): void {
  const pools = (ctx.recentRuns ??= new Map());
  if (pools.size > 10_000) pools.clear();
  let memory = pools.get(pool.metadata.uid);
  if (!memory) pools.set(pool.metadata.uid, (memory = { epoch, runs: [] }));
  memory.runs.push({ ...run, at: Date.now() });
  if (memory.runs.length > RECENT_RUNS) memory.runs.shift();
}

interface SearchOptions {
  /** Runs held beyond what the summaries show (this instance's own recent takes). */
  known?: readonly Segment[];
  summarised: boolean;
  random: () => number;
  /** Others are claiming here now: start in one of the next few groups at random, pick at random. */
  spread: boolean;
  /** A preview: candidates in order always (a lost pick there is no race). */
  inOrder?: boolean;
  /** Tries a candidate; a loss may name the object in the way (whose whole run is then skipped). */
  pick(
    value: ParsedValue,
  ): Promise<{ placed: boolean; held?: Pick<AllocationRecord, 'value'>; free?: boolean }>;
}

/**
 * Walks the candidates of `length` in order from `from`, a group summary at a time, and tries the ones
 * it shows free until one is placed. True when one was.
 */
async function searchRuns(
  ctx: ClaimContext,
  poolId: PoolId,
  space: PoolSpace,
  length: number,
  segments: readonly Segment[],
  from: bigint,
  options: SearchOptions,
): Promise<boolean> {
  const max = space.prefixLengths!.max;
  const shift = max - length;
  const family = space.valueAt(space.segments[0]!.first).family as 4 | 6;
  // Runs (in finest slots) known to be held beyond what the summaries show: lost picks teach them.
  const heldRuns: Segment[] = [...(options.known ?? [])];
  const heldLocally = (first: bigint, last: bigint) =>
    heldRuns.some((run) => run.first <= last && first <= run.last);
  let lost = 0;
  let spread = options.spread;
  let skipGroups = spread ? Math.floor(options.random() * SPREAD_GROUPS) : 0;
  let jump = false;
  const tryOne = async (candidate: bigint): Promise<boolean | 'stop'> => {
    const value = prefixValueAt(family, length, candidate);
    const run = finestRun(value, max);
    if (heldLocally(run.first, run.last)) return false;
    const result = await options.pick(value);
    if (result.placed) return true;
    heldRuns.push(run);
    // A preview's pick found it free and passes over it: no race was lost.
    if (result.free) return false;
    const held = result.held && ipPrefixValues.parse(result.held.value);
    if (held && held.ok) heldRuns.push(finestRun(held.value, max));
    // One lost pick may be a summary that lags; a second says others are claiming here now.
    // Others are here (a second loss, or one in a pool known to be contended): spread, and leave this
    // crowded group for one of the next few at random.
    if ((++lost >= RACING_EVIDENCE || options.spread) && !options.inOrder) {
      jump = true;
      spread = true;
    }
    return lost >= MAX_LOST_PICKS ? 'stop' : false;
  };
  for (let pass = 0; pass < 2; pass++) {
    for (const run of runsFrom(segments, from)) {
      let cursor = run.first;
      while (cursor <= run.last) {
        if (shift > RUN_GROUP_BITS) {
          // A candidate of whole groups: free when every one of them is empty.
          if (!options.summarised || (await groupsEmpty(ctx, poolId, family, cursor, shift))) {
            const outcome = await tryOne(cursor);
            if (outcome !== false) return outcome === true;
          }
          cursor++;
          continue;
        }
        const groupLast = minBig(run.last, lastCandidateOfGroup(cursor, shift));
        if (skipGroups > 0 && groupLast < run.last) {
          skipGroups--;
          cursor = groupLast + 1n;
          continue;
        }
        const group = groupsOfCandidate(cursor, shift).first;
        const bits = options.summarised
          ? await ctx.table.summaries.readGroupBits(poolId, { family, group })
          : new Uint8Array(1 << (RUN_GROUP_BITS - 3));
        const free = freeCandidatesInGroup((o) => isHeld(bits, o), group, cursor, groupLast, shift);
        while (free.length > 0) {
          // Spread among the lowest few only: picks across the whole group would leave small prefixes
          // scattered over it, and no room for a large one.
          const index = spread ? Math.floor(options.random() * Math.min(free.length, SPREAD_WINDOW)) : 0;
          const candidate = free.splice(index, 1)[0]!;
          const outcome = await tryOne(candidate);
          if (outcome !== false) return outcome === true;
          // Leave for a later group only when there is one (a pool of one group is searched whole).
          if (jump && groupLast < run.last) {
            jump = false;
            skipGroups = Math.floor(options.random() * SPREAD_GROUPS);
            break;
          }
          jump = false;
        }
        cursor = groupLast + 1n;
      }
    }
    // The groups skipped to spread out may hold the only free candidates: once more from the start.
    if (skipGroups === 0 && !options.spread) break;
    skipGroups = 0;
  }
  return false;
}

async function groupsEmpty(
  ctx: ClaimContext,
  poolId: PoolId,
  family: 4 | 6,
  candidate: bigint,
  shift: number,
): Promise<boolean> {
  const { first, last } = groupsOfCandidate(candidate, shift);
  const refs = [];
  for (let group = first; group <= last; group++) refs.push({ family, group });
  const bitmaps = await ctx.table.summaries.readGroupsBits(poolId, refs);
  // A group with no summary is absent from the map: nothing of it is held.
  return [...bitmaps.values()].every((bits) => bits.every((byte) => byte === 0));
}

/**
 * The preview of a pool of a range of lengths: the next `count` candidates of `length` that the
 * summaries show free and no object overlaps (one strongly consistent check each), in order.
 */
export async function previewRanged(
  ctx: ClaimContext,
  pool: PoolRecord,
  space: PoolSpace,
  length: number,
  segments: readonly Segment[],
  count: number,
  reads: { hint: bigint; summarised: boolean },
): Promise<string[]> {
  const { hint, summarised } = reads;
  const poolId: PoolId = { namespace: pool.metadata.namespace, kind: pool.kind, name: pool.metadata.name };
  const layout = layoutOf(space);
  const values: string[] = [];
  await searchRuns(ctx, poolId, space, length, segments, startOrdinal(space, segments, length, hint), {
    summarised,
    random: Math.random,
    spread: false,
    inOrder: true,
    pick: async (value) => {
      // The store's read as it is (a preview writes nothing: a stale hold's mark is dropped by a claim).
      const other = await ctx.table.overlaps.overlapping(poolId, layout, value);
      const own = other
        ? undefined
        : await ctx.table.get<AllocationRecord>(rangedAllocationKey(poolId, layout, value));
      const held = other ?? (own?.t === 'alloc' ? own : undefined);
      if (held) return { placed: false, held };
      values.push(value.value);
      // "placed" ends the walk: only once enough values are found.
      return { placed: values.length >= count, free: true };
    },
  });
  return values;
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
