/**
 * Pools shared with other namespaces (api.md, "Pools shared with other namespaces"): who a pool serves,
 * and how many of its values a namespace may hold. Pure: the store keeps the holders (store/quotas.ts),
 * the claim path takes a place among them (service/allocation/quota.ts).
 */
import type { AllocationRecord, ClaimRecord, PoolRecord } from './records.ts';
import { nameProblem } from '../names.ts';
import { isObject, type Causes } from './validation.ts';
import { SHARED_HOLDERS_MAX, SHARED_WITH_MAX } from './schema-parts.ts';

export { SHARED_HOLDERS_MAX, SHARED_WITH_MAX };

/** `"*"`: every namespace. */
export const EVERY_NAMESPACE = '*';

export interface SharedWithEntry {
  namespace: string;
  maxAllocations?: number;
}

// SHARED_HOLDERS_MAX: the most values one namespace may hold of one shared pool, with or without a
// `maxAllocations`: a namespace's holders are kept in one item (store/quotas.ts), which DynamoDB bounds
// at 400 KB.

/** The checked `spec.sharedWith`, or undefined when absent (causes name each problem). */
export function checkSharedWith(value: unknown, causes: Causes): SharedWithEntry[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length > SHARED_WITH_MAX) {
    causes.add(
      'spec.sharedWith',
      `must be a list of at most ${SHARED_WITH_MAX} { namespace, maxAllocations? }`,
    );
    return undefined;
  }
  const seen = new Set<string>();
  return value.map((entry: unknown, i) => {
    const field = `spec.sharedWith[${i}]`;
    if (!isObject(entry)) {
      causes.add(field, 'must be an object { namespace, maxAllocations? }');
      return { namespace: '' };
    }
    for (const key of Object.keys(entry))
      if (key !== 'namespace' && key !== 'maxAllocations')
        causes.add(`${field}.${key}`, 'is not a field of this kind');
    const namespace = entry.namespace;
    const problem = namespace === EVERY_NAMESPACE ? undefined : nameProblem(namespace);
    if (problem) causes.add(`${field}.namespace`, `${problem}, or "*" for every namespace`);
    else if (seen.has(namespace as string)) causes.add(`${field}.namespace`, 'is named twice');
    seen.add(namespace as string);
    const checked: SharedWithEntry = { namespace: namespace as string };
    const max = entry.maxAllocations;
    if (max !== undefined) {
      if (typeof max !== 'number' || !Number.isInteger(max) || max < 0 || max > SHARED_HOLDERS_MAX)
        causes.add(`${field}.maxAllocations`, `must be an integer 0..${SHARED_HOLDERS_MAX}`);
      else checked.maxAllocations = max;
    }
    return checked;
  });
}

export function sharedWithOf(pool: PoolRecord): readonly SharedWithEntry[] {
  return Array.isArray(pool.spec.sharedWith) ? (pool.spec.sharedWith as SharedWithEntry[]) : [];
}

/** The namespaces (and `"*"`) a pool spec shares itself with. */
export function sharedNamespaces(spec: PoolRecord['spec']): string[] {
  return Array.isArray(spec.sharedWith) ? (spec.sharedWith as SharedWithEntry[]).map((e) => e.namespace) : [];
}

/**
 * What a pool allows a namespace: undefined when it is not shared with it (to that namespace, the pool
 * does not exist); else the most values it may hold. An entry naming the namespace wins over `"*"`.
 */
export function shareFor(pool: PoolRecord, namespace: string): { maxAllocations: number } | undefined {
  const entry = shareEntryFor(pool, namespace);
  if (!entry) return undefined;
  return { maxAllocations: Math.min(entry.maxAllocations ?? SHARED_HOLDERS_MAX, SHARED_HOLDERS_MAX) };
}

/** The `sharedWith` entry that applies to a namespace: the one naming it, else `"*"`'s. */
export function shareEntryFor(pool: PoolRecord, namespace: string): SharedWithEntry | undefined {
  const entries = sharedWithOf(pool);
  return (
    entries.find((e) => e.namespace === namespace) ?? entries.find((e) => e.namespace === EVERY_NAMESPACE)
  );
}

/** The namespace of the pool a claim names: its own unless `spec.poolRef.namespace` says another. */
export function poolNamespaceOf(claim: Pick<ClaimRecord, 'spec' | 'metadata'>): string {
  return claim.spec.poolRef.namespace ?? claim.metadata.namespace;
}

/** Whether a claim names a pool of another namespace (a shared pool): its holding counts in a quota. */
export function isSharedClaim(claim: Pick<ClaimRecord, 'spec' | 'metadata'>): boolean {
  return poolNamespaceOf(claim) !== claim.metadata.namespace;
}

/** The namespace of the claim an allocation object names: the object's own unless its claimRef says. */
export function claimNamespaceOf(allocation: Pick<AllocationRecord, 'spec' | 'metadata'>): string {
  return allocation.spec.claimRef?.namespace ?? allocation.metadata.namespace;
}

/**
 * A place among a namespace's holders, one per attempt to allocate a claim (store/quotas.ts): when it
 * was taken (so the repair sweep leaves a young one alone), a random part (two attempts on one claim
 * take two places), and the claim's name (so the sweep finds the claim that should hold it).
 */
export function newHolderToken(claimName: string, now = Date.now(), random = Math.random()): string {
  const part = Math.floor(random * 36 ** 4)
    .toString(36)
    .padStart(4, '0');
  return `${now.toString(36)}.${part}.${claimName}`;
}

export function parseHolderToken(token: string): { takenAt: number; claimName: string } | undefined {
  const match = /^([0-9a-z]{1,11})\.([0-9a-z]{4})\.(.+)$/.exec(token);
  if (!match) return undefined;
  return { takenAt: parseInt(match[1]!, 36), claimName: match[3]! };
}

export interface NamespaceUsage {
  namespace: string;
  allocated: number;
  maxAllocations?: number;
}

/**
 * A shared pool's `status.sharing`: each namespace its spec names or that holds values of it, with its
 * holders and the limit that applies to it now (a named entry's, else `"*"`'s), by namespace.
 */
export function sharingStatus(
  pool: PoolRecord,
  holders: readonly { namespace: string; count: number }[],
): NamespaceUsage[] {
  const counts = new Map<string, number>();
  for (const entry of sharedWithOf(pool))
    if (entry.namespace !== EVERY_NAMESPACE) counts.set(entry.namespace, 0);
  for (const { namespace, count } of holders)
    if (count > 0 || counts.has(namespace)) counts.set(namespace, count);
  return [...counts.keys()].sort().map((namespace) => {
    const entry = shareEntryFor(pool, namespace);
    return {
      namespace,
      allocated: counts.get(namespace)!,
      ...(entry?.maxAllocations !== undefined && { maxAllocations: entry.maxAllocations }),
    };
  });
}
