/**
 * Counting what a DynamoDB client sends: an SDK middleware (one per client, so one per "Lambda instance")
 * that records every command with the time it was sent, the capacity it consumed, whether its condition
 * failed, and the partition-key values it wrote, in the table and in each index.
 *
 * Capacity: every item command gets `ReturnConsumedCapacity: 'TOTAL'`. dynalite reports table units only,
 * so the rest is estimated from the request, by these rules (printed with the results):
 * - index writes: a put whose item carries `gpk` writes the `allocations` index (projection ALL):
 *   +ceil(item bytes / 1 KB); one whose item carries `wpk` writes `waiting` (KEYS_ONLY): +1. An UpdateItem
 *   that SETs `wpk` writes `waiting`: +1 (a REMOVE of `wpk` is counted 0: the request does not show whether
 *   the item had one). An UpdateItem or DeleteItem of an allocation item (`pk` `A#…`, which always carries
 *   `gpk`) writes `allocations`: +1 (allocation items are under 1 KB); a group summary shares the `A#`
 *   prefix but not the index (its `sk` is `~`): +0.
 * - a write whose condition fails consumes capacity in DynamoDB but dynalite reports none: +ceil(item
 *   bytes / 1 KB) for a put (the existing item is of the same shape), +1 for an update or delete; no index
 *   units.
 * - a read that finds nothing: dynalite reports 0 for an empty Query, DynamoDB charges its minimum, 0.5
 *   (eventually consistent) or 1 (strongly consistent).
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';

const require = createRequire(import.meta.url);

/**
 * Whether the store reports index write units itself (DynamoDB Local does, in TOTAL; dynalite does not),
 * so the index estimate above is left out rather than counted twice (bench/dynamodb-local.ts sets it).
 */
export const storeCapacity = { reportsIndexUnits: false };
/** dynalite's own item-size function, so the index estimate sizes items the way its table units do. */
const { itemSize } = require('dynalite/db') as { itemSize: (item: Record<string, unknown>) => number };

export type KeySpace = 'table' | 'allocations' | 'waiting' | 'leases';

export interface Write {
  space: KeySpace;
  /** The partition-key value written; undefined when the request does not show it (see `unattributed`). */
  key: string | undefined;
}

export interface RequestRecord {
  /** When the command was sent (ms since the epoch). */
  at: number;
  operation: string;
  /** Table units as dynalite reported them. */
  reportedUnits: number;
  /** Index write units estimated from the request. */
  indexUnits: number;
  /** Units DynamoDB charges that dynalite does not report (failed conditions, empty reads). */
  correctionUnits: number;
  conditionalFailure: boolean;
  /** Another error (not a failed condition). */
  error?: string;
  /** HTTP attempts the SDK made for this command (1 unless it retried). */
  attempts: number;
  /** From the command's send to its answer (the SDK's work both ways, the round trip, the store's work). */
  ms: number;
  /** Item operations the store serves for it: the keys of a BatchGetItem, else 1. */
  items: number;
  /** When the command was sent and answered (performance.now()), to tell requests in flight together. */
  sentAt: number;
  answeredAt: number;
  writes: Write[];
  /** Partition-key values read (Get, Query). */
  reads: string[];
}

export function unitsOf(record: RequestRecord): number {
  return record.reportedUnits + record.indexUnits + record.correctionUnits;
}

const ITEM_COMMANDS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchWriteItem',
  'BatchGetItem',
]);

type Input = Record<string, any>;

/** A key attribute, in the document client's native form or the low-level AttributeValue form. */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string')
    return (value as { S: string }).S;
  return undefined;
}

function isMarshalled(item: Input): boolean {
  const pk = item.pk as unknown;
  return typeof pk === 'object' && pk !== null && 'S' in pk;
}

/** The item's size as DynamoDB bills it (attribute names plus values), in bytes. */
export function itemBytes(item: Input): number {
  const marshalled = isMarshalled(item)
    ? item
    : marshall(item, { removeUndefinedValues: true, convertEmptyValues: false });
  return itemSize(marshalled as Record<string, unknown>);
}

const kilobytes = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** The writes a put of `item` makes, and the index units it costs when it succeeds. */
function putWrites(item: Input): { writes: Write[]; indexUnits: number; bytes: number } {
  const bytes = itemBytes(item);
  const writes: Write[] = [{ space: 'table', key: text(item.pk) }];
  let indexUnits = 0;
  const gpk = text(item.gpk);
  if (gpk !== undefined) {
    writes.push({ space: 'allocations', key: gpk });
    indexUnits += kilobytes(bytes);
  }
  const wpk = text(item.wpk);
  if (wpk !== undefined) {
    writes.push({ space: 'waiting', key: wpk });
    indexUnits += 1;
  }
  // A lease's claim: its entry in the leases index (KEYS_ONLY, one unit).
  const lpk = text(item.lpk);
  if (lpk !== undefined) {
    writes.push({ space: 'leases', key: lpk });
    indexUnits += 1;
  }
  return { writes, indexUnits, bytes };
}

/** Index attributes an UpdateItem SETs: `wpk = :x` in the expression, valued from its attribute values. */
function updatedIndexKeys(input: Input): { gpk?: string; wpk?: string } {
  const expression = String(input.UpdateExpression ?? '');
  const setClause = expression.split(/\bREMOVE\b/)[0] ?? '';
  const found: { gpk?: string; wpk?: string } = {};
  for (const match of setClause.matchAll(/\b(gpk|wpk)\s*=\s*(:\w+)/g)) {
    const value = text((input.ExpressionAttributeValues as Input | undefined)?.[match[2]!]);
    if (value !== undefined) found[match[1] as 'gpk' | 'wpk'] = value;
  }
  return found;
}

/** What one command writes and reads, and the index units it costs if it succeeds. */
function describe(
  operation: string,
  input: Input,
): { writes: Write[]; reads: string[]; indexUnits: number; failedUnits: number } {
  switch (operation) {
    case 'PutItem': {
      const put = putWrites(input.Item as Input);
      return { writes: put.writes, reads: [], indexUnits: put.indexUnits, failedUnits: kilobytes(put.bytes) };
    }
    case 'UpdateItem':
    case 'DeleteItem': {
      const pk = text((input.Key as Input).pk);
      const writes: Write[] = [{ space: 'table', key: pk }];
      let indexUnits = 0;
      if (pk?.startsWith('A#') && text((input.Key as Input).sk) !== '~') {
        writes.push({ space: 'allocations', key: undefined });
        indexUnits += 1;
      }
      if (operation === 'UpdateItem') {
        const set = updatedIndexKeys(input);
        if (set.wpk !== undefined) {
          writes.push({ space: 'waiting', key: set.wpk });
          indexUnits += 1;
        }
        if (set.gpk !== undefined) {
          writes.push({ space: 'allocations', key: set.gpk });
          indexUnits += 1;
        }
        // A renewal moves its claim's entry in the leases index (its sort key): a delete and a put there.
        if (/\blsk\s*=/.test(String(input.UpdateExpression ?? ''))) {
          writes.push({ space: 'leases', key: undefined });
          indexUnits += 2;
        }
      }
      // An expiry's delete takes the claim's entry in the leases index with it.
      if (operation === 'DeleteItem' && /\bleaseExpiresAt\b/.test(String(input.ConditionExpression ?? ''))) {
        writes.push({ space: 'leases', key: undefined });
        indexUnits += 1;
      }
      return { writes, reads: [], indexUnits, failedUnits: 1 };
    }
    case 'BatchWriteItem': {
      const writes: Write[] = [];
      let indexUnits = 0;
      for (const requests of Object.values(input.RequestItems as Record<string, Input[]>)) {
        for (const request of requests) {
          if (request.PutRequest) {
            const put = putWrites(request.PutRequest.Item as Input);
            writes.push(...put.writes);
            indexUnits += put.indexUnits;
          } else if (request.DeleteRequest) {
            const pk = text((request.DeleteRequest.Key as Input).pk);
            writes.push({ space: 'table', key: pk });
            if (pk?.startsWith('A#')) {
              writes.push({ space: 'allocations', key: undefined });
              indexUnits += 1;
            }
          }
        }
      }
      return { writes, reads: [], indexUnits, failedUnits: 0 };
    }
    case 'GetItem': {
      const pk = text((input.Key as Input).pk);
      return { writes: [], reads: pk === undefined ? [] : [pk], indexUnits: 0, failedUnits: 0 };
    }
    case 'BatchGetItem': {
      const reads: string[] = [];
      for (const request of Object.values(input.RequestItems as Record<string, { Keys: Input[] }>))
        for (const key of request.Keys) {
          const pk = text(key.pk);
          if (pk !== undefined) reads.push(pk);
        }
      return { writes: [], reads, indexUnits: 0, failedUnits: 0 };
    }
    case 'Query': {
      const values = (input.ExpressionAttributeValues ?? {}) as Input;
      const key = text(values[':pk']) ?? text(values[':gpk']) ?? text(values[':wpk']) ?? text(values[':lpk']);
      return { writes: [], reads: key === undefined ? [] : [key], indexUnits: 0, failedUnits: 0 };
    }
    default:
      return { writes: [], reads: [], indexUnits: 0, failedUnits: 0 };
  }
}

function reportedUnits(output: unknown): number {
  const consumed = (output as { ConsumedCapacity?: unknown } | undefined)?.ConsumedCapacity;
  const list = Array.isArray(consumed) ? consumed : consumed ? [consumed] : [];
  return list.reduce((sum: number, entry: { CapacityUnits?: number }) => sum + (entry.CapacityUnits ?? 0), 0);
}

/** The records of one client's commands. */
export class Meter {
  readonly records: RequestRecord[] = [];

  /** Installs the counting middleware on a client (before the document client marshals, so once a command). */
  attach(client: DynamoDBClient): this {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName ?? 'unknown').replace(/Command$/, '');
        const itemCommand = ITEM_COMMANDS.has(operation);
        const input = { ...(args.input as Input) };
        if (itemCommand) input.ReturnConsumedCapacity = 'TOTAL';
        const described = itemCommand
          ? describe(operation, input)
          : { writes: [], reads: [], indexUnits: 0, failedUnits: 0 };
        const record: RequestRecord = {
          at: Date.now(),
          operation,
          reportedUnits: 0,
          indexUnits: 0,
          correctionUnits: 0,
          conditionalFailure: false,
          attempts: 1,
          ms: 0,
          items: operation === 'BatchGetItem' ? Math.max(1, described.reads.length) : 1,
          sentAt: 0,
          answeredAt: 0,
          writes: described.writes,
          reads: described.reads,
        };
        this.records.push(record);
        const sent = performance.now();
        record.sentAt = sent;
        try {
          const result = await next({ ...args, input });
          record.answeredAt = performance.now();
          record.ms = record.answeredAt - sent;
          const output = result.output as Input;
          record.attempts = (output.$metadata as { attempts?: number } | undefined)?.attempts ?? 1;
          record.reportedUnits = reportedUnits(output);
          record.indexUnits = storeCapacity.reportsIndexUnits ? 0 : described.indexUnits;
          if (record.reportedUnits === 0 && (operation === 'Query' || operation === 'GetItem'))
            record.correctionUnits = input.ConsistentRead === true ? 1 : 0.5;
          return result;
        } catch (error) {
          record.answeredAt = performance.now();
          record.ms = record.answeredAt - sent;
          const failure = error as { name?: string; $metadata?: { attempts?: number } };
          record.attempts = failure.$metadata?.attempts ?? 1;
          if (failure.name === 'ConditionalCheckFailedException') {
            record.conditionalFailure = true;
            record.correctionUnits = described.failedUnits;
            // A failed write changes no index; the table partition still served it.
            record.writes = record.writes.filter((write) => write.space === 'table');
          } else {
            record.error = failure.name ?? String(error);
          }
          throw error;
        }
      },
      { step: 'initialize', name: 'benchMeter', priority: 'high' },
    );
    return this;
  }

  /** A position to total from. */
  mark(): number {
    return this.records.length;
  }

  since(mark: number): RequestRecord[] {
    return this.records.slice(mark);
  }
}

export interface Totals {
  requests: number;
  units: number;
  conditionalFailures: number;
  errors: number;
  retries: number;
}

/**
 * Sequential round trips: the longest chain of requests each sent after the one before it was answered,
 * so requests in flight together (a Promise.all, a BatchGetItem's keys) count once. The greedy pick by
 * earliest answer finds the longest such chain of intervals.
 */
export function roundTrips(records: readonly Pick<RequestRecord, 'sentAt' | 'answeredAt'>[]): number {
  let count = 0;
  let free = -Infinity;
  for (const record of [...records].sort((a, b) => a.answeredAt - b.answeredAt)) {
    if (record.sentAt < free) continue;
    count++;
    free = record.answeredAt;
  }
  return count;
}

export function totals(records: readonly RequestRecord[]): Totals {
  let units = 0;
  let conditionalFailures = 0;
  let errors = 0;
  let retries = 0;
  for (const record of records) {
    units += unitsOf(record);
    if (record.conditionalFailure) conditionalFailures++;
    if (record.error) errors++;
    retries += record.attempts - 1;
  }
  return { requests: records.length, units, conditionalFailures, errors, retries };
}

// ---------------------------------------------------------------- statistics

/** The median (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The nearest-rank percentile: the smallest value with at least p% of the values at or below it. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export interface Distribution {
  median: number;
  p99: number;
  max: number;
  mean: number;
}

export function distribution(values: readonly number[]): Distribution {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return {
    median: round(median(values)),
    p99: round(percentile(values, 99)),
    max: round(Math.max(...values)),
    mean: round(mean),
  };
}

export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/**
 * Adds `ms` of latency to every command a client sends (an SDK middleware, before the counting one sees
 * the answer): DynamoDB's typical few milliseconds a request, which the embedded store does not have.
 */
export function injectLatency(client: DynamoDBClient, ms: number): DynamoDBClient {
  if (ms <= 0) return client;
  client.middlewareStack.add(
    (next) => async (args) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return next(args);
    },
    { step: 'finalizeRequest', name: 'benchLatency' },
  );
  return client;
}

/** Requests and capacity units by operation, over some records. */
export function byOperation(
  records: readonly RequestRecord[],
): Record<string, { requests: number; units: number }> {
  const out: Record<string, { requests: number; units: number }> = {};
  for (const record of records) {
    const entry = (out[record.operation] ??= { requests: 0, units: 0 });
    entry.requests++;
    entry.units += unitsOf(record);
  }
  return out;
}
