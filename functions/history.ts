/**
 * The history function: the table stream's second reader (its own event source mapping and filter,
 * lib/cloud/stream-filter.ts), appending each batch's changes of pools, claims and allocation objects to
 * the history watches read (lib/service/history/changes.ts). A batch either lands whole or throws, to be
 * delivered again from its first record: no partial failures are reported and the mapping does not
 * bisect, which is what makes a redelivery find what it already appended.
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { appendBatch, type HistoryOptions, type HistoryRecord } from '../lib/service/history/changes.ts';
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

/** Builds the handler; the local server passes its table and prunes what no TTL deletes there. */
export function createHistoryHandler(context?: Partial<ClaimContext>, options: HistoryOptions = {}) {
  const contextOf = lazyContext(context);
  return async (event: DynamoDBStreamEvent, _context?: Context): Promise<void> => {
    await appendBatch(contextOf().table, event.Records.map(historyRecordOf), options);
  };
}

export const handler = createHistoryHandler();
