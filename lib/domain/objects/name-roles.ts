/**
 * What an allocation object's name stands for (api.md, "Allocation objects": the name is the arbiter).
 * Apart from domain/names.ts, which domain/values/spaces.ts reaches (through domain/values/carving.ts): these read
 * values, so they import spaces.ts.
 */
import type { AllocationKind } from '../kinds.ts';
import { nameProblem } from '../names.ts';
import { valueKind } from '../values/spaces.ts';
import type { ParsedValue } from '../values/values.ts';

/**
 * The pool and value a name stands for by its form alone (`idx-1`: value 1 of pool `idx`), when its pool
 * part is a valid pool name; otherwise no pool could ever give it, and it is an ordinary custom name.
 */
export function valueNamedBy(
  kind: AllocationKind,
  name: string,
): { pool: string; value: ParsedValue } | undefined {
  const named = valueKind(kind).parseAllocationName(name);
  return named && nameProblem(named.pool) === undefined ? named : undefined;
}

/**
 * How an allocation object's name is kept unique (api.md, "Allocation objects": the name is the
 * arbiter): `own`, the deterministic name of its own value (its key finds it); `custom`, a name no pool
 * gives (a name item points at it); `held`, the deterministic name of another value, of this pool or
 * another, existing or not (a name hold at that value's key points at it, and that value is not handed
 * out while it stands).
 */
export type NameRole =
  { role: 'own' } | { role: 'custom' } | { role: 'held'; pool: string; value: ParsedValue };

export function nameRole(kind: AllocationKind, name: string, pool: string, value: ParsedValue): NameRole {
  const named = valueNamedBy(kind, name);
  if (!named) return { role: 'custom' };
  if (valueKind(kind).allocationName(pool, value) === name) return { role: 'own' };
  return { role: 'held', ...named };
}
