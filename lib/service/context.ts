/**
 * What every service operation runs with: the table, a clock, a random source, and the search memory
 * of one handler instance (each Lambda instance has its own).
 */
import { timestamp } from '../domain/objects/objects.ts';
import type { PoolRecord } from '../domain/objects/records.ts';
import type { Table } from '../store/table.ts';

export interface ClaimContext {
  table: Table;
  /** The one clock (RFC 3339): what leases are decided on; absent, the system's. */
  now?: () => string;
  random?: () => number;
  /**
   * Where this instance's searches may start, per pool and counts revision (see searchStart): one per
   * handler instance, as each Lambda instance has its own.
   */
  frontiers?: Map<string, bigint>;
  /** Per pool, the slots this instance took last (see rememberTaken). */
  recentlyTaken?: Map<string, bigint[]>;
  /**
   * Per pool of a range of prefix lengths, the runs of finest slots this instance took last (while the
   * pool's counts epoch stays): the summaries may not show them yet (prefix-search.ts).
   */
  recentRuns?: Map<
    string,
    { epoch: string | undefined; runs: { first: bigint; last: bigint; at: number }[] }
  >;
  /**
   * Per pool key, the pool as this instance's last claim read it: which group summary the next claim
   * reads beside the pool (claim-reads.ts). Never what a claim is decided on.
   */
  poolsRead?: Map<string, PoolRecord>;
  /** Per pool, until when this instance spreads its searches after losing a race (see isContended). */
  contendedUntil?: Map<string, { until: number; spell: number }>;
  /** Per pool, over how many spans this instance's contended searches spread (see adjustSpread). */
  spreadSpans?: Map<string, number>;
  /** How long a list waits for the history to hold what it shows (service/history/snapshot.ts). */
  listWaitMs?: number;
}

/** How long a claim handler may take (its Lambda timeout, with margin). */
export const HANDLER_DEADLINE_MS = 15_000;

/** Now in epoch ms, from the context's clock. */
export function nowMs(ctx: Pick<ClaimContext, 'now'>): number {
  return ctx.now ? Date.parse(ctx.now()) : Date.now();
}

/** Now as objects and conditions carry times: RFC 3339 UTC, whole seconds. */
export function nowText(ctx: Pick<ClaimContext, 'now'>): string {
  return timestamp(nowMs(ctx));
}
