/**
 * The event source mappings on the table's stream, in one place: the stream function's and the history
 * function's, each with the filter of lib/cloud/stream-filter.ts that the local server applies too.
 */
import { Duration } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDlq, type DynamoEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { HISTORY_FILTER_PATTERNS, STREAM_FILTER_PATTERNS } from './stream-filter.ts';
import { HISTORY_MAPPING, STREAM_MAPPING } from './stream-mapping.ts';

/**
 * The stream's event source settings, in one place (aws-solutions-constructs'
 * `lambda-event-source-mapping-defaults.ts`): a poison record is isolated by bisecting, retried a bounded
 * number of times for at most a day, then reported to the dead-letter queue; the handler reports
 * per-record failures, and only the records `lib/cloud/stream-filter.ts` names reach it.
 */
export function streamEventSourceProps(deadLetterQueue: sqs.IQueue): DynamoEventSourceProps {
  return {
    startingPosition: lambda.StartingPosition.TRIM_HORIZON,
    batchSize: STREAM_MAPPING.batchSize,
    maxBatchingWindow: Duration.seconds(STREAM_MAPPING.maxBatchingWindowSeconds),
    bisectBatchOnError: true,
    retryAttempts: STREAM_MAPPING.retryAttempts,
    maxRecordAge: Duration.hours(STREAM_MAPPING.maxRecordAgeHours),
    // Several batches of a shard at once. Lambda still keeps each item's records in order ("in-order
    // processing at the item (partition and sort key) level", https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html),
    // as DynamoDB Streams writes them ("for each item ... the stream records appear in the same sequence
    // as the actual modifications to the item", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html).
    // That is enough for every effect of the stream function: an item's own work sees its changes in
    // order, and work on two items was already unordered (two shards, any order), so every effect reads
    // what it decides on and writes conditionally (lib/service/stream/batch.ts has the argument).
    parallelizationFactor: STREAM_MAPPING.parallelizationFactor,
    reportBatchItemFailures: true,
    onFailure: new SqsDlq(deadLetterQueue),
    filters: STREAM_FILTER_PATTERNS.map((pattern) => lambda.FilterCriteria.filter(pattern)),
  };
}

/**
 * The history function's event source (lib/service/history/changes.ts): the table stream's second reader
 * (DynamoDB Streams serves two readers per shard at once; this and the stream function's are the two).
 * A batch that fails is retried whole from its first record until it succeeds or its records leave the
 * stream (24 hours): no bisecting, no partial failures, no dead-letter queue, since a record left out
 * would be a change some watcher never sees; records arrive as soon as they are read (no batching window).
 */
export function historyEventSourceProps(): DynamoEventSourceProps {
  return {
    startingPosition: lambda.StartingPosition.TRIM_HORIZON,
    batchSize: HISTORY_MAPPING.batchSize,
    bisectBatchOnError: false,
    reportBatchItemFailures: false,
    parallelizationFactor: HISTORY_MAPPING.parallelizationFactor,
    filters: HISTORY_FILTER_PATTERNS.map((pattern) => lambda.FilterCriteria.filter(pattern)),
  };
}
