/**
 * What one run of the repair sweep (service/repair/sweep.ts) carries, shared by its pool and claim checks: the
 * kinds of fix, the run's counts and budget, and the claims it has read.
 */
import type { ClaimRecord, ClaimStubRecord, ItemKey } from '../../domain/objects/records.ts';
import type { Stored } from '../../store/items.ts';
import { objectKey } from '../../store/keys.ts';
import type { RepairStore } from '../../store/repairs.ts';
import { HANDLER_DEADLINE_MS, type ClaimContext } from '../context.ts';

export const REPAIR_KINDS = [
  'orphanedAllocation',
  'duplicateAllocation',
  'unsettledClaim',
  'uncheckedObject',
  'lostOffer',
  'summaryBit',
  'poolCounts',
  'waitingClaim',
  'stuckClaim',
  'lostAllocation',
  'staleStub',
  'pendingHold',
  'expiredLease',
  'lostHolder',
  'abandonedCascade',
  'lostHolding',
] as const;

export type RepairKind = (typeof REPAIR_KINDS)[number];
export type RepairCounts = Record<RepairKind, number>;

/**
 * How old an object bound to a missing claim must be before it is reclaimed: longer than any claim
 * handler runs (HANDLER_DEADLINE_MS), so an allocation a handler is making right now is never taken.
 */
export const REPAIR_GRACE_MS = 2 * HANDLER_DEADLINE_MS;
/** Requests one run may make in one namespace (a Lambda run of a few seconds). */
export const REPAIR_BUDGET = 5000;
/** Longer than the stream function takes on a batch (its event source waits up to 1 s to fill one). */
export const REPAIR_RECHECK_MS = 2000;

export interface SweepOptions {
  /** Count what is wrong, change nothing (no cursor either). */
  dryRun?: boolean;
  /** Requests this run may make; the sweep stops at the next unit of work past it. */
  budget?: number;
  graceMs?: number;
  /**
   * How long to wait before looking again at a pool whose summaries or counts disagree, so a record the
   * stream function is handling right now is not taken for a lost one (only what persists is fixed).
   */
  recheckMs?: number;
  /** When (epoch ms) the run must stop, whatever its budget (a Lambda's deadline, with margin). */
  stopBy?: number;
  /** Start from the beginning, ignoring a cursor left by an earlier run. */
  restart?: boolean;
  /** Ends the run at the next unit of work, as a spent budget does (the local server stopping). */
  signal?: AbortSignal;
  /**
   * When (epoch ms) the history function began to read (the local server's start with dynalite, whose
   * reader keeps no journal): a record of a change before then that it has not read, it never will, so
   * an object or a holding older than that is past its grace for who held what.
   */
  historySince?: number;
}

/** Where a sweep cut short goes on: a pool kind (POOL_KINDS index; its length: the claims), a pool, a shard. */
export interface Cursor {
  stage: number;
  pool?: string;
  /** The pool is swept: go on with the pools after it. */
  poolDone?: boolean;
  shard: number;
  after?: string;
  /**
   * The stage's pools are swept; the objects of pools that do not exist are being looked at
   * (repair/pools.ts sweepPoolless): `shard`, and `after` the last pool name looked at in it.
   */
  poolless?: boolean;
}

export interface RepairReport {
  kind: 'RepairReport';
  namespace: string;
  dryRun: boolean;
  /** The whole namespace was swept (false: the budget ran out; the next run goes on). */
  complete: boolean;
  requests: number;
  found: RepairCounts;
  fixed: RepairCounts;
}

/** One run's state, shared by the pool and claim checks. */
export interface Sweep {
  ctx: ClaimContext;
  store: RepairStore;
  namespace: string;
  dryRun: boolean;
  graceMs: number;
  recheckMs: number;
  stopBy: number;
  budget: number;
  signal?: AbortSignal;
  historySince?: number;
  requests: number;
  cursor: Cursor;
  found: RepairCounts;
  fixed: RepairCounts;
  /** Claim keys read this run (claims and stubs; null: nothing there), dropped when a fix writes one. */
  claims: Map<string, Stored<ClaimRecord | ClaimStubRecord> | null>;
  /** Allocation keys a fix of this run changed: their records are the stream function's to count. */
  touched: Set<string>;
}

export const keyText = (key: ItemKey) => `${key.pk}|${key.sk}`;

export function zeroCounts(): RepairCounts {
  return Object.fromEntries(REPAIR_KINDS.map((kind) => [kind, 0])) as RepairCounts;
}

/** Accounts for `requests` requests. */
export function spend(sweep: Sweep, requests = 1): void {
  sweep.requests += requests;
}

export function exhausted(sweep: Sweep): boolean {
  return sweep.requests >= sweep.budget || Date.now() >= sweep.stopBy || sweep.signal?.aborted === true;
}

/** Waits `ms`, or less when `signal` aborts first. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Notes an inconsistency of `kind` and, unless this is a dry run, fixes it; `repair` answers false when
 * its conditional write found the state already changed (someone else fixed it, or it was in flight).
 */
export async function fix(sweep: Sweep, kind: RepairKind, repair: () => Promise<boolean>): Promise<void> {
  sweep.found[kind]++;
  if (sweep.dryRun) return;
  spend(sweep, 2);
  if (await repair()) sweep.fixed[kind]++;
}

/**
 * A claim name's item (a claim or a stub), read consistently once per run; `namespace`: a claim of
 * another namespace, on a shared pool of this one.
 */
export function claimItem(
  sweep: Sweep,
  name: string,
  namespace = sweep.namespace,
): Promise<Stored<ClaimRecord | ClaimStubRecord> | undefined> {
  return claimItemAt(sweep, objectKey(namespace, 'claims', name));
}

/** The claim item at `key`, read consistently once per run. */
export async function claimItemAt(
  sweep: Sweep,
  key: ItemKey,
): Promise<Stored<ClaimRecord | ClaimStubRecord> | undefined> {
  const cached = sweep.claims.get(keyText(key));
  if (cached !== undefined) return cached ?? undefined;
  spend(sweep);
  const item = await sweep.ctx.table.get<ClaimRecord | ClaimStubRecord>(key);
  sweep.claims.set(keyText(key), item ?? null);
  return item;
}

export function forgetClaim(sweep: Sweep, key: ItemKey): void {
  sweep.claims.delete(keyText(key));
}

/** Whether the handler that wrote a claim may still be at work on it (its deadline has not passed). */
export function handlerMayRun(claim: ClaimRecord): boolean {
  return (
    claim.phase === 'Allocating' &&
    claim.allocatingUntil !== undefined &&
    Date.now() < Date.parse(claim.allocatingUntil)
  );
}
