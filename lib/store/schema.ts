/**
 * The table's key schema and indexes as plain data: the CDK construct and the local store create the
 * table from this one definition, and lib/store/table.ts reads and writes by it.
 */
export interface IndexSchema {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly projection: 'ALL' | 'KEYS_ONLY';
}

export const TABLE_PARTITION_KEY = 'pk';
export const TABLE_SORT_KEY = 'sk';

/**
 * The table's TTL attribute (epoch seconds): DynamoDB deletes an item some time after it (days, not on
 * time), so what reads such items treats them as gone once it passes (service/history/changes.ts).
 */
export const TTL_ATTRIBUTE = 'expiresAt';

export const ALLOCATIONS_INDEX = 'allocations';
export const WAITING_INDEX = 'waiting';
/**
 * Claims with a lease, by shard and lease end (sparse: only they carry `lpk`/`lsk`): the expiry run finds
 * the leases that ended without a Scan (service/leases/leases.ts).
 */
export const LEASES_INDEX = 'leases';

export const TABLE_INDEXES: readonly IndexSchema[] = [
  { name: ALLOCATIONS_INDEX, partitionKey: 'gpk', sortKey: 'gsk', projection: 'ALL' },
  { name: WAITING_INDEX, partitionKey: 'wpk', sortKey: 'wsk', projection: 'KEYS_ONLY' },
  { name: LEASES_INDEX, partitionKey: 'lpk', sortKey: 'lsk', projection: 'KEYS_ONLY' },
];
