/**
 * How a claim gets its value, for the claim handler and the stream function alike: bind an offered
 * allocation object, or put the requested value, or put the next free candidate; then settle the claim's
 * status. Every step is conditional, so two actors working on one claim (a handler and the stream
 * function repairing after a crash) end with one allocation: the loser of the settle removes its own.
 */
import { randomUUID } from 'node:crypto';
import { allocateNext, SUMMARY_SPAN, type AllocationPort } from '../domain/allocate.ts';
import { ordinalOf, spanStartOrdinal, type Segment } from '../domain/candidates.ts';
import { ALLOW_BINDING_ANNOTATION, API_VERSION, poolKindInfo, type PoolKind } from '../domain/kinds.ts';
import { allocationRefOf, condition, spaceOf, timestamp } from '../domain/objects.ts';
import type {
  AllocationRecord,
  ClaimRecord,
  ItemKey,
  NameHoldRecord,
  PoolRecord,
} from '../domain/records.ts';
import { valueKind } from '../domain/spaces.ts';
import type { ClaimContext } from './context.ts';
import { familyOf, type ParsedValue } from '../domain/values.ts';
import { ConditionFailedError } from '../store/client.ts';
import { GROUP_BITS, allocationKey, poolKeyOf, type PoolId } from '../store/keys.ts';
import { isHeld, type Stored } from '../store/items.ts';
import { isRanged } from '../domain/prefix-pools.ts';
import { decideRanged, type RangedParts } from './prefix-search.ts';

export type Outcome = Pick<ClaimRecord, 'status' | 'phase' | 'bound'> & {
  /** An allocation object this attempt created or bound, to undo if the settle loses. */
  took?: { key: ItemKey; created: boolean; previousUid: string };
};

export type WaitingReason = 'PoolNotFound' | 'PoolExhausted' | 'ValueTaken';

export function poolIdOf(claim: ClaimRecord): PoolId {
  return {
    namespace: claim.metadata.namespace,
    kind: claim.spec.poolRef.kind as PoolKind,
    name: claim.spec.poolRef.name,
  };
}

/** Whether the claim's poolRef names a kind and apiVersion Allot serves. */
export function poolRefValid(claim: Pick<ClaimRecord, 'spec'>): boolean {
  const ref = claim.spec.poolRef;
  return (
    poolKindInfo(ref.kind) !== undefined && (ref.apiVersion === undefined || ref.apiVersion === API_VERSION)
  );
}

export function waitingOutcome(reason: WaitingReason, message: string, since: string): Outcome {
  return {
    phase: 'Waiting',
    status: { conditions: [condition('Allocated', 'False', reason, message, since)] },
  };
}

/** A claim holding `allocation` (at `key`). */
export function allocatedOutcome(
  claim: ClaimRecord,
  allocation: AllocationRecord,
  key: ItemKey,
  since: string,
): Outcome {
  return {
    phase: 'Allocated',
    bound: key,
    status: {
      value: allocation.value,
      allocationRef: allocationRefOf(allocation.kind, allocation.metadata.name),
      conditions: [
        condition(
          'Allocated',
          'True',
          'Allocated',
          `holds ${allocation.value} of ${claim.spec.poolRef.kind} ${claim.spec.poolRef.name}`,
          since,
        ),
      ],
    },
  };
}

/**
 * Whether an allocation object may be bound to this claim (api.md, "Claim"): it names the claim, is in
 * the claim's pool, and its uid is the claim's, or is empty or stale with the allow-binding annotation.
 */
export function bindable(allocation: AllocationRecord, claim: ClaimRecord): boolean {
  // A user's prefix not yet checked for overlap (service/prefix-check.ts) is bound once it is.
  if (allocation.unchecked !== undefined) return false;
  const ref = allocation.spec.claimRef;
  if (!ref || ref.name !== claim.metadata.name) return false;
  const pool = allocation.spec.poolRef;
  if (pool.kind !== claim.spec.poolRef.kind || pool.name !== claim.spec.poolRef.name) return false;
  if (allocation.metadata.namespace !== claim.metadata.namespace) return false;
  if (ref.uid === claim.metadata.uid) return true;
  return (
    allocation.metadata.annotations?.[ALLOW_BINDING_ANNOTATION] !== undefined &&
    allocation.metadata.annotations[ALLOW_BINDING_ANNOTATION] !== 'false'
  );
}

/** Binds an existing allocation object to the claim (writes the claim's uid into its claimRef). */
async function bind(
  ctx: ClaimContext,
  claim: ClaimRecord,
  key: ItemKey,
  allocation: AllocationRecord,
): Promise<Outcome | undefined> {
  const previousUid = allocation.spec.claimRef?.uid ?? '';
  if (previousUid !== claim.metadata.uid) {
    const moved = await ctx.table.setAllocationUid(key, claim.metadata.name, previousUid, claim.metadata.uid);
    // A retried write whose first attempt landed (its answer lost) finds the object bound to this claim.
    if (!moved && (await ctx.table.get<AllocationRecord>(key))?.spec.claimRef?.uid !== claim.metadata.uid)
      return undefined;
  }
  const bound = {
    ...allocation,
    spec: { ...allocation.spec, claimRef: { name: claim.metadata.name, uid: claim.metadata.uid } },
  };
  return {
    ...allocatedOutcome(claim, bound, key, (ctx.now ?? timestamp)()),
    took: { key, created: false, previousUid },
  };
}

/** The allocation object a claim writes when it gets `value` (the benchmark pre-fills pools with these). */
export function newAllocation(
  claim: ClaimRecord,
  pool: PoolRecord,
  value: ParsedValue,
  now: string,
): AllocationRecord {
  const info = poolKindInfo(pool.kind)!;
  const record: AllocationRecord = {
    t: 'alloc',
    kind: info.allocationKind,
    metadata: {
      name: valueKind(info.allocationKind).allocationName(pool.metadata.name, value),
      namespace: claim.metadata.namespace,
      uid: randomUUID(),
      generation: 1,
      creationTimestamp: now,
      labels: {},
      annotations: {},
    },
    spec: {
      poolRef: { apiVersion: API_VERSION, kind: pool.kind, name: pool.metadata.name },
      claimRef: { name: claim.metadata.name, uid: claim.metadata.uid },
    },
    value: value.value,
    origin: 'claim',
    rv: 1,
  };
  if (claim.spec.owner) record.spec.owner = claim.spec.owner;
  return record;
}

export interface Decision {
  outcome: Outcome;
  /** Requests made to find it, for the benchmark and logs. */
  collisions: number;
}

/**
 * Decides a claim's outcome against its pool, creating or binding an allocation object when one is to
 * be had. `offers` are allocation objects offered to the claim name (from its stub).
 */
export async function decide(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord | undefined,
  offers: readonly ItemKey[] = [],
): Promise<Decision> {
  const now = (ctx.now ?? timestamp)();
  const ref = claim.spec.poolRef;
  if (!pool) {
    return {
      outcome: waitingOutcome('PoolNotFound', `${ref.kind} ${ref.name} does not exist`, now),
      collisions: 0,
    };
  }
  const info = poolKindInfo(pool.kind)!;
  const poolId = poolIdOf(claim);

  for (const offer of offers) {
    const offered = await ctx.table.get<AllocationRecord>(offer);
    if (offered?.t === 'alloc' && bindable(offered, claim)) {
      const outcome = await bind(ctx, claim, offer, offered);
      if (outcome) return { outcome, collisions: 0 };
    }
  }

  const space = spaceOf(pool);
  if (isRanged(space)) return decideRanged(ctx, claim, pool, space, rangedParts(ctx, claim, pool, now));
  const restricted = space.claimSegments(claim.spec.within, claim.spec.reserved);
  if ('causes' in restricted) {
    const message = restricted.causes.map((cause) => `${cause.field}: ${cause.message}`).join('; ');
    return { outcome: waitingOutcome('PoolExhausted', `cannot be met: ${message}`, now), collisions: 0 };
  }
  // The conditional put of the allocation object; `created` keeps the one that won.
  let created: { key: ItemKey; record: AllocationRecord } | undefined;
  const tryCreate = async (value: ParsedValue, raced = false) => {
    const key = allocationKey(poolId, info.allocationKind, value);
    const record = newAllocation(claim, pool, value, now);
    if (raced) record.raced = true;
    if (!(await ctx.table.putAllocation(key, record, value.slot, info.allocationResource))) return false;
    created = { key, record };
    return true;
  };
  const allocated = (collisions: number): Decision => ({
    outcome: {
      ...allocatedOutcome(claim, created!.record, created!.key, now),
      took: { key: created!.key, created: true, previousUid: '' },
    },
    collisions,
  });

  if (claim.spec.value !== undefined) {
    const value = valueKind(info.allocationKind).parse(claim.spec.value);
    if (
      !value.ok ||
      !space.fits(value.value) ||
      ordinalOf(restricted.segments, value.value.slot) === undefined
    ) {
      const shown = value.ok ? value.value.value : String(claim.spec.value);
      return {
        outcome: waitingOutcome(
          'PoolExhausted',
          `${shown} is not a candidate of ${ref.name} for this claim`,
          now,
        ),
        collisions: 0,
      };
    }
    if (await tryCreate(value.value)) return allocated(0);
    const key = allocationKey(poolId, info.allocationKind, value.value);
    const held = await ctx.table.get<AllocationRecord | NameHoldRecord>(key);
    // A name hold (service/name-holds.ts) holds the value for the object its name points at.
    const holder = held?.t === 'alloc' ? held : undefined;
    if (holder && bindable(holder, claim)) {
      const outcome = await bind(ctx, claim, key, holder);
      if (outcome) return { outcome, collisions: 0 };
    }
    const by = holder?.spec.claimRef?.name
      ? ` (claim ${holder.spec.claimRef.name})`
      : held?.t === 'hold'
        ? ' (its name)'
        : '';
    return {
      outcome: waitingOutcome(
        'ValueTaken',
        `${value.value.value} is held by ${held?.metadata.name ?? 'another allocation object'}${by}`,
        now,
      ),
      collisions: 1,
    };
  }

  const unrestricted = claim.spec.within === undefined && claim.spec.reserved === undefined;
  const start = unrestricted ? searchStart(ctx, pool) : 0n;
  if (start >= space.total && unrestricted) {
    return {
      outcome: waitingOutcome('PoolExhausted', `no candidate of ${ref.name} is free`, now),
      collisions: 0,
    };
  }
  const family = familyOf(space);
  const port: AllocationPort = {
    heldSlots: (first, last, limit) =>
      ctx.table.heldSlots(poolId, info.allocationKind, family, first, last, limit),
    // Until the stream function has counted this pool (and this spec), its summaries may still show what
    // an earlier pool of the name held: read the objects.
    summaryHeld: !summarised(pool)
      ? undefined
      : async (first) => {
          const group = { family, group: first >> GROUP_BITS };
          const bits = await ctx.table.summaries.readGroupBits(poolId, group);
          const from = Number(first - (group.group << GROUP_BITS));
          return (offset) => isHeld(bits, from + offset);
        },
    tryCreate,
  };
  const poolContended = isContended(ctx, pool);
  const search = (from: bigint, contended: boolean, stopAtCollision = false) =>
    allocateNext(restricted.segments, (slot) => space.valueAt(slot), port, {
      from,
      random: ctx.random,
      stopAtCollision,
      contended,
      tookRecently: (slot) => ctx.recentlyTaken?.get(pool.metadata.uid)?.includes(slot) ?? false,
    });
  const contended = unrestricted && poolContended;
  const spreadStart = () => spreadPoint(ctx, pool, restricted.segments, start, space.total);
  const from = contended ? spreadStart() : start;
  // A lone caller's first lost race shows others are claiming here: spread at once rather than try the
  // same block's next free slots, which the others are trying too.
  let next = await search(from, poolContended, unrestricted && !contended);
  let collisions = next.collisions;
  let raced = next.raced;
  // Only the span at the hint says whether the place callers start from is crowded; the spans further
  // on are roomier because the searches spread to them.
  let hintSpanFree = from === start ? next.spanFreeShare : undefined;
  let spread = from > start;
  if (next.kind === 'collided') {
    const jump = spreadStart();
    spread = jump > start;
    next = await search(jump, true);
    collisions += next.collisions;
    raced ||= next.raced;
    if (jump === start) hintSpanFree ??= next.spanFreeShare;
  }
  if (next.kind === 'exhausted' && spread) {
    // The spread start was past the last free candidate: look again from the hint.
    next = await search(start, poolContended);
    collisions += next.collisions;
    raced ||= next.raced;
  }
  if (unrestricted && hintSpanFree !== undefined) adjustSpread(ctx, pool, hintSpanFree);
  if (raced) markContended(ctx, pool);
  if (next.kind !== 'allocated') {
    const what = unrestricted
      ? `no candidate of ${ref.name} is free`
      : `no candidate of ${ref.name} within this claim's limits is free`;
    return { outcome: waitingOutcome('PoolExhausted', what, now), collisions };
  }
  rememberTaken(ctx, pool, next.value.slot);
  // A spread search skipped free candidates: it proves nothing about what lies below it.
  if (unrestricted && !contended && !raced) {
    rememberFrontier(ctx, pool, ordinalOf(restricted.segments, next.value.slot)! + 1n);
  }
  return allocated(collisions);
}

/** The pieces of a claim's decision that a pool of a range of prefix lengths borrows (prefix-search.ts). */
function rangedParts(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  now: string,
): RangedParts<Outcome> {
  return {
    now,
    waiting: (reason, message) => waitingOutcome(reason, message, now),
    allocated: (record, key) => ({
      ...allocatedOutcome(claim, record, key, now),
      took: { key, created: true, previousUid: '' },
    }),
    bind: (key, holder) => bind(ctx, claim, key, holder),
    bindable: (holder) => bindable(holder, claim),
    newAllocation: (value) => newAllocation(claim, pool, value, now),
    summarised: summarised(pool),
    hint: hintOf(pool),
    frontier: (length) => ctx.frontiers?.get(frontierKey(pool, length)),
    epoch: summarised(pool) ? pool.counts?.epoch : undefined,
    rememberFrontier: (length, after) => rememberFrontier(ctx, pool, after, length),
    contended: isContended(ctx, pool),
    markContended: () => markContended(ctx, pool),
  };
}

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
function isContended(ctx: ClaimContext, pool: PoolRecord): boolean {
  const contention = ctx.contendedUntil?.get(pool.metadata.uid);
  if (contention !== undefined && Date.now() < contention.until) return true;
  // Another instance lost a race here a moment ago (the stream function passes it on through the counts).
  const until = pool.counts?.contendedUntil;
  return until !== undefined && Date.now() < Date.parse(until);
}

function markContended(ctx: ClaimContext, pool: PoolRecord): void {
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
function spreadPoint(
  ctx: ClaimContext,
  pool: PoolRecord,
  segments: readonly Segment[],
  start: bigint,
  total: bigint,
): bigint {
  const ahead = (total - start + SUMMARY_SPAN - 1n) / SUMMARY_SPAN;
  const width = BigInt(ctx.spreadSpans?.get(pool.metadata.uid) ?? 1);
  const spans = ahead < width ? ahead : width;
  const pick = BigInt(Math.floor((ctx.random ?? Math.random)() * Number(spans)));
  if (pick === 0n) return start;
  const first = spanStartOrdinal(segments, start + pick * SUMMARY_SPAN, SUMMARY_SPAN);
  return first !== undefined && first > start ? first : start;
}

function adjustSpread(ctx: ClaimContext, pool: PoolRecord, hintSpanFree: number): void {
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
function frontierKey(pool: PoolRecord, length?: number): string {
  const key = `${pool.metadata.uid}/${pool.metadata.generation}/${pool.counts?.epoch ?? pool.counts?.revision ?? '-'}`;
  return length === undefined ? key : `${key}/${length}`;
}

function searchStart(ctx: ClaimContext, pool: PoolRecord): bigint {
  const hint = hintOf(pool);
  const frontier = ctx.frontiers?.get(frontierKey(pool));
  return frontier !== undefined && frontier > hint ? frontier : hint;
}

/**
 * The values this instance took last in a pool: the summary (kept by the stream) may not show them yet,
 * and losing a put to one of them is no sign of other callers.
 */
const RECENTLY_TAKEN = 256;

function rememberTaken(ctx: ClaimContext, pool: PoolRecord, slot: bigint): void {
  const pools = (ctx.recentlyTaken ??= new Map());
  if (pools.size > 10_000) pools.clear();
  const slots = pools.get(pool.metadata.uid) ?? [];
  slots.push(slot);
  if (slots.length > RECENTLY_TAKEN) slots.shift();
  pools.set(pool.metadata.uid, slots);
}

/** Everything from the hint up to `after` was held when this instance looked: start past it next time. */
function rememberFrontier(ctx: ClaimContext, pool: PoolRecord, after: bigint, length?: number): void {
  const frontiers = (ctx.frontiers ??= new Map());
  const key = frontierKey(pool, length);
  if ((frontiers.get(key) ?? -1n) >= after) return;
  if (frontiers.size > 10_000) frontiers.clear();
  frontiers.set(key, after);
}

/**
 * Settles a claim with a decision. When the settle loses (the claim went, was recreated, or another actor
 * bound it first), the allocation this attempt took is given back, and the claim as it now stands is
 * returned.
 */
export async function settle(
  ctx: ClaimContext,
  key: ItemKey,
  claim: ClaimRecord,
  outcome: Outcome,
): Promise<ClaimRecord | undefined> {
  const { took, ...state } = outcome;
  if (!took && sameState(claim, state)) return claim;
  try {
    await ctx.table.settleClaim(key, claim.metadata.uid, state, claim);
    return { ...claim, ...state, rv: claim.rv + 1 };
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    const current = await ctx.table.get<ClaimRecord>(key);
    const ours =
      current?.t === 'claim' &&
      current.metadata.uid === claim.metadata.uid &&
      took !== undefined &&
      current.bound?.pk === took.key.pk &&
      current.bound.sk === took.key.sk;
    if (took && !ours) await giveBack(ctx, claim, took);
    return current?.t === 'claim' ? current : undefined;
  }
}

async function giveBack(ctx: ClaimContext, claim: ClaimRecord, took: NonNullable<Outcome['took']>) {
  if (took.created) await ctx.table.deleteBoundAllocation(took.key, claim.metadata.name, claim.metadata.uid);
  else await ctx.table.setAllocationUid(took.key, claim.metadata.name, claim.metadata.uid, took.previousUid);
}

/** Whether settling would change nothing (so the stream does not rewrite, and retrigger, a waiting claim). */
function sameState(claim: ClaimRecord, state: Omit<Outcome, 'took'>): boolean {
  const a = claim.status.conditions[0];
  const b = state.status.conditions[0];
  return (
    claim.phase === state.phase &&
    claim.status.value === state.status.value &&
    a?.status === b?.status &&
    a?.reason === b?.reason &&
    a?.message === b?.message &&
    claim.bound?.pk === state.bound?.pk &&
    claim.bound?.sk === state.bound?.sk
  );
}

/** Reads a claim's pool; a miss on the fast read is confirmed by a consistent one. */
export async function readPool(ctx: ClaimContext, pool: PoolId): Promise<Stored<PoolRecord> | undefined> {
  const key = poolKeyOf(pool);
  const fast = await ctx.table.get<PoolRecord>(key, false);
  if (fast?.t === 'pool') return fast;
  const sure = await ctx.table.get<PoolRecord>(key, true);
  return sure?.t === 'pool' ? sure : undefined;
}

/**
 * Allocates a claim that waits (or whose handler died while allocating), from the stream function or a
 * retry. Reads the claim and its pool itself; safe to run twice.
 */
export async function reconcileClaim(ctx: ClaimContext, key: ItemKey): Promise<ClaimRecord | undefined> {
  const claim = await waitForHandler(ctx, key);
  if (claim?.t !== 'claim' || (claim.phase !== 'Waiting' && claim.phase !== 'Allocating'))
    return claim?.t === 'claim' ? claim : undefined;
  return takeOver(ctx, key, claim);
}

/** Decides and settles a claim that another actor left waiting or allocating. */
export async function takeOver(
  ctx: ClaimContext,
  key: ItemKey,
  claim: ClaimRecord,
): Promise<ClaimRecord | undefined> {
  const pool = await readPool(ctx, poolIdOf(claim));
  const { outcome } = await decide(ctx, claim, pool, Object.values(claim.offers ?? {}));
  return settle(ctx, key, claim, outcome);
}

/**
 * A claim in `Allocating` may still have its handler at work (the stream often sees the claim's insert
 * before the handler settles it). Racing that handler would be safe but wasteful, and would hand the
 * handler's next candidate to nobody for a moment; so wait until the handler's deadline, then take over.
 */
async function waitForHandler(ctx: ClaimContext, key: ItemKey): Promise<ClaimRecord | undefined> {
  let delay = 10;
  for (;;) {
    const claim = await ctx.table.get<ClaimRecord>(key);
    if (claim?.t !== 'claim' || claim.phase !== 'Allocating' || !claim.allocatingUntil) return claim;
    if (Date.now() >= Date.parse(claim.allocatingUntil)) return claim;
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 250);
  }
}

export { HANDLER_DEADLINE_MS } from './context.ts';

export type { Segment };
