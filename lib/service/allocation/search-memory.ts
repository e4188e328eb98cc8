/**
 * What one handler instance remembers of its searches in a pool, and where its next search starts: the
 * pool's hint or past what it found held (frontiers), the values it took last, and whether it spreads
 * its searches because it lost a race there (contention). Each Lambda instance has its own (context.ts);
 * none of it decides anything: the conditional put does (decide.ts).
 */
import { SUMMARY_SPAN } from '../../domain/search/allocate.ts';
import { spanStartOrdinal, type Segment } from '../../domain/values/candidates.ts';
import type { PoolRecord } from '../../domain/objects/records.ts';
import type { ClaimContext } from '../context.ts';

/**
 * Contention: an instance whose put lost a race knows other callers are claiming from the same pool
 * right now. For a short while it picks at random among the free values of a span (a summary's 4096
 * slots) chosen at random among the next few from the hint, instead of taking the lowest free one, so
 * concurrent callers stop colliding (the contract asks lowest-first of a lone caller only; the holes left
 * behind go to the next claims once it is calm).
 */
// Long enough to span several claims of a busy instance, short enough that a lone caller soon gets the
// lowest free value again. Jittered, so instances that raced together do not all come back together;
// doubled (up to a minute) for an instance that races again soon after its last spell ended.
const CONTENTION_MS = 5000;
const CONTENTION_MAX_MS = 60_000;
/**
 * How many spans a contended search chooses among: it starts at one and follows what the searches see at
 * the hint. Callers picking at random take the free values of the spans they choose, while the hint
 * stays below them at the lowest hole; when the span at the hint is found less than a quarter free, it is
 * crowded, and the next searches spread over twice as many spans (more than half free: half as many).
 */
const SPREAD_SPANS_MAX = 64;
const CROWDED_SHARE = 0.25;
const ROOMY_SHARE = 0.5;

/** Contention is a pool's: a race lost in one pool says nothing about callers of another. */
export function isContended(ctx: ClaimContext, pool: PoolRecord): boolean {
  const contention = ctx.contendedUntil?.get(pool.metadata.uid);
  if (contention !== undefined && Date.now() < contention.until) return true;
  // Another instance lost a race here a moment ago (the stream function passes it on through the counts).
  const until = pool.counts?.contendedUntil;
  return until !== undefined && Date.now() < Date.parse(until);
}

export function markContended(ctx: ClaimContext, pool: PoolRecord): void {
  const pools = (ctx.contendedUntil ??= new Map());
  if (pools.size > 10_000) pools.clear();
  const now = Date.now();
  const last = pools.get(pool.metadata.uid);
  // Racing again soon after a spell ended: the callers are still there, so a longer spell.
  const again = last !== undefined && now >= last.until && now < last.until + 2 * last.spell;
  const spell =
    last && now < last.until
      ? last.spell
      : again
        ? Math.min(last!.spell * 2, CONTENTION_MAX_MS)
        : CONTENTION_MS;
  const jitter = 1 + (ctx.random ?? Math.random)();
  pools.set(pool.metadata.uid, { until: now + spell * jitter, spell });
}

/** Where a contended search starts: the hint, or the first candidate of one of the next spans, at random. */
export function spreadPoint(
  ctx: ClaimContext,
  pool: PoolRecord,
  segments: readonly Segment[],
  start: bigint,
  total: bigint,
  draw = (ctx.random ?? Math.random)(),
): bigint {
  const ahead = (total - start + SUMMARY_SPAN - 1n) / SUMMARY_SPAN;
  const width = BigInt(ctx.spreadSpans?.get(pool.metadata.uid) ?? 1);
  const spans = ahead < width ? ahead : width;
  const pick = BigInt(Math.floor(draw * Number(spans)));
  if (pick === 0n) return start;
  const first = spanStartOrdinal(segments, start + pick * SUMMARY_SPAN, SUMMARY_SPAN);
  return first !== undefined && first > start ? first : start;
}

export function adjustSpread(ctx: ClaimContext, pool: PoolRecord, hintSpanFree: number): void {
  const widths = (ctx.spreadSpans ??= new Map());
  if (widths.size > 10_000) widths.clear();
  const width = widths.get(pool.metadata.uid) ?? 1;
  if (hintSpanFree < CROWDED_SHARE) widths.set(pool.metadata.uid, Math.min(width * 2, SPREAD_SPANS_MAX));
  else if (hintSpanFree > ROOMY_SHARE && width > 1) widths.set(pool.metadata.uid, width / 2);
}

/**
 * Where this instance starts looking: the pool's hint (the stream function's lowest maybe-free position),
 * or past what this instance itself found held since values were last freed. A recount that saw a value
 * freed writes a new epoch, which drops the memory, so a lone caller still gets the lowest free candidate
 * after a release.
 */
export function hintOf(pool: PoolRecord): bigint {
  const counts = pool.counts;
  return counts && counts.generation === pool.metadata.generation ? BigInt(counts.searchFrom) : 0n;
}

/** Whether the stream function has counted the pool as it now is, so its summaries describe it. */
export function summarised(pool: PoolRecord): boolean {
  return pool.counts !== undefined && pool.counts.generation === pool.metadata.generation;
}

/**
 * The memory is good until values may have been freed (a new epoch) or the spec changes; a pool of a
 * range of prefix lengths keeps one per length.
 */
export function frontierKey(pool: PoolRecord, length?: number): string {
  const key = `${pool.metadata.uid}/${pool.metadata.generation}/${pool.counts?.epoch ?? pool.counts?.revision ?? '-'}`;
  return length === undefined ? key : `${key}/${length}`;
}

export function searchStart(ctx: ClaimContext, pool: PoolRecord): bigint {
  const hint = hintOf(pool);
  const frontier = ctx.frontiers?.get(frontierKey(pool));
  return frontier !== undefined && frontier > hint ? frontier : hint;
}

/**
 * The values this instance took last in a pool: the summary (kept by the stream) may not show them yet,
 * and losing a put to one of them is no sign of other callers.
 */
const RECENTLY_TAKEN = 256;

export function rememberTaken(ctx: ClaimContext, pool: PoolRecord, slot: bigint): void {
  const pools = (ctx.recentlyTaken ??= new Map());
  if (pools.size > 10_000) pools.clear();
  const slots = pools.get(pool.metadata.uid) ?? [];
  slots.push(slot);
  if (slots.length > RECENTLY_TAKEN) slots.shift();
  pools.set(pool.metadata.uid, slots);
}

/** Everything from the hint up to `after` was held when this instance looked: start past it next time. */
export function rememberFrontier(ctx: ClaimContext, pool: PoolRecord, after: bigint, length?: number): void {
  const frontiers = (ctx.frontiers ??= new Map());
  const key = frontierKey(pool, length);
  if ((frontiers.get(key) ?? -1n) >= after) return;
  if (frontiers.size > 10_000) frontiers.clear();
  frontiers.set(key, after);
}
