/**
 * Allocation objects of IPPrefixPools with a range of lengths (`allocationPrefixLengths`): their keys,
 * and the strongly consistent read that finds an object overlapping a prefix (service/prefix-check.ts
 * says why that read, after the prefix's own conditional put, keeps any two objects from overlapping).
 *
 * Key: pk `A#<ns>#IPPrefixPool#<pool>#v<family>.L<anchor>`, where the anchor is the prefix's /min
 * ancestor (its network shifted right by bits − min), and sk `<network, fixed-width hex>/<length, 3
 * digits>`. Every object of the pool inside one /min shares a partition, so a prefix's ancestors and
 * descendants are all in its own partition; sorting by (network, length) puts its descendants right
 * after it: sk from `<network>/<length + 1>` to `<last address>/<max>` is exactly them.
 */
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { AllocationRecord, ItemKey } from '../domain/records.ts';
import { ancestorsOf } from '../domain/prefix-pools.ts';
import type { ParsedValue, PrefixLengths } from '../domain/values.ts';
import type { TableClient } from './client.ts';
import type { Item, Stored } from './items.ts';
import type { PoolId } from './keys.ts';

/** What a key of a ranged pool depends on: its family and its lengths (both immutable). */
export interface RangedLayout extends Pick<PrefixLengths, 'min' | 'max'> {
  readonly family: 4 | 6;
}

const bitsOf = (family: 4 | 6) => (family === 4 ? 32 : 128);

function rangedSk(family: 4 | 6, network: bigint, length: number): string {
  return `${network.toString(16).padStart(family === 4 ? 8 : 32, '0')}/${String(length).padStart(3, '0')}`;
}

/** Where the allocation object of a prefix (`slot` numbered at its own `length`) of a ranged pool lives. */
export function rangedAllocationKey(
  pool: PoolId,
  layout: RangedLayout,
  value: Pick<ParsedValue, 'slot' | 'length'>,
): ItemKey {
  const length = value.length!;
  const network = value.slot << BigInt(bitsOf(layout.family) - length);
  const anchor = value.slot >> BigInt(length - layout.min);
  return {
    pk: `A#${pool.namespace}#${pool.kind}#${pool.name}#v${layout.family}.L${anchor.toString(16)}`,
    sk: rangedSk(layout.family, network, length),
  };
}

/** BatchGetItem takes at most this many keys a request. */
const BATCH_KEYS = 100;

export class Overlaps {
  constructor(private readonly io: TableClient) {}

  /**
   * An allocation object that overlaps `value` (contains it or lies inside it), other than the one on
   * its own key; undefined when none. Both reads are strongly consistent: the ancestors by key, one
   * per length from `min` to the prefix's own length − 1, in one BatchGetItem (none for a /min), and the
   * descendants by one Query of their key range, stopping at the first (none for a /max).
   */
  async overlapping(
    pool: PoolId,
    layout: RangedLayout,
    value: ParsedValue,
    options: { batch?: boolean } = {},
  ): Promise<Stored<AllocationRecord> | undefined> {
    const ancestors = ancestorsOf(value, layout.min).map((a) => rangedAllocationKey(pool, layout, a));
    if (options.batch === false) {
      // The stream function's recheck after a crash: rare, so one GetItem per ancestor will do.
      for (const key of ancestors) {
        const result = await this.io.doc.send(
          new GetCommand({ TableName: this.io.tableName, Key: key, ConsistentRead: true }),
        );
        if (result.Item?.t === 'alloc') return result.Item as Stored<AllocationRecord>;
      }
    }
    for (let start = 0; options.batch !== false && start < ancestors.length; start += BATCH_KEYS) {
      let keys: ItemKey[] = ancestors.slice(start, start + BATCH_KEYS);
      while (keys.length > 0) {
        const result = await this.io.doc.send(
          new BatchGetCommand({
            RequestItems: { [this.io.tableName]: { Keys: keys, ConsistentRead: true } },
          }),
        );
        const found = (result.Responses?.[this.io.tableName] ?? []).find((item) => item.t === 'alloc');
        if (found) return found as Stored<AllocationRecord>;
        keys = (result.UnprocessedKeys?.[this.io.tableName]?.Keys ?? []) as ItemKey[];
      }
    }
    const length = value.length!;
    if (length >= layout.max) return undefined;
    const own = rangedAllocationKey(pool, layout, value);
    const bits = bitsOf(layout.family);
    const network = value.slot << BigInt(bits - length);
    const last = network | ((1n << BigInt(bits - length)) - 1n);
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': own.pk,
          ':from': rangedSk(layout.family, network, length + 1),
          ':to': rangedSk(layout.family, last, layout.max),
        },
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    const found = (result.Items ?? []).find((item: Item) => item.t === 'alloc');
    return found as Stored<AllocationRecord> | undefined;
  }

  /** Marks a user's object checked: no overlap was found after its put. False when it is gone. */
  async confirm(key: ItemKey, uid: string): Promise<boolean> {
    return this.io.conditional(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: key,
        UpdateExpression: 'REMOVE unchecked',
        ConditionExpression: '#m.#uid = :uid AND attribute_exists(unchecked)',
        ExpressionAttributeNames: { '#m': 'metadata', '#uid': 'uid' },
        ExpressionAttributeValues: { ':uid': uid },
      }),
    );
  }

  /** Takes back an object that was never confirmed (its check found an overlap). */
  async withdrawUnchecked(key: ItemKey, uid: string): Promise<boolean> {
    return this.io.conditional(
      new DeleteCommand({
        TableName: this.io.tableName,
        Key: key,
        ConditionExpression: '#m.#uid = :uid AND attribute_exists(unchecked)',
        ExpressionAttributeNames: { '#m': 'metadata', '#uid': 'uid' },
        ExpressionAttributeValues: { ':uid': uid },
      }),
    );
  }
}
