/**
 * The stream function: Powertools' batch processor around lib/service/reconcile.ts. Each record is handled on its
 * own and reported failed alone (ReportBatchItemFailures); then each pool the batch touched gets the
 * batch's slot changes in its counts at once (lib/service/tally.ts), and a pool that fails to refresh fails the
 * records that touched it, so a retry refreshes it.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

import { lazyContext } from './context.ts';
import { reconcileRecord, refreshPool, type ChangeRecord } from '../lib/service/reconcile.ts';

import type { SlotChange } from '../lib/service/tally.ts';
import type { EventSink } from '../lib/domain/events.ts';
import { lazySink, publishStreamEvents } from './stream-events.ts';
import { type PoolId } from '../lib/store/keys.ts';
import { type ClaimContext } from '../lib/service/context.ts';

const logger = new Logger({ serviceName: 'allot' });

function changeOf(record: DynamoDBRecord): ChangeRecord {
  const image = (value: unknown) => (value ? unmarshall(value as Record<string, AttributeValue>) : undefined);
  const keys = unmarshall(record.dynamodb!.Keys as Record<string, AttributeValue>);
  return {
    id: record.eventID ?? record.dynamodb!.SequenceNumber!,
    eventName: record.eventName!,
    keys: { pk: keys.pk as string, sk: keys.sk as string },
    oldImage: image(record.dynamodb?.OldImage),
    newImage: image(record.dynamodb?.NewImage),
  };
}

const poolKey = (pool: PoolId) => `${pool.namespace}\u0000${pool.kind}\u0000${pool.name}`;

/** Builds the handler; tests and the local stream emulation pass their own table and event sink. */
export function createStreamHandler(context?: Partial<ClaimContext>, options: { events?: EventSink } = {}) {
  const contextOf = lazyContext(context);
  const sinkOf = lazySink(options.events);

  return async (event: DynamoDBStreamEvent, _context?: Context): Promise<DynamoDBBatchResponse> => {
    const touched = new Map<
      string,
      { pool: PoolId; changes: SlotChange[]; recount: boolean; removed: boolean; records: string[] }
    >();
    const processor = new BatchProcessor(EventType.DynamoDBStreams);
    const response = await processPartialResponse(
      event,
      async (record: DynamoDBRecord) => {
        for (const { pool, change, recount, removed } of await reconcileRecord(
          contextOf(),
          changeOf(record),
        )) {
          const entry = touched.get(poolKey(pool)) ?? {
            pool,
            changes: [],
            recount: false,
            removed: false,
            records: [],
          };
          if (change) entry.changes.push(change);
          entry.recount ||= recount === true;
          entry.removed ||= removed === true;
          entry.records.push(record.dynamodb!.SequenceNumber!);
          touched.set(poolKey(pool), entry);
        }
      },
      processor,
      { processInParallel: false, throwOnFullBatchFailure: false },
    );
    const failures = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
    for (const { pool, changes, recount, removed, records } of touched.values()) {
      try {
        await refreshPool(contextOf(), pool, changes, { recount, removed });
      } catch (error) {
        logger.error('pool refresh failed', { pool, error: error as Error });
        for (const sequence of records) failures.add(sequence);
      }
    }
    // Events come from the records alone (lib/domain/events.ts): published for the whole batch, failed or not.
    await publishStreamEvents(event, sinkOf());
    return { batchItemFailures: [...failures].map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

export const handler = createStreamHandler();
