/**
 * Allocation objects of IPPrefixPools with a range of lengths (`allocationPrefixLengths`): their keys,
 * and the strongly consistent read that finds an object overlapping a prefix (service/allocation/prefix-check.ts
 * says why that read, after the prefix's own conditional put, keeps any two objects from overlapping).
 *
 * Key: pk `A#<ns>#IPPrefixPool#<pool>#v<family>.L<anchor>`, where the anchor is the prefix's /min
 * ancestor (its network shifted right by bits − min), and sk `<network, fixed-width hex>/<length, 3
 * digits>`. Every object of the pool inside one /min shares a partition, so a prefix's ancestors and
 * descendants are all in its own partition; sorting by (network, length) puts its descendants right
 * after it: sk from `<network>/<length + 1>` to `<last address>/<max>` is exactly them.
 *
 * Held prefixes: a name hold of a prefix (service/allocation/name-holds.ts) sits at the fixed-layout key, which a
 * pool of a range of lengths does not use, and it may come before the pool, whose layout is then
 * unknown. So the hold also leaves a mark in a partition of the pool's own, whatever its lengths: pk
 * `A#<ns>#IPPrefixPool#<pool>#v<family>.H`, sk as above (ancestors by key, descendants by one Query), and
 * a flag item (sk `#`, before every mark) that says the pool ever had a mark. The overlap read gets the
 * flag in its one BatchGetItem, and reads the marks (the ancestors' by key, the rest by one Query) only
 * when the flag is there: a pool that never had a held prefix pays one key for them, not one a length.
 */
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { AllocationRecord, ItemKey, NameHoldRecord } from '../domain/objects/records.ts';
import { ancestorsOf } from '../domain/values/prefix-pools.ts';
import type { ParsedValue, PrefixLengths } from '../domain/values/values.ts';
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

/** A name hold's mark of the prefix it holds (see the top of the file): what claims' overlap read sees. */
export interface HeldPrefixRecord {
  t: 'heldPrefix';
  /** The prefix held, and the object holding the name (its name, namespace and uid, as its hold's). */
  value: string;
  /** The prefix's length (a mark longer than a pool's `max` holds nothing of that pool). */
  length: number;
  metadata: NameHoldRecord['metadata'];
  /** Where the hold itself is (the fixed-layout key of the prefix). */
  hold: ItemKey;
}

/** What may overlap a prefix of a ranged pool: an allocation object, or a held prefix's mark. */
export type Overlap = Stored<AllocationRecord> | Stored<HeldPrefixRecord>;

const heldPk = (pool: PoolId, family: 4 | 6) => `A#${pool.namespace}#${pool.kind}#${pool.name}#v${family}.H`;

/** Where the mark of a held prefix (numbered at its own length) lives, whatever the pool's lengths. */
export function heldPrefixKey(pool: PoolId, value: Pick<ParsedValue, 'slot' | 'length' | 'family'>): ItemKey {
  const family = value.family as 4 | 6;
  const network = value.slot << BigInt(bitsOf(family) - value.length!);
  return { pk: heldPk(pool, family), sk: rangedSk(family, network, value.length!) };
}

/** The flag that a pool ever had a held prefix of `family` (sk `#` sorts before every mark). */
export function heldFlagKey(pool: PoolId, family: 4 | 6): ItemKey {
  return { pk: heldPk(pool, family), sk: '#' };
}

/** BatchGetItem takes at most this many keys a request. */
const BATCH_KEYS = 100;

export class Overlaps {
  constructor(private readonly io: TableClient) {}

  /**
   * An allocation object or a held prefix's mark that overlaps `value` (contains it, lies inside it, or
   * for a mark is it), other than the object on its own key; undefined when none. Every read is strongly
   * consistent: the ancestors by key, one per length from `min` to the prefix's own length − 1, with the
   * marks' flag, in one BatchGetItem; the descendants by one Query of their key range, stopping at the
   * first (none for a /max); only when the flag is there, the ancestors' marks by one more BatchGetItem
   * and those at or inside it by one more Query. `marks: false`: objects only (a hold's own check).
   */
  async overlapping(
    pool: PoolId,
    layout: RangedLayout,
    value: ParsedValue,
    options: { batch?: boolean; marks?: boolean } = {},
  ): Promise<Overlap | undefined> {
    const marks = options.marks !== false;
    const batch = options.batch !== false;
    const ancestors = ancestorsOf(value, layout.min);
    const keys = ancestors.map((a) => rangedAllocationKey(pool, layout, a));
    if (marks) keys.push(heldFlagKey(pool, layout.family));
    const found = await this.getAny(keys, batch);
    if (found && found.t !== 'flag') return found as Overlap;
    const length = value.length!;
    const bits = bitsOf(layout.family);
    const network = value.slot << BigInt(bits - length);
    const last = network | ((1n << BigInt(bits - length)) - 1n);
    if (length < layout.max) {
      const inside = await this.firstIn(
        rangedAllocationKey(pool, layout, value).pk,
        rangedSk(layout.family, network, length + 1),
        rangedSk(layout.family, last, layout.max),
      );
      if (inside) return inside as Overlap;
    }
    if (!found) return undefined;
    // The pool has had marks: its ancestors' by key, then one at this prefix or inside it, of a length
    // the pool hands out. Read after the flag, so after this object's put, as the flag read is.
    const held =
      ancestors.length > 0
        ? await this.getAny(
            ancestors.map((a) => heldPrefixKey(pool, a)),
            batch,
          )
        : undefined;
    if (held) return held as Overlap;
    const mark = await this.firstIn(
      heldPk(pool, layout.family),
      rangedSk(layout.family, network, length),
      rangedSk(layout.family, last, layout.max),
      (item) => typeof item.length === 'number' && item.length <= layout.max,
    );
    return mark as Overlap | undefined;
  }

  /**
   * The first of `keys` that holds an allocation object, a mark or the marks' flag (in that order of
   * preference), read strongly consistently: by BatchGetItem, or one GetItem each (`batch` false: the
   * stream function's recheck after a crash, rare).
   */
  private async getAny(keys: readonly ItemKey[], batch: boolean): Promise<Item | undefined> {
    const items: Item[] = [];
    if (!batch) {
      for (const key of keys) {
        const result = await this.io.doc.send(
          new GetCommand({ TableName: this.io.tableName, Key: key, ConsistentRead: true }),
        );
        if (result.Item) items.push(result.Item as Item);
      }
    }
    for (let start = 0; batch && start < keys.length; start += BATCH_KEYS) {
      let part: ItemKey[] = keys.slice(start, start + BATCH_KEYS);
      while (part.length > 0) {
        const result = await this.io.doc.send(
          new BatchGetCommand({
            RequestItems: { [this.io.tableName]: { Keys: part, ConsistentRead: true } },
          }),
        );
        items.push(...((result.Responses?.[this.io.tableName] ?? []) as Item[]));
        part = (result.UnprocessedKeys?.[this.io.tableName]?.Keys ?? []) as ItemKey[];
      }
    }
    return (
      items.find((item) => item.t === 'alloc') ??
      items.find((item) => item.t === 'heldPrefix') ??
      items.find((item) => item.t === 'flag')
    );
  }

  /**
   * The first object with sk in [from, to] of partition `pk`, or (with `mark`) the first mark that
   * passes it (marks are few: no Limit then), strongly consistent.
   */
  private async firstIn(
    pk: string,
    from: string,
    to: string,
    mark?: (item: Item) => boolean,
  ): Promise<Item | undefined> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': pk, ':from': from, ':to': to },
        ConsistentRead: true,
        ...(mark ? {} : { Limit: 1 }),
      }),
    );
    return (result.Items ?? []).find((item: Item) =>
      mark ? item.t === 'heldPrefix' && mark(item) : item.t === 'alloc',
    );
  }

  /**
   * Marks a held prefix (flag first, then the mark: an overlap read that misses the flag was made before
   * the mark, service/allocation/name-holds.ts). A mark left by an earlier hold of the prefix is replaced.
   */
  async mark(pool: PoolId, value: ParsedValue, record: HeldPrefixRecord): Promise<void> {
    const family = value.family as 4 | 6;
    await this.io.doc.send(
      new PutCommand({ TableName: this.io.tableName, Item: { ...heldFlagKey(pool, family), t: 'flag' } }),
    );
    await this.io.doc.send(
      new PutCommand({ TableName: this.io.tableName, Item: { ...heldPrefixKey(pool, value), ...record } }),
    );
  }

  /** Drops the mark of the hold of `uid` at `key`; false when it is not that. */
  async unmark(key: ItemKey, uid: string): Promise<boolean> {
    return this.io.conditional(
      new DeleteCommand({
        TableName: this.io.tableName,
        Key: key,
        ConditionExpression: 't = :t AND #m.#uid = :uid',
        ExpressionAttributeNames: { '#m': 'metadata', '#uid': 'uid' },
        ExpressionAttributeValues: { ':t': 'heldPrefix', ':uid': uid },
      }),
    );
  }

  /** The marks of a pool's held prefixes of `family`, in key order (a page of `limit`). */
  async marks(pool: PoolId, family: 4 | 6, limit = 1000): Promise<Stored<HeldPrefixRecord>[]> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk AND sk > :flag',
        ExpressionAttributeValues: { ':pk': heldPk(pool, family), ':flag': '#' },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (result.Items ?? []).filter((item) => item.t === 'heldPrefix') as Stored<HeldPrefixRecord>[];
  }

  /**
   * Keeps a claim's object that a checker on its placer's behalf found free of overlap; false when it is
   * gone or no longer the claim's. Excludes takeBackClaimObject, so two checkers never disagree.
   */
  async keepClaimObject(key: ItemKey, claimName: string, uid: string): Promise<boolean> {
    return this.io.conditional(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: key,
        UpdateExpression: 'SET kept = :kept',
        ConditionExpression: '#s.#c.#name = :name AND #s.#c.#uid = :uid',
        ExpressionAttributeNames: { '#s': 'spec', '#c': 'claimRef', '#uid': 'uid', '#name': 'name' },
        ExpressionAttributeValues: { ':name': claimName, ':uid': uid, ':kept': true },
      }),
    );
  }

  /** Takes back a claim's object that was not kept (its check found an overlap); false when it was. */
  async takeBackClaimObject(key: ItemKey, claimName: string, uid: string): Promise<boolean> {
    return this.io.conditional(
      new DeleteCommand({
        TableName: this.io.tableName,
        Key: key,
        ConditionExpression: '#s.#c.#name = :name AND #s.#c.#uid = :uid AND attribute_not_exists(kept)',
        ExpressionAttributeNames: { '#s': 'spec', '#c': 'claimRef', '#uid': 'uid', '#name': 'name' },
        ExpressionAttributeValues: { ':name': claimName, ':uid': uid },
      }),
    );
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
