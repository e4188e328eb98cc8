/**
 * Values and pool spaces, one implementation per pool kind behind one interface, so the allocation
 * engine never asks which kind it serves. Pure: no AWS, no I/O.
 */
import type { Cause } from '../errors.ts';
import type { AllocationKind, PoolKind } from '../kinds.ts';
import type { Segment } from './candidates.ts';

/** A value of an allocation kind, parsed and canonical. */
export interface ParsedValue {
  /** Canonical text, as in a claim's `status.value`: `"64512"`, `"10.0.0.7"`, `"10.0.1.0/24"`. */
  readonly value: string;
  /** Position in the kind's value space; slots sort like the values. */
  readonly slot: bigint;
  /** IP kinds: the address family. */
  readonly family?: 4 | 6;
  /** IPPrefix: the prefix length. */
  readonly length?: number;
}

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

export const parsed = <T>(value: T): Parsed<T> => ({ ok: true, value });
export const problem = <T>(message: string): Parsed<T> => ({ ok: false, problem: message });

/** How values of one allocation kind are read, written and named. */
export interface ValueKind {
  readonly allocationKind: AllocationKind;
  /** Reads a value as a user writes it (a claim's `spec.value`, an allocation object's value field). */
  parse(input: unknown): Parsed<ParsedValue>;
  /**
   * The deterministic name of the allocation object holding `value` in `pool` (api.md).
   * @example allocationName('asn-pool', index 64512) → 'asn-pool-64512'
   */
  allocationName(pool: string, value: ParsedValue): string;
  /** The inverse of `allocationName`: which pool and value a deterministic name stands for. */
  parseAllocationName(name: string): { pool: string; value: ParsedValue } | undefined;
  /** The value as the allocation object's spec writes it (an Index is a JSON integer when it is safe). */
  specValue(value: ParsedValue): unknown;
}

/** A pool's candidates and how to turn slots back into values. */
export interface PoolSpace {
  readonly kind: PoolKind;
  /** Candidates in the contract's order. */
  readonly segments: readonly Segment[];
  readonly total: bigint;
  /** The value a slot of this pool stands for. */
  valueAt(slot: bigint): ParsedValue;
  /** Whether a value is of this pool's family and length (a foreign value is never a candidate). */
  fits(value: ParsedValue): boolean;
  /** A claim's candidates: `within` and `reserved` applied; causes name `spec.within` / `spec.reserved`. */
  claimSegments(within: unknown, reserved: unknown): { segments: Segment[] } | { causes: Cause[] };
  /** IPPrefixPool: the lengths a claim may ask for (one, for `allocationPrefixLength`). */
  readonly prefixLengths?: PrefixLengths;
  /**
   * A pool with `allocationPrefixLengths`: its candidates of one length, as a space of that length alone
   * (this space's own slots are prefixes of the longest length, `max`: what `total` counts).
   */
  atLength?(length: number): PoolSpace;
}

/** The lengths an IPPrefixPool hands out: `allocationPrefixLengths`, or min = max = default. */
export interface PrefixLengths {
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

/** A pool spec checked and in canonical form, with its space. */
export interface CheckedPoolSpec {
  /** The kind-specific spec fields, canonical, as stored and echoed back. */
  readonly spec: Record<string, unknown>;
  readonly space: PoolSpace;
}

/** Checks the kind-specific fields of a pool spec (not `reclaimPolicy`); causes name each failing field. */
export type PoolSpecChecker = (spec: Record<string, unknown>) => CheckedPoolSpec | { causes: Cause[] };

/** The IP family of a pool's values (undefined for an IndexPool). */
export function familyOf(space: PoolSpace): 4 | 6 | undefined {
  return space.kind === 'IndexPool' ? undefined : space.valueAt(space.segments[0]?.first ?? 0n).family;
}
