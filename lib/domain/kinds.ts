/** The contract's kinds and resource paths (api.md, "Objects"), as one table. */

export const API_VERSION = 'pool.networking.metal.ironcore.dev/v1alpha1';
export const ALLOW_BINDING_ANNOTATION = 'pool.networking.metal.ironcore.dev/allow-binding';

export type PoolKind = 'IndexPool' | 'IPAddressPool' | 'IPPrefixPool';
export type AllocationKind = 'Index' | 'IPAddress' | 'IPPrefix';
export type ObjectKind = PoolKind | AllocationKind | 'Claim';

export type PoolResource = 'indexpools' | 'ipaddresspools' | 'ipprefixpools';
export type AllocationResource = 'indices' | 'ipaddresses' | 'ipprefixes';
export type Resource = PoolResource | AllocationResource | 'claims';

export interface PoolKindInfo {
  readonly kind: PoolKind;
  readonly resource: PoolResource;
  readonly allocationKind: AllocationKind;
  readonly allocationResource: AllocationResource;
  /** The allocation object's value field: `spec.index`, `spec.address` or `spec.prefix`. */
  readonly valueField: 'index' | 'address' | 'prefix';
}

export const POOL_KINDS: readonly PoolKindInfo[] = [
  {
    kind: 'IndexPool',
    resource: 'indexpools',
    allocationKind: 'Index',
    allocationResource: 'indices',
    valueField: 'index',
  },
  {
    kind: 'IPAddressPool',
    resource: 'ipaddresspools',
    allocationKind: 'IPAddress',
    allocationResource: 'ipaddresses',
    valueField: 'address',
  },
  {
    kind: 'IPPrefixPool',
    resource: 'ipprefixpools',
    allocationKind: 'IPPrefix',
    allocationResource: 'ipprefixes',
    valueField: 'prefix',
  },
];

export const RESOURCES: readonly Resource[] = [
  ...POOL_KINDS.map((info) => info.resource),
  ...POOL_KINDS.map((info) => info.allocationResource),
  'claims',
];

export function poolKindInfo(kind: string): PoolKindInfo | undefined {
  return POOL_KINDS.find((info) => info.kind === kind);
}

export function poolInfoByResource(resource: string): PoolKindInfo | undefined {
  return POOL_KINDS.find((info) => info.resource === resource);
}

export function poolInfoByAllocationResource(resource: string): PoolKindInfo | undefined {
  return POOL_KINDS.find((info) => info.allocationResource === resource);
}

/** Whether a resource path is one of the allocation objects'. */
export function isAllocationResource(resource: string): boolean {
  return poolInfoByAllocationResource(resource) !== undefined;
}

export function poolInfoByAllocationKind(kind: string): PoolKindInfo | undefined {
  return POOL_KINDS.find((info) => info.allocationKind === kind);
}

export function kindOfResource(resource: Resource): ObjectKind {
  if (resource === 'claims') return 'Claim';
  const pool = poolInfoByResource(resource);
  if (pool) return pool.kind;
  return poolInfoByAllocationResource(resource)!.allocationKind;
}
