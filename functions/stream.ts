/**
 * The stream function: a batch's records go to lib/service/stream/batch.ts, which groups them by item,
 * reads once for the whole batch, works on the items side by side (each item's records in order) and
 * then on each touched pool's counts; the records of an item whose work failed, or whose pool's counts
 * did, are reported failed (ReportBatchItemFailures), so the event source mapping delivers them again.
 * (Powertools' BatchProcessor handles records one by one; a batch worked on as a whole needs this.)
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

import { lazyContext } from './context.ts';
import { handleBatch } from '../lib/service/stream/batch.ts';
import { StreamMemory } from '../lib/service/stream/memory.ts';
import type { ChangeRecord } from '../lib/service/stream/records.ts';
import type { EventSink } from '../lib/domain/events.ts';
import { lazySink, publishStreamEvents } from './stream-events.ts';
import { type ClaimContext } from '../lib/service/context.ts';

const logger = new Logger({ serviceName: 'allot' });

export function changeOf(record: DynamoDBRecord): ChangeRecord {
  const image = (value: unknown) => (value ? unmarshall(value as Record<string, AttributeValue>) : undefined);
  const keys = unmarshall(record.dynamodb!.Keys as Record<string, AttributeValue>);
  const seconds = record.dynamodb?.ApproximateCreationDateTime;
  return {
    id: record.eventID ?? record.dynamodb!.SequenceNumber!,
    eventName: record.eventName!,
    keys: { pk: keys.pk as string, sk: keys.sk as string },
    oldImage: image(record.dynamodb?.OldImage),
    newImage: image(record.dynamodb?.NewImage),
    ...(typeof seconds === 'number' && { at: seconds * 1000 }),
  };
}

/** Builds the handler; tests and the local stream emulation pass their own table and event sink. */
export function createStreamHandler(context?: Partial<ClaimContext>, options: { events?: EventSink } = {}) {
  const contextOf = lazyContext(context);
  const sinkOf = lazySink(options.events);
  // Kept from batch to batch of this instance (facts only: claims seen removed).
  const memory = new StreamMemory();

  return async (event: DynamoDBStreamEvent, _context?: Context): Promise<DynamoDBBatchResponse> => {
    const changes = event.Records.map(changeOf);
    const sequenceOf = new Map<string, string[]>();
    event.Records.forEach((record, i) => {
      const id = changes[i]!.id;
      sequenceOf.set(id, [...(sequenceOf.get(id) ?? []), record.dynamodb!.SequenceNumber!]);
    });
    const failures = new Set<string>();
    for (const failure of await handleBatch(contextOf(), changes, memory)) {
      logger.error('stream work failed', { what: failure.what, error: failure.error as Error });
      for (const id of failure.records)
        for (const sequence of sequenceOf.get(id) ?? []) failures.add(sequence);
    }
    // Events come from the records alone (lib/domain/events.ts): published for the whole batch, failed or not.
    await publishStreamEvents(event, sinkOf());
    return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

export const handler = createStreamHandler();
