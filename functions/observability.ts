/**
 * Powertools for every function: JSON logs and EMF metrics in the `Allot` namespace, one instance of each
 * per handler instance. Tracing is Lambda's active tracing (set by the construct): Powertools' Tracer would
 * add SDK subsegments, but its X-Ray SDK costs about 100 KB per bundle, past the 500 KB budget.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

// Outside Lambda (npm start, tests) EMF lines and per-request logs on stdout are only noise: metrics stay
// off and logs at WARN there unless asked for. In Lambda neither variable is set: metrics on, logs at INFO.
if (!process.env.AWS_LAMBDA_FUNCTION_NAME) {
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
}

export const METRICS_NAMESPACE = 'Allot';

export const logger = new Logger({ serviceName: 'allot' });
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
