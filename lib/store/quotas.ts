/**
 * The holders of shared pools (api.md, "Pools shared with other namespaces"; keys.ts `holdersKey`): one
 * item per pool and namespace, a string set with a place per claim of that namespace that holds a value
 * of the pool or is taking one. A quota is one conditional write on it, `size(holders) < max`: DynamoDB
 * decides every race on the item, so however many claims race, the set never grows past the limit, and
 * adding a place twice (a retried request) adds it once.
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PoolKind } from '../domain/kinds.ts';
import type { HoldersRecord } from '../domain/objects/records.ts';
import type { TableClient } from './client.ts';
import { holdersKey, shareKey, type PoolId } from './keys.ts';

export interface NamespaceHolders {
  namespace: string;
  holders: string[];
}

export class Quotas {
  constructor(private readonly io: TableClient) {}

  /**
   * Adds `token` to the namespace's holders of the pool, if they are fewer than `max` (or it is one of
   * them already); false when the quota is used up.
   */
  async take(pool: PoolId, namespace: string, token: string, max: number): Promise<boolean> {
    const condition =
      max <= 0
        ? 'contains(holders, :token)'
        : 'attribute_not_exists(holders) OR size(holders) < :max OR contains(holders, :token)';
    return this.io.conditional(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: holdersKey(pool, namespace),
        UpdateExpression: 'SET t = :t ADD holders :set',
        ConditionExpression: condition,
        ExpressionAttributeValues: {
          ':t': 'holders',
          ':set': new Set([token]),
          ':token': token,
          ...(max > 0 && { ':max': max }),
        },
      }),
    );
  }

  /** Takes `token` out of the namespace's holders (a set forgets its last member by itself). */
  async give(pool: PoolId, namespace: string, token: string): Promise<void> {
    await this.io.conditional(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: holdersKey(pool, namespace),
        UpdateExpression: 'DELETE holders :set',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':set': new Set([token]) },
      }),
    );
  }

  /** Every namespace's holders of the pool, read consistently. */
  async of(pool: PoolId): Promise<NamespaceHolders[]> {
    const found: NamespaceHolders[] = [];
    for await (const item of this.partition(holdersKey(pool).pk)) {
      const holders = (item as HoldersRecord).holders;
      found.push({ namespace: item.sk as string, holders: holders ? [...holders] : [] });
    }
    return found;
  }

  /** One namespace's holders of the pool, read consistently. */
  async holdersOf(pool: PoolId, namespace: string): Promise<string[]> {
    const result = await this.io.doc.send(
      new GetCommand({
        TableName: this.io.tableName,
        Key: holdersKey(pool, namespace),
        ConsistentRead: true,
      }),
    );
    const holders = (result.Item as HoldersRecord | undefined)?.holders;
    return holders ? [...holders] : [];
  }

  /** Lists the pool under each namespace (or `*`) it is shared with (keys.ts `shareKey`). */
  async share(pool: PoolId, namespaces: readonly string[]): Promise<void> {
    for (const namespace of namespaces)
      await this.io.doc.send(
        new PutCommand({ TableName: this.io.tableName, Item: { ...shareKey(namespace, pool), t: 'share' } }),
      );
  }

  async unshare(pool: PoolId, namespaces: readonly string[]): Promise<void> {
    for (const namespace of namespaces)
      await this.io.doc.send(
        new DeleteCommand({ TableName: this.io.tableName, Key: shareKey(namespace, pool) }),
      );
  }

  /** The pools listed as shared with `namespace` or with every namespace, read consistently. */
  async sharedWith(namespace: string): Promise<PoolId[]> {
    const pools: PoolId[] = [];
    for (const listed of [namespace, '*'])
      for await (const item of this.partition(shareKey(listed).pk)) {
        const [poolNamespace, kind, ...name] = (item.sk as string).split('#');
        pools.push({ namespace: poolNamespace!, kind: kind as PoolKind, name: name.join('#') });
      }
    return pools;
  }

  /** Every item of one partition, read consistently (the client's paging). */
  private partition(pk: string) {
    return this.io.pages({
      TableName: this.io.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
    });
  }
}
