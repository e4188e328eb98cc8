/**
 * The holdings of values (domain/objects/holdings.ts), kept by the history function: each holding is
 * three items (keys.ts `holdingKeys`: by value, by pool, by claim; two more, a tenant's, for a claim of
 * another namespace), put once by a conditional put under a key the stream record names, and ended once
 * by a conditional update. The value's item decides: a start puts it last, an end writes it first, so
 * a start or an end cut short is finished from it and the open mark, when the record comes again or by
 * the repair sweep (service/repair/holdings.ts).
 */
import {
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Holding, HoldingEnd } from '../domain/objects/holdings.ts';
import { itemKeyText, type TableClient } from './client.ts';
import type { Item } from './items.ts';
import type { ItemKey } from '../domain/objects/records.ts';
import {
  claimHoldingsPk,
  holdingKeys,
  holdingLengthKey,
  holdingLengthOf,
  holdingLengthsPk,
  holdingValuePk,
  holdingValueSortKey,
  openHoldingsPk,
  type PoolId,
} from './keys.ts';
import { TTL_ATTRIBUTE } from './schema.ts';

/** A holding as stored: the holding, and its start in its keys. */
export interface StoredHolding {
  holding: Holding;
  start: string;
}

export interface HoldingPage {
  items: Holding[];
  /** Where the next page starts (opaque), when there may be more. */
  next?: string;
}

/** The pool a holding is of, as keys name it. */
export const holdingPool = (holding: Holding): PoolId => ({
  namespace: holding.namespace,
  kind: holding.pool.kind,
  name: holding.pool.name,
});
const keysOf = (stored: StoredHolding) =>
  holdingKeys(holdingPool(stored.holding), stored.holding.value, stored.holding.claim, stored.start);
/** A holding's copies (by value first: it decides), without the open mark. */
const copiesOf = (stored: StoredHolding): ItemKey[] => {
  const { byValue, byPool, byClaim, tenant } = keysOf(stored);
  return [byValue, byPool, ...(byClaim ? [byClaim] : []), ...(tenant ?? [])];
};

/** A run of sort keys of one partition, both ends included. */
export interface KeyRange {
  lo: string;
  hi: string;
}

export const encodeCursor = (key: Record<string, unknown>) =>
  Buffer.from(JSON.stringify(key)).toString('base64url');
export function decodeCursor(text: string): ItemKey | undefined {
  try {
    const key = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as ItemKey;
    return typeof key?.pk === 'string' && typeof key.sk === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

export class Holdings {
  constructor(private readonly io: TableClient) {}

  /**
   * Puts a holding's items and its open mark (each once: a put that finds its item there changes
   * nothing). The mark goes first, so a holding is never open without it; the value's copy goes last, so
   * a start cut short leaves the mark without it, and the repair sweep finishes the start from the mark.
   * A record that comes again after its holding ended finds the value's copy ended, and takes the mark
   * it put away again. In a prefix pool its length's mark goes before them all, so `?within=` never
   * misses a holding for not knowing its length.
   */
  async start(stored: StoredHolding): Promise<void> {
    const length = holdingLengthKey(holdingPool(stored.holding), stored.holding.value);
    if (length)
      await this.io.doc.send(
        new PutCommand({ TableName: this.io.tableName, Item: { ...length, t: 'holding-length' } }),
      );
    // Conditional too: the mark of a start cut short says what its first delivery put in the copies.
    await this.io.conditional(
      new PutCommand({
        TableName: this.io.tableName,
        Item: { ...keysOf(stored).open, t: 'holding-open', start: stored.start, holding: stored.holding },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    const [byValue, ...others] = copiesOf(stored);
    for (const key of others) await this.putCopy(stored, key);
    if (!(await this.putCopy(stored, byValue!)) && (await this.endedAt(byValue!)))
      await this.io.doc.send(new DeleteCommand({ TableName: this.io.tableName, Key: keysOf(stored).open }));
  }

  private putCopy(stored: StoredHolding, key: ItemKey): Promise<boolean> {
    return this.io.conditional(
      new PutCommand({
        TableName: this.io.tableName,
        Item: { ...key, t: 'holding', start: stored.start, holding: stored.holding },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** Whether the holding copy at `key` has ended (read consistently). */
  private async endedAt(key: ItemKey): Promise<boolean> {
    const result = await this.io.doc.send(
      new GetCommand({ TableName: this.io.tableName, Key: key, ConsistentRead: true }),
    );
    return (result.Item?.holding as Holding | undefined)?.until !== undefined;
  }

  /**
   * Writes ended holdings as `end` leaves them (three copies each, no open mark, `expiresAt` for TTL),
   * unconditionally, 25 items a request: only for seeding the benchmark, never on a request path (there
   * a holding is put once, conditionally, by `start`).
   */
  async seed(holdings: readonly StoredHolding[], expiresAt: number): Promise<void> {
    const items = holdings.flatMap((stored) =>
      copiesOf(stored).map((key) => ({
        PutRequest: {
          Item: {
            ...key,
            t: 'holding',
            start: stored.start,
            holding: stored.holding,
            [TTL_ATTRIBUTE]: expiresAt,
          },
        },
      })),
    );
    for (let from = 0; from < items.length; from += 25) {
      let requests: Record<string, (typeof items)[number][]> | undefined = {
        [this.io.tableName]: items.slice(from, from + 25),
      };
      while (requests && Object.keys(requests).length > 0) {
        const result = await this.io.doc.send(new BatchWriteCommand({ RequestItems: requests }));
        requests = result.UnprocessedItems as typeof requests;
      }
    }
  }

  /** The newest holdings of a value (consistently: the history function decides on them). */
  async latestOfValue(pool: PoolId, value: string, limit: number): Promise<StoredHolding[]> {
    const sortable = holdingValueSortKey(pool.kind, value);
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
        ExpressionAttributeValues: {
          ':pk': holdingValuePk(pool),
          ':lo': `${sortable}#`,
          ':hi': `${sortable}#~`,
        },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (result.Items ?? []).map((item) => ({
      holding: item.holding as Holding,
      start: item.start as string,
    }));
  }

  /** The prefix lengths a prefix pool's holdings were ever of (a handful). */
  async prefixLengths(pool: PoolId): Promise<{ family: 4 | 6; length: number }[]> {
    const lengths: { family: 4 | 6; length: number }[] = [];
    for await (const item of this.io.pages({
      TableName: this.io.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': holdingLengthsPk(pool) },
    })) {
      const length = holdingLengthOf(item.sk as string);
      if (length) lengths.push(length);
    }
    return lengths;
  }

  /**
   * Ends a holding: its value's item first, unless it has ended already (then as it says), then the other
   * two as the value's item says, so every copy ends alike. `expiresAt`: when the store may forget it.
   */
  async end(stored: StoredHolding, until: string, ended: HoldingEnd, expiresAt: number): Promise<void> {
    const final = stored.holding.until
      ? { until: stored.holding.until, ended: stored.holding.ended ?? ended }
      : { until, ended };
    await this.updateCopies(stored, {
      UpdateExpression: 'SET #h.#until = :until, #h.#ended = :ended, #ttl = :ttl',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#h.#until)',
      ExpressionAttributeNames: {
        '#h': 'holding',
        '#until': 'until',
        '#ended': 'ended',
        '#ttl': TTL_ATTRIBUTE,
      },
      ExpressionAttributeValues: { ':until': final.until, ':ended': final.ended, ':ttl': expiresAt },
    });
    await this.io.doc.send(new DeleteCommand({ TableName: this.io.tableName, Key: keysOf(stored).open }));
  }

  /**
   * Takes a holding back without a trace (its copies and its open mark): only one the repair sweep
   * started in a lost record's stead, when the record's own holding turned up open beside it.
   */
  async remove(stored: StoredHolding): Promise<void> {
    // The value's copy last but the mark: cut short, the holding is still one the sweep finds and takes.
    const [byValue, ...others] = copiesOf(stored);
    for (const key of [...others, byValue!, keysOf(stored).open])
      await this.io.doc.send(new DeleteCommand({ TableName: this.io.tableName, Key: key }));
  }

  /** The pool's open holdings (consistently), page after page. */
  async *open(pool: PoolId): AsyncGenerator<StoredHolding> {
    for await (const item of this.io.pages({
      TableName: this.io.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': openHoldingsPk(pool) },
      ConsistentRead: true,
    }))
      yield { holding: item.holding as Holding, start: item.start as string };
  }

  /**
   * The holdings the open marks name, as their value's copies (which decide) say, read consistently, in
   * the marks' order: undefined where the copy was never put (a start cut short after its mark), ended
   * where an end was cut short before the mark went.
   */
  async asTheirCopiesSay(marks: readonly StoredHolding[]): Promise<(StoredHolding | undefined)[]> {
    const keys = marks.map((stored) => keysOf(stored).byValue);
    const found = await this.io.getByKey(keys, true);
    return keys.map((key) => {
      const item = found.get(itemKeyText(key));
      return item && { holding: item.holding as Holding, start: item.start as string };
    });
  }

  /** The newest holdings of every claim named `name` in `namespace` (consistently). */
  latestOfClaim(namespace: string, name: string, limit: number): Promise<StoredHolding[]> {
    return this.newest(claimHoldingsPk(namespace, name), limit);
  }

  /** A partition's newest holdings, read consistently. */
  private async newest(pk: string, limit: number): Promise<StoredHolding[]> {
    const result = await this.io.doc.send(
      new QueryCommand({
        TableName: this.io.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (result.Items ?? []).map((item) => ({
      holding: item.holding as Holding,
      start: item.start as string,
    }));
  }

  /** Says that the claim with this uid ended by its lease (read when its holding ends), for `seconds`. */
  async markExpired(claimUid: string, expiresAt: number): Promise<void> {
    await this.io.doc.send(
      new PutCommand({
        TableName: this.io.tableName,
        Item: { pk: `HX#${claimUid}`, sk: 'x', t: 'expired', [TTL_ATTRIBUTE]: expiresAt },
      }),
    );
  }

  async expired(claimUid: string): Promise<boolean> {
    const result = await this.io.doc.send(
      new GetCommand({
        TableName: this.io.tableName,
        Key: { pk: `HX#${claimUid}`, sk: 'x' },
        ConsistentRead: true,
      }),
    );
    return result.Item !== undefined;
  }

  /** A holding that ended `Released` by a claim whose lease had ended: `Expired`, on every copy. */
  async relabelExpired(stored: StoredHolding): Promise<void> {
    await this.updateCopies(stored, {
      UpdateExpression: 'SET #h.#ended = :expired',
      ConditionExpression: '#h.#ended = :released',
      ExpressionAttributeNames: { '#h': 'holding', '#ended': 'ended' },
      ExpressionAttributeValues: { ':expired': 'Expired', ':released': 'Released' },
    });
  }

  /** One conditional update of every copy of a holding, the value's first (a copy it misses is left be). */
  private async updateCopies(
    stored: StoredHolding,
    update: Omit<UpdateCommandInput, 'TableName' | 'Key'>,
  ): Promise<void> {
    for (const key of copiesOf(stored))
      await this.io.conditional(new UpdateCommand({ ...update, TableName: this.io.tableName, Key: key }));
  }

  /**
   * A page of a partition newest first, from `after` (a cursor), holdings that started at or before
   * `startedBy` only; `keep` filters, and `stop` ends the reading (nothing older can match).
   */
  async page(
    pk: string,
    options: {
      limit: number;
      after?: ItemKey;
      startedBy?: string;
      keep?: (holding: Holding) => boolean;
      stop?: (holding: Holding) => boolean;
    },
  ): Promise<HoldingPage> {
    const input: QueryCommandInput = {
      TableName: this.io.tableName,
      KeyConditionExpression: options.startedBy ? 'pk = :pk AND sk <= :by' : 'pk = :pk',
      ExpressionAttributeValues: {
        ':pk': pk,
        ...(options.startedBy ? { ':by': `${options.startedBy}~` } : {}),
      },
      ScanIndexForward: false,
      Limit: options.limit,
    };
    const items: Holding[] = [];
    let start: Item | undefined = options.after;
    do {
      const result = await this.io.doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
      start = result.LastEvaluatedKey;
      for (const item of result.Items ?? []) {
        const holding = item.holding as Holding;
        if (options.stop?.(holding)) return { items };
        if (options.keep && !options.keep(holding)) continue;
        items.push(holding);
        if (items.length === options.limit) {
          const last = { pk: item.pk as string, sk: item.sk as string };
          return { items, next: encodeCursor(last) };
        }
      }
    } while (start);
    return { items };
  }

  /**
   * A page of runs of one partition's keys, upward, run after run (`ranges` in key order, apart): a
   * value's or a range's holdings. From `after` (a cursor: a key of one of the runs, or before them);
   * `keep` filters, and `stop` ends the reading.
   */
  async ranges(
    pk: string,
    ranges: readonly KeyRange[],
    options: {
      limit: number;
      after?: ItemKey;
      keep?: (holding: Holding) => boolean;
      stop?: (holding: Holding) => boolean;
    },
  ): Promise<HoldingPage> {
    const items: Holding[] = [];
    const after = options.after?.pk === pk ? options.after.sk : undefined;
    for (const range of ranges) {
      if (after !== undefined && after >= range.hi) continue;
      let start: Item | undefined = after !== undefined && after >= range.lo ? { pk, sk: after } : undefined;
      do {
        const result = await this.io.doc.send(
          new QueryCommand({
            TableName: this.io.tableName,
            KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
            ExpressionAttributeValues: { ':pk': pk, ':lo': range.lo, ':hi': range.hi },
            Limit: options.limit,
            ExclusiveStartKey: start,
          }),
        );
        start = result.LastEvaluatedKey;
        for (const item of result.Items ?? []) {
          const holding = item.holding as Holding;
          if (options.stop?.(holding)) return { items };
          if (options.keep && !options.keep(holding)) continue;
          items.push(holding);
          if (items.length === options.limit)
            return { items, next: encodeCursor({ pk: item.pk as string, sk: item.sk as string }) };
        }
      } while (start);
    }
    return { items };
  }
}
