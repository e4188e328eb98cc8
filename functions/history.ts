/**
 * The history function: the table stream's second reader (its own event source mapping and filter,
 * lib/cloud/stream-filter.ts), appending each batch's changes of pools, claims and allocation objects to
 * the history watches read, with each object's last state in the collection's index
 * (lib/service/history/changes.ts: why a watch misses nothing and repeats nothing), then keeping who held
 * each value (lib/service/history/holdings.ts). A list stands at one position of that history, so a watch
 * from its resourceVersion repeats nothing it showed (lib/service/history/snapshot.ts argues it). A batch either lands whole or throws, to be
 * delivered again from its first record: no partial failures are reported and the mapping does not
 * bisect, which is what makes a redelivery find what it already appended.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { HoldingChange } from '../lib/domain/objects/holdings.ts';
import { TTL_IDENTITY } from '../lib/domain/events.ts';
import { appendBatch, type HistoryOptions, type HistoryRecord } from '../lib/service/history/changes.ts';
import { recordHoldings } from '../lib/service/history/holdings.ts';
import { type ClaimContext } from '../lib/service/context.ts';
import { lazyContext } from './context.ts';

const image = (value: unknown) =>
  value ? (unmarshall(value as Record<string, AttributeValue>) as Record<string, unknown>) : undefined;

function historyRecordOf(record: DynamoDBRecord): HistoryRecord {
  return {
    id: record.eventID ?? record.dynamodb!.SequenceNumber!,
    oldImage: image(record.dynamodb?.OldImage),
    newImage: image(record.dynamodb?.NewImage),
  };
}

function holdingChangeOf(record: DynamoDBRecord, at: number): HoldingChange {
  return {
    oldImage: image(record.dynamodb?.OldImage),
    newImage: image(record.dynamodb?.NewImage),
    at,
    recordedAt: Math.floor(record.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000,
    sequence: record.dynamodb?.SequenceNumber ?? '0',
    byTtl: record.userIdentity?.principalId === TTL_IDENTITY.principalId,
  };
}

const retentionDays = () => {
  const days = Number(process.env.ALLOT_HISTORY_RETENTION_DAYS);
  return Number.isFinite(days) && days > 0 ? days : undefined;
};

/** Builds the handler; the local server passes its table and prunes what no TTL deletes there. */
export function createHistoryHandler(context?: Partial<ClaimContext>, options: HistoryOptions = {}) {
  const contextOf = lazyContext(context);
  return async (event: DynamoDBStreamEvent, _context?: Context): Promise<void> => {
    const { table } = contextOf();
    await appendBatch(table, event.Records.map(historyRecordOf), options);
    const at = Date.now();
    await recordHoldings(
      table,
      event.Records.map((record) => holdingChangeOf(record, at)),
      { retentionDays: retentionDays() },
    );
  };
}

export const handler = createHistoryHandler();
