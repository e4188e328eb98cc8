/**
 * Server-side printing (api.md, the Kubernetes paths): a `GET` whose `Accept` asks for
 * `application/json;as=Table;v=v1;g=meta.k8s.io` answers a `meta.k8s.io/v1` `Table`, the columns kubectl
 * prints (priority 1 only with `-o wide`). Pools show the seed document's NAME, ALLOCATED, AVAILABLE, AGE.
 * Pure: the clock is an argument.
 */
import { poolInfoByAllocationResource, poolInfoByResource, type Resource } from '../../domain/kinds.ts';

type ApiObject = Record<string, any>;
type Cell = string | number | null;

interface Column {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'date';
  readonly description: string;
  readonly priority?: 1;
  readonly cell: (object: ApiObject, now: Date) => Cell;
}

const conditionOf = (object: ApiObject, type: string): ApiObject | undefined =>
  (object.status?.conditions ?? []).find((condition: ApiObject) => condition.type === type);

const text = (value: unknown): Cell => (value === undefined || value === null ? null : String(value));

const NAME: Column = {
  name: 'Name',
  type: 'string',
  description: 'the object’s name, unique in its namespace and kind',
  cell: (object) => object.metadata.name,
};
const AGE: Column = {
  name: 'Age',
  type: 'date',
  description: 'time since creationTimestamp',
  cell: (object, now) => age(object.metadata.creationTimestamp, now),
};

const POOL_COLUMNS: readonly Column[] = [
  NAME,
  {
    name: 'Allocated',
    type: 'integer',
    description: 'allocation objects that reference the pool',
    cell: (pool) => pool.status?.allocated ?? 0,
  },
  {
    name: 'Total',
    type: 'string',
    description: 'the number of candidates',
    priority: 1,
    cell: (pool) => text(pool.status?.total),
  },
  {
    name: 'Free',
    type: 'string',
    description: 'candidates not held',
    priority: 1,
    cell: (pool) => text(pool.status?.free),
  },
  {
    name: 'Quarantined',
    type: 'string',
    description:
      'status.quarantined: freed values a pool with quarantineSeconds holds back, neither allocated nor free',
    priority: 1,
    cell: (pool) => text(pool.status?.quarantined),
  },
  {
    name: 'Available',
    type: 'string',
    description: 'the Available condition: True while a candidate is free',
    cell: (pool) => text(conditionOf(pool, 'Available')?.status),
  },
  {
    name: 'SharedWith',
    type: 'string',
    description:
      'spec.sharedWith: the namespaces whose claims may name the pool, each with its maxAllocations',
    priority: 1,
    cell: (pool) => sharedWithCell(pool.spec?.sharedWith),
  },
  AGE,
];

/** `acme(2),*`: kubectl's compact form of a list (as its `-o wide` prints selectors). */
function sharedWithCell(entries: unknown): string {
  if (!Array.isArray(entries)) return '';
  return entries
    .map((e: { namespace?: string; maxAllocations?: number }) =>
      e.maxAllocations === undefined ? `${e.namespace}` : `${e.namespace}(${e.maxAllocations})`,
    )
    .join(',');
}

const CLAIM_COLUMNS: readonly Column[] = [
  NAME,
  {
    name: 'Pool',
    type: 'string',
    description: 'spec.poolRef.name, after its namespace when it names a pool of another namespace',
    cell: (claim) =>
      text(
        claim.spec?.poolRef?.namespace
          ? `${claim.spec.poolRef.namespace}/${claim.spec.poolRef.name}`
          : claim.spec?.poolRef?.name,
      ),
  },
  {
    name: 'Value',
    type: 'string',
    description: 'the held value',
    cell: (claim) => text(claim.status?.value),
  },
  {
    name: 'Allocated',
    type: 'string',
    description: 'the Allocated condition’s status',
    cell: (claim) => text(conditionOf(claim, 'Allocated')?.status),
  },
  {
    name: 'Reason',
    type: 'string',
    description: 'the Allocated condition’s reason',
    cell: (claim) => text(conditionOf(claim, 'Allocated')?.reason),
  },
  {
    name: 'Allocation',
    type: 'string',
    description: 'status.allocationRef.name: the allocation object that holds the value',
    priority: 1,
    cell: (claim) => text(claim.status?.allocationRef?.name),
  },
  {
    name: 'Lease Ends',
    type: 'string',
    description: 'status.leaseExpiresAt: when a lease claim ends unless renewed',
    priority: 1,
    cell: (claim) => text(claim.status?.leaseExpiresAt),
  },
  {
    name: 'Message',
    type: 'string',
    description: 'the Allocated condition’s message',
    priority: 1,
    cell: (claim) => text(conditionOf(claim, 'Allocated')?.message),
  },
  AGE,
];

function allocationColumns(valueField: string): readonly Column[] {
  return [
    NAME,
    {
      name: 'Pool',
      type: 'string',
      description: 'spec.poolRef.name',
      cell: (allocation) => text(allocation.spec?.poolRef?.name),
    },
    {
      name: 'Value',
      type: 'string',
      description: `spec.${valueField}`,
      cell: (allocation) => text(allocation.spec?.[valueField]),
    },
    {
      name: 'Claim',
      type: 'string',
      description: 'spec.claimRef.name: the claim the value is for',
      cell: (allocation) => text(allocation.spec?.claimRef?.name),
    },
    {
      name: 'Valid',
      type: 'string',
      description: 'the Valid condition: True while the value is a candidate of its pool',
      cell: (allocation) => text(conditionOf(allocation, 'Valid')?.status),
    },
    {
      name: 'Owner',
      type: 'string',
      description: 'spec.owner, as kind/name: who uses the value',
      priority: 1,
      cell: (allocation) => {
        const owner = allocation.spec?.owner;
        return owner ? `${owner.kind}/${owner.name}` : null;
      },
    },
    AGE,
  ];
}

function columnsOf(resource: Resource): readonly Column[] {
  if (resource === 'claims') return CLAIM_COLUMNS;
  if (poolInfoByResource(resource)) return POOL_COLUMNS;
  return allocationColumns(poolInfoByAllocationResource(resource)!.valueField);
}

/**
 * Whether an `Accept` header asks for a v1 Table (kubectl lists `…;as=Table;v=v1;g=meta.k8s.io`, then
 * v1beta1, then plain JSON; Allot answers the first it can).
 */
export function wantsTable(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== 'application/json') return false;
    const values = Object.fromEntries(params.map((param) => param.split('=', 2)));
    return values.as === 'table' && values.g === 'meta.k8s.io' && values.v === 'v1';
  });
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** `?includeObject=` (kubectl's default is Metadata): what each row carries besides its cells. */
export function includeObjectOf(value: string | undefined): IncludeObject | undefined {
  if (value === undefined || value === '') return 'Metadata';
  return value === 'None' || value === 'Metadata' || value === 'Object' ? value : undefined;
}

export function toTable(
  resource: Resource,
  objects: readonly ApiObject[],
  options: { now: Date; include: IncludeObject; metadata: Record<string, unknown> },
) {
  const columns = columnsOf(resource);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: options.metadata,
    columnDefinitions: columns.map((column) => ({
      name: column.name,
      type: column.type,
      format: column === NAME ? 'name' : '',
      description: column.description,
      priority: column.priority ?? 0,
    })),
    rows: objects.map((object) => ({
      cells: columns.map((column) => column.cell(object, options.now)),
      ...(options.include === 'None'
        ? {}
        : {
            object:
              options.include === 'Object'
                ? object
                : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata },
          }),
    })),
  };
}

/** How kubectl writes an age (apimachinery's HumanDuration): `45s`, `3m12s`, `10m`, `5h3m`, `3d4h`, `2y`. */
export function humanDuration(ms: number): string {
  // Truncated toward zero, as Go converts: -1.5 s is -1 s, "0s".
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${hours / 24}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 2) return `${days}d`;
  if (hours < 24 * 365 * 8)
    return days % 365 === 0 ? `${days / 365}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

function age(creationTimestamp: unknown, now: Date): Cell {
  const created = typeof creationTimestamp === 'string' ? Date.parse(creationTimestamp) : NaN;
  return Number.isNaN(created) ? '<unknown>' : humanDuration(now.getTime() - created);
}
