/**
 * DynamoDB's time to live, emulated for `npm start` and the tests: dynalite has none, and DynamoDB Local
 * documents none ("TTL is currently not supported on DynamoDB local", its usage notes). Every few
 * seconds, and on demand (`expireDue`, for a test that moved its clock), the expirer finds the items
 * whose TTL attribute (epoch seconds) is before now and deletes each, conditional on that same value (an
 * item renewed meanwhile stays), as TTL does: some time after the item's time, never before.
 *
 * Its deletes reach the stream function as TTL's do: a REMOVE whose `userIdentity` is the TTL service's.
 * A delete request cannot say so itself, so the expirer notes each one here first (table, key, TTL value)
 * and the local streams (dynalite's emulation, DynamoDB Local's consumer) give the REMOVE of a noted
 * item the identity (`ttlIdentityOf`).
 */
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  ScanCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { TTL_IDENTITY } from '../../domain/events.ts';
import { TABLE_PARTITION_KEY, TABLE_SORT_KEY, TTL_ATTRIBUTE } from '../../store/schema.ts';

/** How often the expirer looks (TTL's own delay is days at worst; the service bounds expiry itself). */
export const LOCAL_TTL_INTERVAL_MS = 5_000;

/** Deletes noted, newest last, at most this many (a REMOVE record follows its delete within moments). */
const NOTED_MAX = 10_000;
const noted = new Set<string>();

type Image = Record<string, AttributeValue>;

const noteKey = (tableName: string, image: Image) =>
  [tableName, image[TABLE_PARTITION_KEY]?.S, image[TABLE_SORT_KEY]?.S, image[TTL_ATTRIBUTE]?.N ?? ''].join(
    '\u0000',
  );

/** The record with TTL's identity when it is the REMOVE of an item the expirer deleted; else as it is. */
export function withTtlIdentity(tableName: string, record: DynamoDBRecord): DynamoDBRecord {
  const old = record.dynamodb?.OldImage as Image | undefined;
  if (record.eventName !== 'REMOVE' || !old?.[TTL_ATTRIBUTE] || !noted.has(noteKey(tableName, old)))
    return record;
  return { ...record, userIdentity: { ...TTL_IDENTITY } };
}

/** The table a stream record's ARN names (`…:table/<name>/stream/…`). */
export function tableOfRecord(record: DynamoDBRecord): string {
  return /:table\/([^/]+)\//.exec(record.eventSourceARN ?? '')?.[1] ?? '';
}

export interface LocalTtlOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Now, epoch ms (a test's clock); default the system's. */
  now?: () => number;
  /** 0: on demand only. */
  intervalMs?: number;
}

export class LocalTtl {
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  private stopped = false;

  constructor(private readonly options: LocalTtlOptions) {}

  start(): this {
    const interval = this.options.intervalMs ?? LOCAL_TTL_INTERVAL_MS;
    if (interval > 0)
      this.timer = setInterval(
        () => void this.expireDue().catch((error: unknown) => console.error('ttl emulation:', error)),
        interval,
      );
    return this;
  }

  /** Deletes every item whose TTL has passed; how many it deleted. One pass at a time. */
  expireDue(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops the schedule; resolves once a pass under way has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<number> {
    const { client, tableName } = this.options;
    const seconds = Math.floor((this.options.now ?? Date.now)() / 1000);
    let deleted = 0;
    let start: Image | undefined;
    do {
      if (this.stopped) break;
      const page = await client.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: '#ttl < :now',
          ProjectionExpression: '#pk, #sk, #ttl',
          ExpressionAttributeNames: {
            '#pk': TABLE_PARTITION_KEY,
            '#sk': TABLE_SORT_KEY,
            '#ttl': TTL_ATTRIBUTE,
          },
          ExpressionAttributeValues: { ':now': { N: String(seconds) } },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) if (await this.expire(item)) deleted++;
      start = page.LastEvaluatedKey;
    } while (start);
    return deleted;
  }

  private async expire(item: Image): Promise<boolean> {
    const { client, tableName } = this.options;
    const note = noteKey(tableName, item);
    noted.add(note);
    if (noted.size > NOTED_MAX) noted.delete(noted.values().next().value!);
    try {
      await client.send(
        new DeleteItemCommand({
          TableName: tableName,
          Key: { [TABLE_PARTITION_KEY]: item[TABLE_PARTITION_KEY]!, [TABLE_SORT_KEY]: item[TABLE_SORT_KEY]! },
          ConditionExpression: '#ttl = :seen',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':seen': item[TTL_ATTRIBUTE]! },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}
