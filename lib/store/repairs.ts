/**
 * The calls of the repair sweep (service/repair/sweep.ts) that no request path makes: the namespace registry,
 * the sweep's cursor, pages of a namespace's claim items (claims and stubs), pages of one pool's
 * allocation objects and of one group's, and dropping a stub. Every read goes through a key or an index;
 * none scans the table.
 */
import { QueryCommand, PutCommand, DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { AllocationKind, AllocationResource } from '../domain/kinds.ts';
import type { AllocationRecord, ClaimRecord, ClaimStubRecord, ItemKey } from '../domain/objects/records.ts';
import type { TableClient } from './client.ts';
import type { Item, Stored } from './items.ts';
import {
  allocationKey,
  GROUP_BITS,
  LIST_SHARDS,
  namespaceKey,
  NAMESPACES_PK,
  repairCursorKey,
  type GroupRef,
  type PoolId,
} from './keys.ts';
import { ALLOCATIONS_INDEX } from './schema.ts';

export { LIST_SHARDS };

export interface Page<T> {
  items: T[];
  /** Where the next page starts; absent after the last. */
  last?: string;
}

export class RepairStore {
  constructor(private readonly io: TableClient) {}

  /**
   * Notes that a namespace has objects (idempotent): when a pool is created, and when a claim or an
   * allocation object is made without its pool.
   */
  async registerNamespace(namespace: string): Promise<void> {
    await this.io.doc.send(
      new PutCommand({ TableName: this.io.tableName, Item: { ...namespaceKey(namespace), t: 'namespace' } }),
    );
  }

  /** One page of registered namespaces, in name order. */
  async namespaces(limit: number, after?: string): Promise<Page<string>> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: after === undefined ? 'pk = :pk' : 'pk = :pk AND sk > :after',
        ExpressionAttributeValues: {
          ':pk': NAMESPACES_PK,
          ...(after === undefined ? {} : { ':after': after }),
        },
        Limit: limit,
      }),
    );
    const items = (result.Items ?? []).map((item) => item.sk as string);
    return result.LastEvaluatedKey ? { items, last: items[items.length - 1] } : { items };
  }

  async readCursor<T>(namespace: string): Promise<T | undefined> {
    const result = await this.io.doc.send(
      new GetCommand({ TableName: this.io.tableName, Key: repairCursorKey(namespace), ConsistentRead: true }),
    );
    return result.Item?.cursor as T | undefined;
  }

  async writeCursor(namespace: string, cursor: unknown): Promise<void> {
    await this.io.doc.send(
      new PutCommand({ TableName: this.io.tableName, Item: { ...repairCursorKey(namespace), cursor } }),
    );
  }

  async clearCursor(namespace: string): Promise<void> {
    await this.io.doc.send(
      new DeleteCommand({ TableName: this.io.tableName, Key: repairCursorKey(namespace) }),
    );
  }

  /** One page of one claim shard's items, claims and stubs alike, in name order. */
  async claimItems(
    namespace: string,
    shard: number,
    limit: number,
    after?: string,
  ): Promise<Page<Stored<ClaimRecord | ClaimStubRecord>>> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: after === undefined ? 'pk = :pk' : 'pk = :pk AND sk > :after',
        ExpressionAttributeValues: {
          ':pk': `O#${namespace}#claims#${shard}`,
          ...(after === undefined ? {} : { ':after': after }),
        },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    const items = (result.Items ?? []) as Stored<ClaimRecord | ClaimStubRecord>[];
    return result.LastEvaluatedKey ? { items, last: items[items.length - 1]!.sk } : { items };
  }

  /** One page of a pool's allocation objects in one shard of the `allocations` index, by value. */
  async poolAllocations(
    pool: PoolId,
    resource: AllocationResource,
    shard: number,
    limit: number,
    after?: string,
  ): Promise<Page<Stored<AllocationRecord> & { gsk: string }>> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        IndexName: ALLOCATIONS_INDEX,
        KeyConditionExpression: 'gpk = :gpk AND gsk BETWEEN :low AND :high',
        ExpressionAttributeValues: {
          ':gpk': `${pool.namespace}#${resource}#${shard}`,
          ':low': after === undefined ? `${pool.name}#` : `${after} `,
          ':high': `${pool.name}#~`,
        },
        Limit: limit,
      }),
    );
    const items = (result.Items ?? []) as (Stored<AllocationRecord> & { gsk: string })[];
    return result.LastEvaluatedKey ? { items, last: items[items.length - 1]!.gsk } : { items };
  }

  /**
   * The first pool, in name order after `after` (from the start when undefined), that has an allocation
   * object in one shard of the `allocations` index: one item read, keys only. Finds the objects of pools
   * that do not exist (objects may be made before their pool).
   */
  async nextPoolWithAllocations(
    namespace: string,
    resource: AllocationResource,
    shard: number,
    after?: string,
  ): Promise<string | undefined> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        IndexName: ALLOCATIONS_INDEX,
        KeyConditionExpression: after === undefined ? 'gpk = :gpk' : 'gpk = :gpk AND gsk > :after',
        ExpressionAttributeValues: {
          ':gpk': `${namespace}#${resource}#${shard}`,
          // Past every `<after>#<value>`: `~` sorts after the values' hex.
          ...(after === undefined ? {} : { ':after': `${after}#~` }),
        },
        ProjectionExpression: 'gsk',
        Limit: 1,
      }),
    );
    const gsk = result.Items?.[0]?.gsk as string | undefined;
    return gsk?.slice(0, gsk.indexOf('#'));
  }

  /** The slots of one group that hold an allocation object, from the `allocations` index. */
  async groupSlots(
    pool: PoolId,
    resource: AllocationResource,
    allocationKind: AllocationKind,
    ref: GroupRef,
  ): Promise<Set<bigint>> {
    const first = ref.group << GROUP_BITS;
    const last = first + (1n << GROUP_BITS) - 1n;
    const low = allocationKey(pool, allocationKind, { slot: first, family: ref.family }).sk;
    const high = allocationKey(pool, allocationKind, { slot: last, family: ref.family }).sk;
    const slots = new Set<bigint>();
    for (let shard = 0; shard < LIST_SHARDS; shard++) {
      for await (const item of this.io.pages({
        TableName: this.io.tableName,
        IndexName: ALLOCATIONS_INDEX,
        KeyConditionExpression: 'gpk = :gpk AND gsk BETWEEN :low AND :high',
        ExpressionAttributeValues: {
          ':gpk': `${pool.namespace}#${resource}#${shard}`,
          ':low': `${pool.name}#${low}`,
          ':high': `${pool.name}#${high}`,
        },
        ProjectionExpression: 'sk',
      }))
        slots.add(BigInt(`0x${(item as Item).sk as string}`));
    }
    return slots;
  }

  /**
   * Deletes a claim name's stub if it still holds `offers` offers (offers are only ever added to a stub,
   * so the same count means the same offers); false when it changed or went.
   */
  async dropStub(key: ItemKey, offers: number): Promise<boolean> {
    return this.io.conditional(
      new DeleteCommand({
        TableName: this.io.tableName,
        Key: key,
        ConditionExpression: 't = :stub AND size(offers) = :n',
        ExpressionAttributeValues: { ':stub': 'stub', ':n': offers },
      }),
    );
  }
}
