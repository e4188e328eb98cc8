/**
 * Name holds (service/allocation/name-holds.ts says why and when): an item at another value's allocation key that
 * keeps a user's object's name unique and that value from being handed out. Every write is conditional
 * on the holding object's uid, so a request, its retry and the stream function never undo each other.
 */
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ItemKey, NameHoldRecord } from '../domain/objects/records.ts';
import type { TableClient } from './client.ts';
import { pendingHoldsKey } from './keys.ts';
import { WAITING_INDEX } from './schema.ts';

export class NameHolds {
  constructor(private readonly io: TableClient) {}

  /** Puts a hold where no item is: false when the key is taken (by an object, or another hold). */
  async put(key: ItemKey, hold: NameHoldRecord): Promise<boolean> {
    return this.io.conditional(
      new PutCommand({
        TableName: this.io.tableName,
        // Listed in the sparse `waiting` index while pending (pendingHoldsKey), for the repair sweep.
        Item: {
          ...key,
          ...hold,
          ...(hold.state === 'pending' && {
            wpk: pendingHoldsKey(hold.metadata.namespace),
            wsk: `${hold.until}#${hold.metadata.name}`,
          }),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** A pending hold of `uid` becomes held (its object is in place); false when it is not that. */
  async confirm(key: ItemKey, uid: string): Promise<boolean> {
    return this.io.conditional(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: key,
        UpdateExpression: 'SET #state = :held REMOVE #until, wpk, wsk',
        ConditionExpression: 't = :hold AND #m.#uid = :uid AND #state = :pending',
        ExpressionAttributeNames: { '#state': 'state', '#until': 'until', '#m': 'metadata', '#uid': 'uid' },
        ExpressionAttributeValues: { ':held': 'held', ':pending': 'pending', ':hold': 'hold', ':uid': uid },
      }),
    );
  }

  /** Deletes the hold of `uid` (only while it is in `state`, when given); false when it is not there. */
  async release(key: ItemKey, uid: string, state?: NameHoldRecord['state']): Promise<boolean> {
    return this.io.conditional(
      new DeleteCommand({
        TableName: this.io.tableName,
        Key: key,
        ConditionExpression: `t = :hold AND #m.#uid = :uid${state ? ' AND #state = :state' : ''}`,
        ExpressionAttributeNames: {
          '#m': 'metadata',
          '#uid': 'uid',
          ...(state ? { '#state': 'state' } : {}),
        },
        ExpressionAttributeValues: { ':hold': 'hold', ':uid': uid, ...(state ? { ':state': state } : {}) },
      }),
    );
  }

  /** The keys of a namespace's pending holds, oldest deadline first (a keys-only, sparse index). */
  async pending(namespace: string, limit: number): Promise<ItemKey[]> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        IndexName: WAITING_INDEX,
        KeyConditionExpression: 'wpk = :wpk',
        ExpressionAttributeValues: { ':wpk': pendingHoldsKey(namespace) },
        Limit: limit,
      }),
    );
    return (result.Items ?? []).map((item) => ({ pk: item.pk as string, sk: item.sk as string }));
  }
}
