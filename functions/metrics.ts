/**
 * EMF metrics in the `Allot` namespace, one instance per handler instance, for the functions that record
 * them (claim, stream, repair): the others leave Powertools' Metrics out of their bundles.
 */
// First: its defaults for outside Lambda (metrics off) are set before the Metrics below reads them.
import './observability.ts';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

export const METRICS_NAMESPACE = 'Allot';

export const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'allot' });

export { MetricUnit };

/** The metric names, in one place (docs/events.md, "Metrics"; the construct's alarms and dashboard). */
export const METRIC = {
  claimsAllocated: 'ClaimsAllocated',
  claimsPending: 'ClaimsPending',
  conditionalCheckFailures: 'ConditionalCheckFailures',
  claimLatency: 'ClaimLatency',
  reclaimRecordAge: 'ReclaimRecordAge',
  poolUtilisation: 'PoolUtilisation',
  eventsPublished: 'EventsPublished',
  repairs: 'Repairs',
} as const;

export type METRIC_NAME = (typeof METRIC)[keyof typeof METRIC];
