/** Pool kind → how its spec is checked and how its values are read: the engine's one lookup. */
import type { PoolKind, AllocationKind } from '../kinds.ts';
import { checkIndexPoolSpec, indexValues } from './ranges.ts';
import { checkIPAddressPoolSpec, ipAddressValues, ipPrefixValues } from './ip.ts';
import { checkIPPrefixPoolSpec } from './prefix-pools.ts';
import type { PoolSpecChecker, ValueKind } from './values.ts';
import { carvable } from './carving.ts';

/** The kinds' own checkers, for prefixes given (a carved pool's are its claim's value). */
const OWN_CHECKERS: Record<PoolKind, PoolSpecChecker> = {
  IndexPool: checkIndexPoolSpec,
  IPAddressPool: checkIPAddressPoolSpec,
  IPPrefixPool: checkIPPrefixPoolSpec,
};

const CHECKERS: Record<PoolKind, PoolSpecChecker> = {
  IndexPool: checkIndexPoolSpec,
  IPAddressPool: carvable('IPAddressPool', checkIPAddressPoolSpec),
  IPPrefixPool: carvable('IPPrefixPool', checkIPPrefixPoolSpec),
};

const VALUE_KINDS: Record<AllocationKind, ValueKind> = {
  Index: indexValues,
  IPAddress: ipAddressValues,
  IPPrefix: ipPrefixValues,
};

export function poolSpecChecker(kind: PoolKind): PoolSpecChecker {
  return CHECKERS[kind];
}

/** A pool kind's checker of a spec with its prefixes given (no `prefixesFrom`). */
export function ownSpecChecker(kind: PoolKind): PoolSpecChecker {
  return OWN_CHECKERS[kind];
}

export function valueKind(kind: AllocationKind): ValueKind {
  return VALUE_KINDS[kind];
}

/** Hex digits of a slot in a sort key: every value of a pool has the same width, so text order is value order. */
export function slotWidth(kind: AllocationKind, family: 4 | 6 | undefined): number {
  if (kind === 'Index') return 16;
  return family === 6 ? 32 : 8;
}
