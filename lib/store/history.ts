/**
 * The history watches read (service/history/changes.ts has the protocol and its argument): per namespace and
 * resource, entries numbered 1, 2, 3, … with no gap, each appended by a conditional put on the next
 * number, so the put is the arbiter between history functions appending at once; a head item that
 * keeps the highest number once its entries have expired; and a marker per batch of stream records, so
 * a batch delivered again finds what it already appended. Every read of entries is strongly
 * consistent: an entry a reader sees was put after every lower one.
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Resource } from '../domain/kinds.ts';
import type { HistoryEvent } from '../domain/lists/watch.ts';
import type { TableClient } from './client.ts';
import type { Item } from './items.ts';
import type { IndexedState } from '../domain/lists/snapshot.ts';
import type { ObjectState } from '../domain/lists/watch.ts';
import { HISTORY_HEAD_SK, historyBatchKey, historyIndexPk, historyPk, historySk } from './keys.ts';

export interface HistoryEntry {
  seq: number;
  /** When it was appended, epoch ms. */
  at: number;
  /** The first record (eventID) of the batch that appended it, and the records whose events it holds. */
  batch: string;
  records: string[];
  events: HistoryEvent[];
  /** The history lost what came before it (a local server restarted): every older position is gone. */
  reset?: true;
}

const indexedOf = (item: Item): IndexedState => ({
  fingerprint: item.fp as string,
  gone: item.gone === true,
  selectable: JSON.parse(item.sel as string) as ObjectState,
});

const entryOf = (item: Item): HistoryEntry => ({
  seq: item.seq as number,
  at: item.at as number,
  batch: item.batch as string,
  records: JSON.parse(item.records as string) as string[],
  events: JSON.parse(item.events as string) as HistoryEvent[],
  ...(item.reset === true ? { reset: true as const } : {}),
});

/** The heads (highest numbers) a batch saw before it appended, by `<namespace>/<resource>`. */
export type BatchHeads = Record<string, number>;

export class HistoryStore {
  constructor(private readonly io: TableClient) {}

  /** The highest number the head item records (0 before the first entry). */
  async head(namespace: string, resource: Resource): Promise<number> {
    return (await this.headItem(namespace, resource)).seq;
  }

  /** The head item: its number, and the records an appender must leave out (`skip`). */
  async headItem(namespace: string, resource: Resource): Promise<{ seq: number; skip: Set<string> }> {
    const result = await this.io.doc.send(
      new GetCommand({
        TableName: this.io.tableName,
        Key: { pk: historyPk(namespace, resource), sk: HISTORY_HEAD_SK },
        ConsistentRead: true,
      }),
    );
    return {
      seq: (result.Item?.seq as number | undefined) ?? 0,
      skip: new Set((result.Item?.skip as Set<string> | undefined) ?? []),
    };
  }

  /** Adds records to the head's `skip` set, or takes them out (a string set: one update, no race). */
  async updateSkip(namespace: string, resource: Resource, add: string[], remove: string[]): Promise<void> {
    for (const [operation, ids] of [
      ['ADD', add],
      ['DELETE', remove],
    ] as const) {
      if (ids.length === 0) continue;
      await this.io.doc.send(
        new UpdateCommand({
          TableName: this.io.tableName,
          Key: { pk: historyPk(namespace, resource), sk: HISTORY_HEAD_SK },
          UpdateExpression: `${operation} skip :ids`,
          ExpressionAttributeValues: { ':ids': new Set(ids) },
        }),
      );
    }
  }

  /** Entries numbered above `seq`, in order, at most `limit`. */
  async after(namespace: string, resource: Resource, seq: number, limit: number): Promise<HistoryEntry[]> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': historyPk(namespace, resource),
          ':from': historySk(seq + 1),
          ':to': historySk(Number.MAX_SAFE_INTEGER),
        },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (result.Items ?? []).map(entryOf);
  }

  /** The number of the highest entry above `seq`, if any (entries left by an appender that died). */
  async highestAfter(namespace: string, resource: Resource, seq: number): Promise<number | undefined> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': historyPk(namespace, resource),
          ':from': historySk(seq + 1),
          ':to': historySk(Number.MAX_SAFE_INTEGER),
        },
        ProjectionExpression: 'seq',
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return result.Items?.[0]?.seq as number | undefined;
  }

  /** Numbers and times of the entries numbered `atMost` and below, newest first. */
  async newestFirst(
    namespace: string,
    resource: Resource,
    atMost: number,
    limit: number,
  ): Promise<{ seq: number; at: number }[]> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk AND sk <= :to',
        ExpressionAttributeValues: { ':pk': historyPk(namespace, resource), ':to': historySk(atMost) },
        ProjectionExpression: 'seq, #at',
        ExpressionAttributeNames: { '#at': 'at' },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (result.Items ?? []).map((item) => ({ seq: item.seq as number, at: item.at as number }));
  }

  async entry(namespace: string, resource: Resource, seq: number): Promise<HistoryEntry | undefined> {
    const result = await this.io.doc.send(
      new GetCommand({
        TableName: this.io.tableName,
        Key: { pk: historyPk(namespace, resource), sk: historySk(seq) },
        ConsistentRead: true,
      }),
    );
    return result.Item ? entryOf(result.Item) : undefined;
  }

  /** Appends an entry at its number; false when that number is taken. `expiresAt`: epoch s, for TTL. */
  async put(namespace: string, resource: Resource, entry: HistoryEntry, expiresAt: number): Promise<boolean> {
    return this.io.conditional(
      new PutCommand({
        TableName: this.io.tableName,
        Item: {
          pk: historyPk(namespace, resource),
          sk: historySk(entry.seq),
          t: 'history',
          seq: entry.seq,
          at: entry.at,
          batch: entry.batch,
          records: JSON.stringify(entry.records),
          events: JSON.stringify(entry.events),
          ...(entry.reset ? { reset: true } : {}),
          expiresAt,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** Raises the head item to `seq` (never lowers it). */
  async raiseHead(namespace: string, resource: Resource, seq: number): Promise<void> {
    await this.io.conditional(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: { pk: historyPk(namespace, resource), sk: HISTORY_HEAD_SK },
        UpdateExpression: 'SET seq = :seq, t = :t',
        ConditionExpression: 'attribute_not_exists(seq) OR seq < :seq',
        ExpressionAttributeValues: { ':seq': seq, ':t': 'historyHead' },
      }),
    );
  }

  /**
   * Marks a batch (by its first record) as started, with the heads it saw before appending. Returns
   * undefined when it is new, or the heads its earlier deliveries recorded; a collection those did not
   * touch gets the head this delivery saw, before this delivery appends to it.
   */
  async startBatch(eventId: string, heads: BatchHeads, expiresAt: number): Promise<BatchHeads | undefined> {
    const key = historyBatchKey(eventId);
    const fresh = await this.io.conditional(
      new PutCommand({
        TableName: this.io.tableName,
        Item: { ...key, t: 'historyBatch', heads, expiresAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    if (fresh) return undefined;
    const names: Record<string, string> = { '#h': 'heads' };
    const values: Record<string, number> = {};
    const sets = Object.entries(heads).map(([collection, seq], i) => {
      names[`#c${i}`] = collection;
      values[`:s${i}`] = seq;
      return `#h.#c${i} = if_not_exists(#h.#c${i}, :s${i})`;
    });
    const result = await this.io.doc.send(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: key,
        UpdateExpression: `SET ${sets.join(', ')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return (result.Attributes?.heads as BatchHeads | undefined) ?? {};
  }

  /**
   * Records an object's last state in the collection's history, appended in entry `seq`; a state of an
   * earlier entry (a batch delivered again) changes nothing. A gone object's item lasts until `expiresAt`
   * (epoch s), so no delivery of an older batch brings it back.
   */
  async indexObject(
    namespace: string,
    resource: Resource,
    name: string,
    seq: number,
    state: { fingerprint: string; gone: boolean; selectable: ObjectState },
    expiresAt: number,
  ): Promise<void> {
    await this.io.conditional(
      new UpdateCommand({
        TableName: this.io.tableName,
        Key: { pk: historyIndexPk(namespace, resource), sk: name },
        UpdateExpression: `SET t = :t, seq = :seq, fp = :fp, gone = :gone, sel = :sel ${
          state.gone ? ', expiresAt = :expires' : 'REMOVE expiresAt'
        }`,
        ConditionExpression: 'attribute_not_exists(seq) OR seq <= :seq',
        ExpressionAttributeValues: {
          ':t': 'historyIndex',
          ':seq': seq,
          ':fp': state.fingerprint,
          ':gone': state.gone,
          ':sel': JSON.stringify(state.selectable),
          ...(state.gone ? { ':expires': expiresAt } : {}),
        },
      }),
    );
  }

  /**
   * Every object the collection's history holds a state of, by name, read `limit` items at most (a
   * list's cost stays bounded: service/history/snapshot.ts; none: all); `complete` says whether that
   * was all.
   */
  async indexed(
    namespace: string,
    resource: Resource,
    limit?: number,
  ): Promise<{ states: Map<string, IndexedState>; complete: boolean }> {
    const states = new Map<string, IndexedState>();
    let start: Record<string, unknown> | undefined;
    do {
      const result = await this.io.doc.send(
        new QueryCommand({
          TableName: this.io.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': historyIndexPk(namespace, resource) },
          ProjectionExpression: 'sk, fp, gone, sel',
          ConsistentRead: true,
          ...(limit !== undefined && { Limit: limit + 1 - states.size }),
          ExclusiveStartKey: start,
        }),
      );
      for (const item of result.Items ?? []) states.set(item.sk as string, indexedOf(item));
      if (limit !== undefined && states.size > limit) return { states, complete: false };
      start = result.LastEvaluatedKey;
    } while (start);
    return { states, complete: true };
  }

  /** The index's states of these objects (strongly consistent), by name. */
  async indexedNamed(namespace: string, resource: Resource, names: readonly string[]) {
    const pk = historyIndexPk(namespace, resource);
    const found = await this.io.getByKey(
      names.map((name) => ({ pk, sk: name })),
      true,
    );
    return new Map([...found.values()].map((item) => [item.sk as string, indexedOf(item)]));
  }

  /**
   * Deletes up to `limit` of the oldest entries appended before `before` (epoch ms), never the newest:
   * where no TTL deletes them (the local server). Returns how many went.
   */
  async prune(namespace: string, resource: Resource, before: number, limit = 25): Promise<number> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk AND sk < :head',
        ExpressionAttributeValues: { ':pk': historyPk(namespace, resource), ':head': HISTORY_HEAD_SK },
        ProjectionExpression: 'sk, #at',
        ExpressionAttributeNames: { '#at': 'at' },
        Limit: limit + 1,
      }),
    );
    const old = (result.Items ?? []).slice(0, -1).filter((item) => (item.at as number) < before);
    for (const item of old)
      await this.io.doc.send(
        new DeleteCommand({
          TableName: this.io.tableName,
          Key: { pk: historyPk(namespace, resource), sk: item.sk as string },
        }),
      );
    return old.length;
  }
}
