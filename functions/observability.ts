/**
 * Powertools' JSON logs for every function, one logger per handler instance; the functions that record
 * metrics add functions/metrics.ts. Tracing is Lambda's active tracing (set by the construct): Powertools'
 * Tracer would add SDK subsegments, but its X-Ray SDK costs about 100 KB per bundle, past the 500 KB budget.
 */
import { Logger } from '@aws-lambda-powertools/logger';

// Outside Lambda (npm start, tests) EMF lines and per-request logs on stdout are only noise: metrics stay
// off and logs at WARN there unless asked for. In Lambda neither variable is set: metrics on, logs at INFO.
if (!process.env.AWS_LAMBDA_FUNCTION_NAME) {
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
}

export const logger = new Logger({ serviceName: 'allot' });
