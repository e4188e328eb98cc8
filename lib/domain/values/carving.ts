/**
 * IP pools carved from a pool (api.md, "Pools"): `prefixesFrom: { claimRef: { name } }` instead of
 * `prefixes`. The pool's prefixes are then the value of that Claim (on an IPPrefixPool of the same
 * namespace), which the store keeps on the pool record as `carved` once the claim holds one (the stream
 * function and the pool's creation write it; service/allocation/carving.ts). Until then the pool has no candidates.
 */
import type { Cause } from '../errors.ts';
import type { PoolKind } from '../kinds.ts';
import { nameProblem } from '../names.ts';
import type { CheckedPoolSpec, PoolSpace, PoolSpecChecker } from './values.ts';

/** The claim a carved pool's prefixes come from, or undefined for a pool with its own prefixes. */
export function sourceClaimOf(spec: Record<string, unknown>): string | undefined {
  const from = spec.prefixesFrom as { claimRef?: { name?: unknown } } | undefined;
  return typeof from?.claimRef?.name === 'string' ? from.claimRef.name : undefined;
}

function checkPrefixesFrom(input: unknown, causes: Cause[]): string | undefined {
  const field = 'spec.prefixesFrom';
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    causes.push({ field, message: 'must be an object { claimRef: { name } }' });
    return undefined;
  }
  const given = input as Record<string, unknown>;
  for (const name of Object.keys(given))
    if (name !== 'claimRef')
      causes.push({ field: `${field}.${name}`, message: 'is not a field of prefixesFrom' });
  const ref = given.claimRef as Record<string, unknown> | undefined;
  if (typeof ref !== 'object' || ref === null || Array.isArray(ref)) {
    causes.push({
      field: `${field}.claimRef`,
      message: 'is required: { name } of a Claim on an IPPrefixPool',
    });
    return undefined;
  }
  for (const name of Object.keys(ref))
    if (name !== 'name')
      causes.push({ field: `${field}.claimRef.${name}`, message: 'is not a field of claimRef' });
  const problem = nameProblem(ref.name);
  if (problem) causes.push({ field: `${field}.claimRef.name`, message: problem });
  return problem ? undefined : (ref.name as string);
}

/** A pool with no candidates: a carved pool whose claim holds no value (or one it cannot use). */
export function emptySpace(kind: PoolKind): PoolSpace {
  return {
    kind,
    segments: [],
    total: 0n,
    valueAt: (slot) => ({ value: '', slot }),
    fits: () => false,
    claimSegments: () => ({ segments: [] }),
  };
}

// Stand-ins for the prefixes a carved pool does not have yet: its other fields are checked against the
// widest prefix of either family (the claim's value decides the family later).
const STAND_INS = [['0.0.0.0/0'], ['::/0']];

/**
 * A pool kind's spec checker that also takes `prefixesFrom` instead of `prefixes`: the other fields
 * are checked as far as they can be without prefixes, and the pool has no candidates yet.
 */
export function carvable(kind: PoolKind, checker: PoolSpecChecker): PoolSpecChecker {
  return (spec) => {
    if (spec.prefixesFrom === undefined) return checker(spec);
    const causes: Cause[] = [];
    const claim = checkPrefixesFrom(spec.prefixesFrom, causes);
    if (spec.prefixes !== undefined)
      causes.push({ field: 'spec.prefixes', message: 'give prefixes or prefixesFrom, not both' });
    let checked: CheckedPoolSpec | { causes: Cause[] } = { causes: [] };
    for (const prefixes of STAND_INS) {
      checked = checker({ ...spec, prefixesFrom: undefined, prefixes });
      if (!('causes' in checked)) break;
    }
    if ('causes' in checked)
      causes.push(...checked.causes.filter((cause) => cause.field !== 'spec.prefixes'));
    if (causes.length > 0 || 'causes' in checked || claim === undefined) return { causes };
    const { prefixes: _standIn, ...rest } = checked.spec;
    return { spec: { prefixesFrom: { claimRef: { name: claim } }, ...rest }, space: emptySpace(kind) };
  };
}

/**
 * The space of a carved pool once its claim's value is known: the kind's own checker on that value as
 * its prefixes. A value the pool cannot use (another family's gateway, lengths not longer than it)
 * leaves it without candidates.
 */
export function carvedSpace(
  kind: PoolKind,
  checker: PoolSpecChecker,
  spec: Record<string, unknown>,
  prefixes: readonly string[] | undefined,
): PoolSpace {
  if (!prefixes || prefixes.length === 0) return emptySpace(kind);
  const checked = checker({ ...spec, prefixesFrom: undefined, prefixes });
  return 'causes' in checked ? emptySpace(kind) : checked.space;
}
