/** Object names (api.md, "Objects"): DNS labels for what users name, DNS subdomains for allocation objects. */
import type { AllocationKind } from './kinds.ts';
import { valueKind } from './spaces.ts';
import type { ParsedValue } from './values.ts';

const LABEL = /^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;

/** Why `name` is not a valid object or namespace name, or undefined when it is. */
export function nameProblem(name: unknown, maxLength: 63 | 253 = 63): string | undefined {
  if (typeof name !== 'string') return 'must be a string';
  if (name.length === 0) return 'must not be empty';
  if (name.length > maxLength) return `must be at most ${maxLength} characters`;
  if (!(maxLength === 63 ? LABEL : SUBDOMAIN).test(name)) {
    return 'must consist of lowercase letters, digits, "-" and ".", and start and end with a letter or digit';
  }
  return undefined;
}

export const ALLOCATION_NAME_MAX = 253;

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
