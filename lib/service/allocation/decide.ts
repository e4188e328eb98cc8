/**
 * How a claim gets its value, for the claim handler and the stream function alike: bind an offered
 * allocation object, or put the requested value, or put the next free candidate; then settle the claim's
 * status. Every step is conditional, so two actors working on one claim (a handler and the stream
 * function repairing after a crash) end with one allocation: the loser of the settle removes its own.
 */
import { randomUUID } from 'node:crypto';
import { allocateNext, type AllocationPort } from '../../domain/allocate.ts';
import { ordinalOf, runsFrom, type Segment } from '../../domain/candidates.ts';
import { ALLOW_BINDING_ANNOTATION, API_VERSION, poolKindInfo, type PoolKind } from '../../domain/kinds.ts';
import { allocationRefOf, condition, spaceOf, timestamp } from '../../domain/objects.ts';
import type {
  AllocationRecord,
  ClaimRecord,
  ItemKey,
  NameHoldRecord,
  QuarantineRecord,
  PoolRecord,
} from '../../domain/records.ts';
import { valueKind } from '../../domain/spaces.ts';
import type { ClaimContext } from '../context.ts';
import { familyOf, type ParsedValue, type PoolSpace } from '../../domain/values.ts';
import { ConditionFailedError } from '../../store/client.ts';
import { GROUP_BITS, allocationKey, poolKeyOf, type GroupRef, type PoolId } from '../../store/keys.ts';
import { isHeld, type Stored } from '../../store/items.ts';
import { isRanged } from '../../domain/prefix-pools.ts';
import { decideRanged, type RangedParts } from './prefix-search.ts';
import { liveClaim } from '../leases/leases.ts';
import { endQuarantine } from '../leases/quarantine.ts';
import {
  adjustSpread,
  frontierKey,
  hintOf,
  isContended,
  markContended,
  rememberFrontier,
  rememberTaken,
  searchStart,
  spreadPoint,
  summarised,
} from './search-memory.ts';

export { hintOf, summarised } from './search-memory.ts';

export type Outcome = Pick<ClaimRecord, 'status' | 'phase' | 'bound'> & {
  /** An allocation object this attempt created or bound, to undo if the settle loses. */
  took?: { key: ItemKey; created: boolean; previousUid: string };
};

export type WaitingReason = 'PoolNotFound' | 'PoolExhausted' | 'ValueTaken' | 'ValueQuarantined';

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
  // A user's prefix not yet checked for overlap (service/allocation/prefix-check.ts) is bound once it is.
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

/** A group summary's bitmap read before the decision, beside the pool (claim-reads.ts). */
export interface PrefetchedSummary {
  group: GroupRef;
  bits: Uint8Array;
}

export interface DecideOptions {
  /** Used for the search's first summary read when it is of this group; read again otherwise. */
  prefetched?: PrefetchedSummary;
  /** The random pick of a contended search's first span, drawn before `prefetched` was chosen. */
  draw?: number;
}

/** Where a search over a pool of one length starts (undefined: past the last candidate). */
function searchOrigin(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  space: PoolSpace,
  segments: readonly Segment[],
  draw?: number,
) {
  const unrestricted = claim.spec.within === undefined && claim.spec.reserved === undefined;
  const start = unrestricted ? searchStart(ctx, pool) : 0n;
  if (start >= space.total && unrestricted) return undefined;
  const poolContended = isContended(ctx, pool);
  const contended = unrestricted && poolContended;
  const spreadStart = (at?: number) => spreadPoint(ctx, pool, segments, start, space.total, at);
  return {
    unrestricted,
    start,
    poolContended,
    contended,
    spreadStart,
    from: contended ? spreadStart(draw) : start,
  };
}

/**
 * The group summary a new claim's search in `pool` reads first, if it reads one, so that the claim's
 * reads fetch it beside the pool (claim-reads.ts): the same start as decide's, from the same `draw`.
 */
export function firstSummaryOf(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  draw: number,
): GroupRef | undefined {
  if (!summarised(pool) || claim.spec.value !== undefined) return undefined;
  const space = spaceOf(pool);
  if (isRanged(space)) return undefined;
  const restricted = space.claimSegments(claim.spec.within, claim.spec.reserved);
  if ('causes' in restricted) return undefined;
  const origin = searchOrigin(ctx, claim, pool, space, restricted.segments, draw);
  const run = origin && runsFrom(restricted.segments, origin.from).next();
  return run && !run.done ? { family: familyOf(space), group: run.value.first >> GROUP_BITS } : undefined;
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
  options: DecideOptions = {},
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
    let held = await ctx.table.get<AllocationRecord | NameHoldRecord | QuarantineRecord>(key);
    // A quarantine whose time has come is ended here rather than waited for (TTL or the expiry run).
    if (held?.t === 'quarantine' && (await endQuarantine(ctx, key, held))) {
      if (await tryCreate(value.value)) return allocated(0);
      held = await ctx.table.get<AllocationRecord | NameHoldRecord | QuarantineRecord>(key);
    }
    if (held?.t === 'quarantine')
      return {
        outcome: waitingOutcome(
          'ValueQuarantined',
          `${value.value.value} was freed at ${held.since} and is held back until ${held.until} (quarantineSeconds)`,
          now,
        ),
        collisions: 1,
      };
    // A name hold (service/allocation/name-holds.ts) holds the value for the object its name points at.
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

  const origin = searchOrigin(ctx, claim, pool, space, restricted.segments, options.draw);
  if (!origin) {
    return {
      outcome: waitingOutcome('PoolExhausted', `no candidate of ${ref.name} is free`, now),
      collisions: 0,
    };
  }
  const { unrestricted, start, poolContended, contended, spreadStart, from } = origin;
  const family = familyOf(space);
  let prefetched = options.prefetched;
  const port: AllocationPort = {
    heldSlots: (first, last, limit) =>
      ctx.table.heldSlots(poolId, info.allocationKind, family, first, last, limit),
    // Until the stream function has counted this pool (and this spec), its summaries may still show what
    // an earlier pool of the name held: read the objects.
    summaryHeld: !summarised(pool)
      ? undefined
      : async (first) => {
          const group = { family, group: first >> GROUP_BITS };
          // The summary read beside the pool serves the search's first summary read, if of its group.
          const ready = prefetched;
          prefetched = undefined;
          const bits =
            ready && ready.group.family === family && ready.group.group === group.group
              ? ready.bits
              : await ctx.table.summaries.readGroupBits(poolId, group);
          const from = Number(first - (group.group << GROUP_BITS));
          return (offset) => isHeld(bits, from + offset);
        },
    tryCreate,
  };
  const search = (from: bigint, contended: boolean, stopAtCollision = false) =>
    allocateNext(restricted.segments, (slot) => space.valueAt(slot), port, {
      from,
      random: ctx.random,
      stopAtCollision,
      contended,
      tookRecently: (slot) => ctx.recentlyTaken?.get(pool.metadata.uid)?.includes(slot) ?? false,
    });
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
  const found = await waitForHandler(ctx, key);
  // A claim whose lease ended is never allocated or bound: it is deleted, a release (service/leases/leases.ts).
  const claim = await liveClaim(ctx, key, found);
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

export { HANDLER_DEADLINE_MS } from '../context.ts';

export type { Segment };
