/**
 * The repair sweep's place in the deployed stack: an EventBridge rule that runs the repair function every
 * `repairInterval`, one that runs its lease expiry every minute, and the metric its alarm watches (the
 * `Repairs` EMF metric, summed over its kinds).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';

/** The `Repairs` metric's namespace (functions/metrics.ts). */
const METRICS_NAMESPACE = 'Allot';

export function scheduleRepairs(scope: Construct, fn: lambda.IFunction, interval: Duration): events.Rule {
  const minutes = interval.toMinutes({ integral: false });
  if (!Number.isInteger(minutes) || minutes < 1)
    throw new Error(
      `AllotService: repairInterval must be a whole number of minutes, not ${interval.toHumanString()}`,
    );
  return new events.Rule(scope, 'RepairSchedule', {
    description: `Allot: the repair sweep over every namespace, every ${interval.toHumanString()}`,
    schedule: events.Schedule.rate(interval),
    // A run that fails is not retried: the next one comes at the next interval, from the same cursor.
    targets: [
      new targets.LambdaFunction(fn, {
        event: events.RuleTargetInput.fromObject({ operation: 'repair' }),
        retryAttempts: 0,
      }),
    ],
  });
}

/**
 * The expiry of leases every minute (the repair function's `expireLeases`): DynamoDB's TTL deletes an
 * expired claim some time after its end, days at worst, and a lease ends within 2 minutes (api.md).
 */
export function scheduleLeaseExpiry(scope: Construct, fn: lambda.IFunction): events.Rule {
  return new events.Rule(scope, 'LeaseExpirySchedule', {
    description: 'Allot: deletes the claims whose lease ended, every minute',
    schedule: events.Schedule.rate(Duration.minutes(1)),
    // A run that fails is not retried: the next comes within the minute and finds what it left.
    targets: [
      new targets.LambdaFunction(fn, {
        event: events.RuleTargetInput.fromObject({ operation: 'expireLeases' }),
        retryAttempts: 0,
      }),
    ],
  });
}

/** Fixes the sweep made, every kind together (Metrics Insights over the `Kind` dimension). */
export function repairsMetric(period = Duration.minutes(10)): cloudwatch.IMetric {
  return new cloudwatch.MathExpression({
    expression: `SELECT SUM(Repairs) FROM SCHEMA("${METRICS_NAMESPACE}", Kind, service)`,
    usingMetrics: {},
    label: 'Repairs (all kinds)',
    period,
  });
}
