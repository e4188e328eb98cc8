/**
 * Quarantines (service/leases/quarantine.ts says when): an item at a freed value's allocation key that keeps
 * the value from being handed out until its time. It ends by itself (TTL, and the leases index for the
 * expiry run), and every delete is conditional on the quarantine as read, so one put since stays.
 */
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ItemKey, QuarantineRecord } from '../domain/objects/records.ts';
import type { TableClient } from './client.ts';
import { leaseAttributes } from './keys.ts';

export class Quarantines {
  constructor(private readonly io: TableClient) {}

  /** Puts a quarantine where no item is: false when the key is taken (a claim took the value first). */
  put(key: ItemKey, quarantine: QuarantineRecord): Promise<boolean> {
    return this.io.conditional(
      new PutCommand({
        TableName: this.io.tableName,
        Item: { ...key, ...quarantine, ...leaseAttributes(key, quarantine.until) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** Deletes a quarantine whose time (`until`) has come by `now` (RFC 3339 UTC, whole seconds). */
  end(key: ItemKey, until: string, now: string): Promise<boolean> {
    return this.io.conditional(
      new DeleteCommand({
        TableName: this.io.tableName,
        Key: key,
        ConditionExpression: 't = :t AND #until = :until AND #until <= :now',
        ExpressionAttributeNames: { '#until': 'until' },
        ExpressionAttributeValues: { ':t': 'quarantine', ':until': until, ':now': now },
      }),
    );
  }
}
