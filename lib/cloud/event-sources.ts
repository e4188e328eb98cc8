/**
 * The event source mappings on the table's stream, in one place: the stream function's and the history
 * function's, each with the filter of lib/cloud/stream-filter.ts that the local server applies too.
 */
import { Duration } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDlq, type DynamoEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { HISTORY_FILTER_PATTERNS, STREAM_FILTER_PATTERNS } from './stream-filter.ts';

/**
 * The stream's event source settings, in one place (aws-solutions-constructs'
 * `lambda-event-source-mapping-defaults.ts`): a poison record is isolated by bisecting, retried a bounded
 * number of times for at most a day, then reported to the dead-letter queue; the handler reports
 * per-record failures, and only the records `lib/cloud/stream-filter.ts` names reach it.
 */
export function streamEventSourceProps(deadLetterQueue: sqs.IQueue): DynamoEventSourceProps {
  return {
    startingPosition: lambda.StartingPosition.TRIM_HORIZON,
    batchSize: 100,
    maxBatchingWindow: Duration.seconds(1),
    bisectBatchOnError: true,
    retryAttempts: 5,
    maxRecordAge: Duration.hours(24),
    // One batch at a time per shard, so a key's changes reach the handler in order.
    parallelizationFactor: 1,
    reportBatchItemFailures: true,
    onFailure: new SqsDlq(deadLetterQueue),
    filters: STREAM_FILTER_PATTERNS.map((pattern) => lambda.FilterCriteria.filter(pattern)),
  };
}

/**
 * The history function's event source (lib/service/history.ts): the table stream's second reader
 * (DynamoDB Streams serves two readers per shard at once; this and the stream function's are the two).
 * A batch that fails is retried whole from its first record until it succeeds or its records leave the
 * stream (24 hours): no bisecting, no partial failures, no dead-letter queue, since a record left out
 * would be a change some watcher never sees; records arrive as soon as they are read (no batching window).
 */
export function historyEventSourceProps(): DynamoEventSourceProps {
  return {
    startingPosition: lambda.StartingPosition.TRIM_HORIZON,
    batchSize: 100,
    bisectBatchOnError: false,
    reportBatchItemFailures: false,
    parallelizationFactor: 1,
    filters: HISTORY_FILTER_PATTERNS.map((pattern) => lambda.FilterCriteria.filter(pattern)),
  };
}
