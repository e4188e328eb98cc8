/**
 * What the stream function does with a batch besides reconciling: derive the domain events from the
 * records (lib/domain/events.ts), publish them, and record the metrics the records carry (claims allocated and
 * pending, per-pool utilisation when it changes, how old a release record was when reclaim ran).
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import {
  deriveEvents,
  poolUtilisations,
  reclaimAges,
  TTL_IDENTITY,
  type AllotEvent,
  type EventSink,
  type StreamChange,
} from '../lib/domain/events.ts';
import { sinkFromEnvironment } from './event-bus.ts';
import { logger } from './observability.ts';
import { METRIC, MetricUnit, metrics, type METRIC_NAME } from './metrics.ts';

export function streamChangeOf(record: DynamoDBRecord): StreamChange {
  const image = (value: unknown) => (value ? unmarshall(value as Record<string, AttributeValue>) : undefined);
  const seconds = record.dynamodb?.ApproximateCreationDateTime ?? 0;
  return {
    eventName: record.eventName!,
    oldImage: image(record.dynamodb?.OldImage),
    newImage: image(record.dynamodb?.NewImage),
    // Whole seconds, as the record has them, written like the objects' own timestamps.
    recordedAt: new Date(seconds * 1000).toISOString().replace(/\.000Z$/, 'Z'),
    ...(record.userIdentity?.type === TTL_IDENTITY.type &&
      record.userIdentity?.principalId === TTL_IDENTITY.principalId && { byTtl: true }),
  };
}

const COUNTED: Partial<Record<AllotEvent['detailType'], METRIC_NAME>> = {
  'Claim Allocated': METRIC.claimsAllocated,
  'Claim Pending': METRIC.claimsPending,
};

/**
 * Publishes a batch's events and records its metrics. Throws when the events cannot be published, so the
 * batch is retried (reconciling again is harmless, and the events keep their ids).
 */
export async function publishStreamEvents(
  event: DynamoDBStreamEvent,
  sink: EventSink,
  now = Date.now(),
): Promise<AllotEvent[]> {
  const changes = event.Records.map(streamChangeOf);
  const events = deriveEvents(changes);
  await sink.publish(events);
  for (const published of events) {
    const metric = COUNTED[published.detailType];
    if (metric) metrics.addMetric(metric, MetricUnit.Count, 1);
  }
  if (events.length > 0) metrics.addMetric(METRIC.eventsPublished, MetricUnit.Count, events.length);
  for (const age of reclaimAges(changes, now))
    metrics.addMetric(METRIC.reclaimRecordAge, MetricUnit.Milliseconds, age);
  for (const { namespace, pool, percent } of poolUtilisations(changes)) {
    // Its own EMF line: each pool is a dimension set of its own.
    const single = metrics.singleMetric();
    single.addDimensions({ Namespace: namespace, PoolKind: pool.kind, Pool: pool.name });
    single.addMetric(METRIC.poolUtilisation, MetricUnit.Percent, percent);
    logger.info('pool utilisation changed', { namespace, pool: pool.name, poolKind: pool.kind, percent });
  }
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  return events;
}

/** The sink a stream handler publishes to, built on first use. */
export function lazySink(given?: EventSink): () => EventSink {
  let sink = given;
  return () => (sink ??= sinkFromEnvironment());
}
