/**
 * How a claim gets its value, for the claim handler and the stream function alike: bind an offered
 * allocation object, or put the requested value, or put the next free candidate; then settle the claim's
 * status. Every step is conditional, so two actors working on one claim (a handler and the stream
 * function repairing after a crash) end with one allocation: the loser of the settle removes its own.
 */
import { randomUUID } from 'node:crypto';
import { ordinalOf, type Segment } from '../../domain/values/candidates.ts';
import { ALLOW_BINDING_ANNOTATION, API_VERSION, poolKindInfo, type PoolKind } from '../../domain/kinds.ts';
import { allocationRefOf, condition, spaceOf, timestamp } from '../../domain/objects/objects.ts';
import type {
  AllocationRecord,
  ClaimRecord,
  ItemKey,
  NameHoldRecord,
  QuarantineRecord,
  PoolRecord,
} from '../../domain/objects/records.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import type { ClaimContext } from '../context.ts';
import type { ParsedValue, PoolSpace } from '../../domain/values/values.ts';
import { ConditionFailedError } from '../../store/client.ts';
import { allocationKey, poolKeyOf, type PoolId } from '../../store/keys.ts';
import type { Stored } from '../../store/items.ts';
import { isRanged } from '../../domain/values/prefix-pools.ts';
import { decideRanged, type RangedParts } from './prefix-search.ts';
import { liveClaim } from '../leases/leases.ts';
import { endQuarantine } from '../leases/quarantine.ts';
import { searchOrigin, searcher, searchWithSpread, type PrefetchedSummary } from './search.ts';
import { ensurePlace, givePlace, placeFor, QuotaRefused, quotaMessage, type Place } from './quota.ts';
import { claimNamespaceOf, isSharedClaim, poolNamespaceOf } from '../../domain/objects/sharing.ts';
import {
  adjustSpread,
  frontierKey,
  hintOf,
  isContended,
  markContended,
  rememberFrontier,
  rememberTaken,
  summarised,
} from './search-memory.ts';

export { hintOf, summarised } from './search-memory.ts';

export type Outcome = Pick<ClaimRecord, 'status' | 'phase' | 'bound' | 'holder'> & {
  /** An allocation object this attempt created or bound, to undo if the settle loses. */
  took?: { key: ItemKey; created: boolean; previousUid: string };
  /** A shared pool's place this attempt took and gave back: its namespace's claims that wait may fit. */
  gaveBack?: Place;
};

export type WaitingReason =
  'PoolNotFound' | 'PoolExhausted' | 'ValueTaken' | 'ValueQuarantined' | 'QuotaExceeded';

/** The pool a claim names: in the claim's namespace, or another's that shares it (poolRef.namespace). */
export function poolIdOf(claim: ClaimRecord): PoolId {
  return {
    namespace: poolNamespaceOf(claim),
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
  const elsewhere = allocation.metadata.namespace !== claim.metadata.namespace;
  return {
    phase: 'Allocated',
    bound: key,
    ...(allocation.holder !== undefined && { holder: allocation.holder }),
    status: {
      value: allocation.value,
      allocationRef: {
        ...allocationRefOf(allocation.kind, allocation.metadata.name),
        ...(elsewhere && { namespace: allocation.metadata.namespace }),
      },
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
  if (allocation.metadata.namespace !== poolNamespaceOf(claim)) return false;
  if (claimNamespaceOf(allocation) !== claim.metadata.namespace) return false;
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
  place?: Place,
): Promise<Outcome | undefined> {
  const previousUid = allocation.spec.claimRef?.uid ?? '';
  // An object its claim holds already needs no place more; any other binds under this attempt's.
  if (previousUid !== claim.metadata.uid || !allocation.holder) await ensurePlace(ctx, place);
  if (previousUid !== claim.metadata.uid) {
    const moved = await ctx.table.setAllocationUid(key, claim.metadata.name, previousUid, claim.metadata.uid);
    // A retried write whose first attempt landed (its answer lost) finds the object bound to this claim.
    if (!moved && (await ctx.table.get<AllocationRecord>(key))?.spec.claimRef?.uid !== claim.metadata.uid)
      return undefined;
  }
  const bound = {
    ...allocation,
    spec: { ...allocation.spec, claimRef: { ...allocation.spec.claimRef!, uid: claim.metadata.uid } },
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
  holder?: string,
): AllocationRecord {
  const info = poolKindInfo(pool.kind)!;
  const shared = isSharedClaim(claim);
  const record: AllocationRecord = {
    t: 'alloc',
    kind: info.allocationKind,
    metadata: {
      name: valueKind(info.allocationKind).allocationName(pool.metadata.name, value),
      namespace: pool.metadata.namespace,
      uid: randomUUID(),
      generation: 1,
      creationTimestamp: now,
      labels: {},
      annotations: {},
    },
    spec: {
      poolRef: { apiVersion: API_VERSION, kind: pool.kind, name: pool.metadata.name },
      claimRef: {
        name: claim.metadata.name,
        uid: claim.metadata.uid,
        ...(shared && { namespace: claim.metadata.namespace }),
      },
    },
    value: value.value,
    origin: 'claim',
    rv: 1,
  };
  if (claim.spec.owner) record.spec.owner = claim.spec.owner;
  if (holder !== undefined) record.holder = holder;
  return record;
}

export interface Decision {
  outcome: Outcome;
  /** Requests made to find it, for the benchmark and logs. */
  collisions: number;
}

export interface DecideOptions {
  /** Used for the search's first summary read when it is of this group; read again otherwise. */
  prefetched?: PrefetchedSummary;
  /** The random pick of a contended search's first span, drawn before `prefetched` was chosen. */
  draw?: number;
}

/**
 * Decides a claim's outcome against its pool, creating or binding an allocation object when one is to
 * be had. `offers` are allocation objects offered to the claim name (from its stub). The steps: a pool,
 * an offer bound, then the requested value or the next free candidate, each put conditionally.
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
  const missing = () => waiting('PoolNotFound', `${ref.kind} ${ref.name} does not exist`, now);
  if (!pool || pool.deleting !== undefined) return missing();
  if (!isSharedClaim(claim)) return decideInPool(ctx, claim, pool, offers, options, now);
  // A pool of another namespace: to a namespace it is not shared with, a pool that does not exist.
  const place = placeFor(claim, pool);
  if (!place) return missing();
  let decision: Decision;
  try {
    decision = await decideInPool(ctx, claim, pool, offers, options, now, place);
  } catch (error) {
    if (!(error instanceof QuotaRefused)) throw error;
    return waiting('QuotaExceeded', quotaMessage(claim, pool), now);
  }
  const { outcome } = decision;
  if (outcome.phase !== 'Allocated') {
    if (place.taken) {
      await givePlace(ctx, place);
      outcome.gaveBack = place;
    }
  } else if (
    outcome.took?.created === false &&
    outcome.took.previousUid === claim.metadata.uid &&
    outcome.holder
  ) {
    // The object was this claim's already: another attempt on the claim made it, under its own place,
    // which its settle records too. Ours is one too many (test/model/sharing.test.ts found it kept),
    // unless it is that very place (our put landed, its answer was lost, and we found our own object).
    if (place.taken && outcome.holder !== place.token) await givePlace(ctx, place);
  } else outcome.holder = place.token;
  return decision;
}

/** decide's steps once the claim may use the pool; `place`: a shared pool's, taken before a put or bind. */
async function decideInPool(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  offers: readonly ItemKey[],
  options: DecideOptions,
  now: string,
  place?: Place,
): Promise<Decision> {
  const offered = await bindOffer(ctx, claim, offers, place);
  if (offered) return { outcome: offered, collisions: 0 };

  const space = spaceOf(pool);
  if (isRanged(space))
    return decideRanged(ctx, claim, pool, space, rangedParts(ctx, claim, pool, now, place));
  const restricted = space.claimSegments(claim.spec.within, claim.spec.reserved);
  if ('causes' in restricted) {
    const message = restricted.causes.map((cause) => `${cause.field}: ${cause.message}`).join('; ');
    return waiting('PoolExhausted', `cannot be met: ${message}`, now);
  }
  const put = allocationPut(ctx, claim, pool, now, place);
  const search = { space, segments: restricted.segments, put, now, place };
  return claim.spec.value !== undefined
    ? decideValue(ctx, claim, search)
    : decideNextFree(ctx, claim, pool, search, options);
}

const waiting = (reason: WaitingReason, message: string, now: string, collisions = 0): Decision => ({
  outcome: waitingOutcome(reason, message, now),
  collisions,
});

/** The first offered object that binds to the claim, bound. */
async function bindOffer(ctx: ClaimContext, claim: ClaimRecord, offers: readonly ItemKey[], place?: Place) {
  for (const offer of offers) {
    const offered = await ctx.table.get<AllocationRecord>(offer);
    if (offered?.t === 'alloc' && bindable(offered, claim)) {
      const outcome = await bind(ctx, claim, offer, offered, place);
      if (outcome) return outcome;
    }
  }
  return undefined;
}

/** The conditional put of the allocation object, the arbiter; `created` keeps the one that won. */
interface AllocationPut {
  key(value: ParsedValue): ItemKey;
  tryCreate(value: ParsedValue, raced?: boolean): Promise<boolean>;
  allocated(collisions: number): Decision;
}

function allocationPut(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  now: string,
  place?: Place,
): AllocationPut {
  const info = poolKindInfo(pool.kind)!;
  const poolId = poolIdOf(claim);
  let created: { key: ItemKey; record: AllocationRecord } | undefined;
  const key = (value: ParsedValue) => allocationKey(poolId, info.allocationKind, value);
  return {
    key,
    tryCreate: async (value, raced = false) => {
      const itemKey = key(value);
      await ensurePlace(ctx, place);
      const record = newAllocation(claim, pool, value, now, place?.token);
      if (raced) record.raced = true;
      if (!(await ctx.table.putAllocation(itemKey, record, value.slot, info.allocationResource)))
        return false;
      created = { key: itemKey, record };
      return true;
    },
    allocated: (collisions) => ({
      outcome: {
        ...allocatedOutcome(claim, created!.record, created!.key, now),
        took: { key: created!.key, created: true, previousUid: '' },
      },
      collisions,
    }),
  };
}

/** What a search over a pool of one length works with: the claim's candidates and the put. */
interface SearchParts {
  space: PoolSpace;
  segments: readonly Segment[];
  put: AllocationPut;
  now: string;
  /** A shared pool's place: a claim that has one looks at its value before it puts. */
  place?: Place;
}

/** A claim for one value (`spec.value`): put it, or bind it, or wait for it and say why. */
async function decideValue(ctx: ClaimContext, claim: ClaimRecord, parts: SearchParts): Promise<Decision> {
  const { space, segments, put, now } = parts;
  const ref = claim.spec.poolRef;
  const value = valueKind(poolKindInfo(ref.kind)!.allocationKind).parse(claim.spec.value!);
  if (!value.ok || !space.fits(value.value) || ordinalOf(segments, value.value.slot) === undefined) {
    const shown = value.ok ? value.value.value : String(claim.spec.value);
    return waiting('PoolExhausted', `${shown} is not a candidate of ${ref.name} for this claim`, now);
  }
  const key = put.key(value.value);
  type Held = AllocationRecord | NameHoldRecord | QuarantineRecord;
  // A shared pool's claim looks first: a value it finds held then costs its namespace no place, which a
  // put that loses would take and give back, refusing the namespace's other claims for that moment.
  let held = parts.place ? await ctx.table.get<Held>(key) : undefined;
  if (!held) {
    if (await put.tryCreate(value.value)) return put.allocated(0);
    held = await ctx.table.get<Held>(key);
  }
  // A quarantine whose time has come is ended here rather than waited for (TTL or the expiry run).
  if (held?.t === 'quarantine' && (await endQuarantine(ctx, key, held))) {
    if (await put.tryCreate(value.value)) return put.allocated(0);
    held = await ctx.table.get<Held>(key);
  }
  if (held?.t === 'quarantine') {
    const why = `${value.value.value} was freed at ${held.since} and is held back until ${held.until} (quarantineSeconds)`;
    return waiting('ValueQuarantined', why, now, 1);
  }
  // A name hold (service/allocation/name-holds.ts) holds the value for the object its name points at.
  const holder = held?.t === 'alloc' ? held : undefined;
  if (holder && bindable(holder, claim)) {
    const outcome = await bind(ctx, claim, key, holder, parts.place);
    if (outcome) return { outcome, collisions: 0 };
  }
  // Another namespace's claim is not named to this one (api.md, "Pools shared with other namespaces").
  const by = holder?.spec.claimRef?.name
    ? claimNamespaceOf(holder) === claim.metadata.namespace
      ? ` (claim ${holder.spec.claimRef.name})`
      : ' (a claim of another namespace)'
    : held?.t === 'hold'
      ? ' (its name)'
      : '';
  const holderName = held?.metadata.name ?? 'another allocation object';
  return waiting('ValueTaken', `${value.value.value} is held by ${holderName}${by}`, now, 1);
}

/**
 * A claim for any free candidate: search from where this instance's memory says (the pool's hint, or a
 * spread point once it lost a race there), put the first free one, and remember what it learned.
 */
async function decideNextFree(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  parts: SearchParts,
  options: DecideOptions,
): Promise<Decision> {
  const { space, segments, now } = parts;
  const ref = claim.spec.poolRef;
  const origin = searchOrigin(ctx, claim, pool, space, segments, options.draw);
  if (!origin) return waiting('PoolExhausted', `no candidate of ${ref.name} is free`, now);
  const { unrestricted, contended } = origin;
  const search = searcher(ctx, pool, poolIdOf(claim), parts, parts.put.tryCreate, options.prefetched);
  const found = await searchWithSpread(origin, search);
  if (unrestricted && found.hintSpanFree !== undefined) adjustSpread(ctx, pool, found.hintSpanFree);
  if (found.raced) markContended(ctx, pool);
  const next = found.result;
  if (next.kind !== 'allocated') {
    const what = unrestricted
      ? `no candidate of ${ref.name} is free`
      : `no candidate of ${ref.name} within this claim's limits is free`;
    return waiting('PoolExhausted', what, now, found.collisions);
  }
  rememberTaken(ctx, pool, next.value.slot);
  // A spread search skipped free candidates: it proves nothing about what lies below it.
  if (unrestricted && !contended && !found.raced) {
    rememberFrontier(ctx, pool, ordinalOf(segments, next.value.slot)! + 1n);
  }
  return parts.put.allocated(found.collisions);
}

/** The pieces of a claim's decision that a pool of a range of prefix lengths borrows (prefix-search.ts). */
function rangedParts(
  ctx: ClaimContext,
  claim: ClaimRecord,
  pool: PoolRecord,
  now: string,
  place?: Place,
): RangedParts<Outcome> {
  return {
    now,
    waiting: (reason, message) => waitingOutcome(reason, message, now),
    allocated: (record, key) => ({
      ...allocatedOutcome(claim, record, key, now),
      took: { key, created: true, previousUid: '' },
    }),
    bind: (key, holder) => bind(ctx, claim, key, holder, place),
    bindable: (holder) => bindable(holder, claim),
    newAllocation: (value) => newAllocation(claim, pool, value, now, place?.token),
    beforePut: () => ensurePlace(ctx, place),
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
  const { took, gaveBack: _gaveBack, ...state } = outcome;
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
    // A shared pool's place goes with the value, unless the claim holds it under that place anyway.
    if (outcome.holder !== undefined && !(ours && current.holder === outcome.holder))
      await ctx.table.quotas.give(poolIdOf(claim), claim.metadata.namespace, outcome.holder);
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
  const settled = await settle(ctx, key, claim, outcome);
  // After the settle, so this claim no longer says QuotaExceeded if it said so (no wake of itself).
  if (outcome.gaveBack) await wakeQuotaWaiting(ctx, outcome.gaveBack, key);
  return settled;
}

/**
 * A place given back by an attempt that ended waiting held the quota for a moment, and a claim of its
 * namespace may have been refused meanwhile: those that wait QuotaExceeded try again. (A claim's own
 * handler leaves this to the stream function, which works on the claim's Waiting record, so a client
 * waits for no other claim; the stream function's attempt gives back its own place, and wakes.)
 */
async function wakeQuotaWaiting(ctx: ClaimContext, place: Place, except: ItemKey): Promise<void> {
  const prefix = `O#${place.namespace}#`;
  for (const key of await ctx.table.waitingClaims(place.pool, QUOTA_WAKE_LIMIT)) {
    if (!key.pk.startsWith(prefix) || (key.pk === except.pk && key.sk === except.sk)) continue;
    const claim = await ctx.table.get<ClaimRecord>(key);
    if (
      claim?.t === 'claim' &&
      claim.phase === 'Waiting' &&
      claim.status.conditions[0]?.reason === 'QuotaExceeded'
    )
      await reconcileClaim(ctx, key);
  }
}

const QUOTA_WAKE_LIMIT = 100;

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
