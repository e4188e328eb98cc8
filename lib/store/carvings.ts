/** The pools carved from a claim (keys.ts `carvingKey`): written before the pool, deleted after it. */
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Resource } from '../domain/kinds.ts';
import type { TableClient } from './client.ts';
import { carvingKey } from './keys.ts';

export interface Carving {
  resource: Resource;
  pool: string;
}

export class Carvings {
  constructor(private readonly io: TableClient) {}

  async put(namespace: string, claim: string, carving: Carving): Promise<void> {
    await this.io.doc.send(
      new PutCommand({
        TableName: this.io.tableName,
        Item: { ...carvingKey(namespace, claim, carving.resource, carving.pool), t: 'carving', ...carving },
      }),
    );
  }

  async delete(namespace: string, claim: string, carving: Carving): Promise<void> {
    await this.io.doc.send(
      new DeleteCommand({
        TableName: this.io.tableName,
        Key: carvingKey(namespace, claim, carving.resource, carving.pool),
      }),
    );
  }

  /** The pools carved from a claim name (`limit`: the first few only), read consistently. */
  async of(namespace: string, claim: string, limit?: number): Promise<Carving[]> {
    const carvings: Carving[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const result = await this.io.doc.send(
        new QueryCommand({
          TableName: this.io.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': carvingKey(namespace, claim).pk },
          ConsistentRead: true,
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of result.Items ?? [])
        carvings.push({ resource: item.resource as Resource, pool: item.pool as string });
      start = result.LastEvaluatedKey;
    } while (start && limit === undefined);
    return carvings;
  }
}
