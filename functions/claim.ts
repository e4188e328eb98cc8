/**
 * The claim function: claim create and replace over HTTP (the route table says which routes), and
 * `claim` requests by direct invocation or from the event bus (`Allot Claim Requested`). It records each
 * claim's latency and the conditional-check failures it met (races lost).
 */
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { dispatchOf } from '../lib/http/dispatch/dispatch.ts';
import { CLAIM_OPERATIONS } from '../lib/http/dispatch/claim.ts';
import type { ClaimContext } from '../lib/service/context.ts';
import { replaceClaim } from '../lib/service/operations/claims.ts';
import { createClaimsHandler } from './claims-handler.ts';
import { METRIC, MetricUnit, metrics } from './metrics.ts';

export function createClaimHandler(context?: Partial<ClaimContext>) {
  return createClaimsHandler({
    direct: { claim: replaceClaim },
    dispatch: dispatchOf('claim', CLAIM_OPERATIONS),
    measured: (milliseconds, conditionalFailures) => {
      metrics.addMetric(METRIC.claimLatency, MetricUnit.Milliseconds, milliseconds);
      metrics.addMetric(METRIC.conditionalCheckFailures, MetricUnit.Count, conditionalFailures);
    },
    context,
  }).use(logMetrics(metrics));
}

export const handler = createClaimHandler();
