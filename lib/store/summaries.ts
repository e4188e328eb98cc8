/**
 * The stream function's bookkeeping of a pool: group summaries (read by claims as a hint, written by
 * service/counts/tally.ts), the directory of summarised groups, and the pool's counts.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type BatchGetCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import type { ItemKey, PoolCounts } from '../domain/objects/records.ts';
import type { TableClient } from './client.ts';
import { directoryKey, groupKey, type GroupRef, type PoolId } from './keys.ts';
import {
  MARKER_ATTRIBUTE,
  storedBits,
  summaryOf,
  type GroupSummary,
  type Item,
  type MarkerEntry,
} from './items.ts';

/**
 * The most markers one write names: DynamoDB refuses an expression over 4 KB (dynalite checks no such
 * limit), and a write spells `#qN = :qN` per marker. A stream batch's worth (100 records) fits in 1.5 KB.
 */
export const MARKERS_PER_WRITE = 100;

export class Summaries {
  constructor(private readonly io: TableClient) {}

  /** A group's summary, markers and all, read consistently (the stream function's read before it writes). */
  async readGroup(pool: PoolId, ref: GroupRef): Promise<GroupSummary> {
    const result = await this.io.doc.send(
      new GetCommand({ TableName: this.io.tableName, Key: groupKey(pool, ref), ConsistentRead: true }),
    );
    return summaryOf(result.Item);
  }

  /**
   * A group's bitmap alone, for the claim path: an eventually consistent read that leaves the markers
   * (the stream function's bookkeeping) out of the answer. Billed the same; less to send and parse.
   */
  async readGroupBits(pool: PoolId, ref: GroupRef): Promise<Uint8Array> {
    const result = await this.io.doc.send(
      new GetCommand({
        TableName: this.io.tableName,
        Key: groupKey(pool, ref),
        ConsistentRead: false,
        ProjectionExpression: 'b',
      }),
    );
    return summaryOf(result.Item).bits;
  }

  /**
   * Another item and a group's bitmap in one BatchGetItem, eventually consistent (a claim's pool and the
   * summary its search reads first: one round trip, each billed as its own GetItem would be).
   */
  async readWithGroupBits(
    other: ItemKey,
    pool: PoolId,
    ref: GroupRef,
  ): Promise<{ item: Item | undefined; bits: Uint8Array }> {
    const [item, group] = await this.io.getMany([other, groupKey(pool, ref)], false);
    return { item, bits: summaryOf(group).bits };
  }

  /**
   * Writes a group's bits and the markers of the changes that made them, in one write, if the group is
   * still at `version` (several batches may write one group); false when another write came first.
   * `drop`: markers the pool's counts hold already, removed in the same write (an earlier batch's, left
   * for this one to take away); `listed`: the directory lists the group (noted on the summary).
   */
  async writeGroup(
    pool: PoolId,
    ref: GroupRef,
    bits: Uint8Array,
    version: number | undefined,
    markers: readonly { id: string; entries: MarkerEntry[] }[],
    marks: { holds?: Uint8Array; quarantines?: Uint8Array } = {},
    members?: ReadonlySet<string>,
    { drop = [], listed = false }: { drop?: readonly string[]; listed?: boolean } = {},
  ): Promise<boolean> {
    if (markers.length > MARKERS_PER_WRITE || drop.length > MARKERS_PER_WRITE)
      throw new Error(`at most ${MARKERS_PER_WRITE} markers a write`);
    const names: Record<string, string> = {};
    const values: Item = { ':b': storedBits(bits), ':v': (version ?? 0) + 1 };
    const set = ['b = :b', 'v = :v'];
    if (marks.holds) {
      values[':h'] = storedBits(marks.holds);
      set.push('h = :h');
    }
    if (marks.quarantines) {
      values[':z'] = storedBits(marks.quarantines);
      set.push('z = :z');
    }
    if (members) {
      set.push('m = :m');
      values[':m'] = Object.fromEntries([...members].map((id) => [id, 1]));
    }
    markers.forEach(({ id, entries }, i) => {
      names[`#q${i}`] = MARKER_ATTRIBUTE + id;
      values[`:q${i}`] = entries;
      set.push(`#q${i} = :q${i}`);
    });
    drop.forEach((id, i) => (names[`#d${i}`] = MARKER_ATTRIBUTE + id));
    if (listed) {
      set.push('l = :listed');
      values[':listed'] = 1;
    }
    const remove = drop.length ? ` REMOVE ${drop.map((_, i) => `#d${i}`).join(', ')}` : '';
    if (version !== undefined) values[':was'] = version;
    return this.io.conditional(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: groupKey(pool, ref),
        UpdateExpression: `SET ${set.join(', ')}${remove}`,
        ConditionExpression: version === undefined ? 'attribute_not_exists(v)' : 'v = :was',
        ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
        ExpressionAttributeValues: values,
      }),
    );
  }

  /** Notes on a group's summary that the directory lists it (a summary that is there). */
  async noteListed(pool: PoolId, ref: GroupRef): Promise<void> {
    try {
      await this.io.doc.send(
        new UpdateCommand({
          TableName: this.io.tableName,
          Key: groupKey(pool, ref),
          UpdateExpression: 'SET l = :listed',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':listed': 1 },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  /** Lists a group in its pool's directory (idempotent). */
  async listGroup(pool: PoolId, ref: GroupRef): Promise<void> {
    await this.io.doc.send(
      new PutCommand({
        TableName: this.io.tableName,
        Item: { ...directoryKey(pool, ref), f: ref.family ?? 0, g: ref.group.toString(16) },
      }),
    );
  }

  /**
   * Deletes a pool's group summaries and its directory (the pool is being deleted). A group that name
   * holds hold slots of keeps those (they are not the pool's, and outlive it): a pool made again under
   * the name counts them at its first recount.
   */
  async deleteSummaries(pool: PoolId): Promise<void> {
    for await (const ref of this.listedGroups(pool)) {
      const { holds, members, version } = await this.readGroup(pool, ref);
      if (holds.some((byte) => byte !== 0)) {
        // In a pool of a range of prefix lengths the holds are members too (`…h`, service/counts/runs.ts).
        const held = [...members].filter((id) => id.endsWith('h'));
        await this.io.doc.send(
          new PutCommand({
            TableName: this.io.tableName,
            Item: {
              ...groupKey(pool, ref),
              b: storedBits(holds),
              h: storedBits(holds),
              ...(held.length > 0 && { m: Object.fromEntries(held.map((id) => [id, 1])) }),
              v: (version ?? 0) + 1,
              l: 1,
            },
          }),
        );
        continue;
      }
      await this.io.doc.send(new DeleteCommand({ TableName: this.io.tableName, Key: groupKey(pool, ref) }));
      await this.io.doc.send(
        new DeleteCommand({ TableName: this.io.tableName, Key: directoryKey(pool, ref) }),
      );
    }
  }

  /** Every group the pool's directory lists (a consistent read). */
  async *listedGroups(pool: PoolId): AsyncGenerator<GroupRef> {
    const query = {
      TableName: this.io.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': directoryKey(pool).pk },
      ConsistentRead: true,
    };
    for await (const item of this.io.pages(query)) {
      yield { family: item.f === 0 ? undefined : (item.f as 4 | 6), group: BigInt(`0x${String(item.g)}`) };
    }
  }

  /**
   * The bitmaps of some groups of one family (the occupancy map): eventually consistent, the bits
   * alone, 100 keys a request. A group with no summary is absent from the answer: nothing of it is held.
   */
  async readGroupsBits(pool: PoolId, refs: readonly GroupRef[]): Promise<Map<bigint, Uint8Array>> {
    const found = await this.readGroupsBitmaps(pool, refs, false);
    return new Map([...found].map(([group, { bits }]) => [group, bits]));
  }

  /** As readGroupsBits, with each group's quarantine bitmap too (`quarantines`: read it). */
  async readGroupsBitmaps(
    pool: PoolId,
    refs: readonly GroupRef[],
    quarantines = true,
  ): Promise<Map<bigint, { bits: Uint8Array; quarantines: Uint8Array }>> {
    const byPk = new Map<string, bigint>();
    const keys: Item[] = [];
    for (const ref of refs) {
      const key = groupKey(pool, ref);
      if (byPk.has(key.pk)) continue; // a batch may not name a key twice (two buckets can share a group)
      byPk.set(key.pk, ref.group);
      keys.push(key);
    }
    const found = new Map<bigint, { bits: Uint8Array; quarantines: Uint8Array }>();
    const projection = quarantines ? 'pk, b, z' : 'pk, b';
    for (let start = 0; start < keys.length; start += 100) {
      let pending: Item[] | undefined = keys.slice(start, start + 100);
      while (pending && pending.length > 0) {
        const result: BatchGetCommandOutput = await this.io.doc.send(
          new BatchGetCommand({
            RequestItems: { [this.io.tableName]: { Keys: pending, ProjectionExpression: projection } },
          }),
        );
        for (const item of result.Responses?.[this.io.tableName] ?? []) {
          const group = byPk.get(item.pk as string);
          if (group === undefined) continue;
          const summary = summaryOf(item);
          found.set(group, { bits: summary.bits, quarantines: summary.quarantines });
        }
        pending = result.UnprocessedKeys?.[this.io.tableName]?.Keys as Item[] | undefined;
      }
    }
    return found;
  }

  /**
   * Groups of one family that the pool's directory lists between two group numbers (inclusive), at
   * most `limit`, lowest first or (`descending`) highest first: one Query of small items.
   */
  async listedGroupsBetween(
    pool: PoolId,
    family: 4 | 6 | undefined,
    range: { first: bigint; last: bigint },
    limit: number,
    descending = false,
  ): Promise<bigint[]> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': directoryKey(pool).pk,
          ':from': directoryKey(pool, { family, group: range.first }).sk,
          ':to': directoryKey(pool, { family, group: range.last }).sk,
        },
        ProjectionExpression: 'g',
        Limit: limit,
        ScanIndexForward: !descending,
      }),
    );
    return (result.Items ?? []).map((item) => BigInt(`0x${String(item.g)}`));
  }

  /**
   * Writes a pool's counts if they are still at `revision` (absent: the pool has none yet) and the pool is
   * still the one with `uid`; false when another write came first.
   */
  async writeTally(
    key: ItemKey,
    uid: string,
    revision: string | undefined,
    counts: PoolCounts,
  ): Promise<boolean> {
    return this.io.conditional(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: key,
        UpdateExpression: 'SET #c = :counts',
        ConditionExpression:
          revision === undefined
            ? '#m.#uid = :uid AND attribute_not_exists(#c)'
            : '#m.#uid = :uid AND #c.#r = :revision',
        ExpressionAttributeNames: {
          '#c': 'counts',
          '#m': 'metadata',
          '#uid': 'uid',
          ...(revision === undefined ? {} : { '#r': 'revision' }),
        },
        ExpressionAttributeValues: {
          ':counts': counts,
          ':uid': uid,
          ...(revision === undefined ? {} : { ':revision': revision }),
        },
      }),
    );
  }

  /** Writes a pool's counts (from the stream function), if the pool is still the one with `uid`. */
  async setPoolCounts(key: ItemKey, uid: string, counts: PoolCounts): Promise<void> {
    try {
      await this.io.doc.send(
        new UpdateCommand({
          TableName: this.io.tableName,
          Key: key,
          UpdateExpression: 'SET #c = :counts',
          ConditionExpression: '#m.#uid = :uid',
          ExpressionAttributeNames: { '#c': 'counts', '#m': 'metadata', '#uid': 'uid' },
          ExpressionAttributeValues: { ':counts': counts, ':uid': uid },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return; // the pool went: nothing to count
      throw error;
    }
  }
}
