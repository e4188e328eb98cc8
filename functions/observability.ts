/**
 * Powertools for every function: JSON logs, EMF metrics in the `Allot` namespace, X-Ray tracing of the
 * AWS SDK clients. One instance of each per handler instance, shared by the handlers of a bundle.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

// Outside Lambda (npm start, tests) EMF lines and per-request logs on stdout are only noise: metrics stay
// off and logs at WARN there unless asked for. In Lambda neither variable is set: metrics on, logs at INFO.
if (!process.env.AWS_LAMBDA_FUNCTION_NAME) {
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
}

export const METRICS_NAMESPACE = 'Allot';

export const logger = new Logger({ serviceName: 'allot' });
export const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'allot' });
/** Off outside Lambda (Powertools checks the environment), so tests and `npm start` trace nothing. */
export const tracer = new Tracer({ serviceName: 'allot' });

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
} as const;

export type METRIC_NAME = (typeof METRIC)[keyof typeof METRIC];
