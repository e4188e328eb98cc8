/**
 * The repair function (lib/service/repair/sweep.ts): on its schedule (an EventBridge rule, every
 * `repairInterval`) it sweeps every registered namespace, one budgeted run each, stopping before its
 * timeout; over HTTP it serves `POST /v1/namespaces/{namespace}/repair` (`allot repair`). Each run emits
 * the `Repairs` metric per kind of fix (dimension `Kind`): a non-zero count means something upstream lost
 * work (a stream record in the dead-letter queue, or a defect), so it has an alarm. Every minute, on a
 * rule of its own, it deletes the claims whose lease ended (`{ "operation": "expireLeases" }`,
 * lib/service/leases/leases.ts): TTL may take days.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { isObject } from '../lib/domain/objects/validation.ts';
import type { ClaimContext } from '../lib/service/context.ts';
import { REPAIR_KINDS, sweepAll, type RepairCounts, type RepairReport } from '../lib/service/repair/sweep.ts';
import { expireLeases } from '../lib/service/leases/leases.ts';
import { lazyContext } from './context.ts';
import { dispatchOf } from '../lib/http/dispatch/dispatch.ts';
import { REPAIR_OPERATIONS } from '../lib/http/dispatch/repair.ts';
import { createHttpChain } from './http-chain.ts';
import { logger } from './observability.ts';
import { METRIC, MetricUnit, metrics } from './metrics.ts';

function isHttpEvent(event: unknown): event is APIGatewayProxyEventV2 {
  return isObject(event) && typeof event.rawPath === 'string' && isObject(event.requestContext);
}

/** One `Repairs` data point per kind, so the dashboard and the alarm see every run, zeros included. */
export function publishRepairs(fixed: RepairCounts): void {
  for (const kind of REPAIR_KINDS) {
    const single = metrics.singleMetric();
    single.addDimension('Kind', kind);
    single.addMetric(METRIC.repairs, MetricUnit.Count, fixed[kind]);
  }
}

export interface RepairRun {
  kind: 'RepairRun';
  namespaces: number;
  /** Every namespace swept to its end (false: the next run goes on where this one stopped). */
  complete: boolean;
  found: RepairCounts;
  fixed: RepairCounts;
}

export function createRepairHandler(context?: Partial<ClaimContext>) {
  const contextOf = lazyContext(context);
  const http = createHttpChain(dispatchOf('repair', REPAIR_OPERATIONS), contextOf);

  return async (event: unknown, lambdaContext?: Context): Promise<unknown> => {
    if (isHttpEvent(event)) {
      const answer = (await http(event, lambdaContext as Context)) as APIGatewayProxyStructuredResultV2;
      if (answer.statusCode === 200) {
        const report = JSON.parse(answer.body ?? '{}') as RepairReport;
        if (report.kind === 'RepairReport' && !report.dryRun) publishRepairs(report.fixed);
      }
      return answer;
    }
    if (isObject(event) && event.operation === 'expireLeases') {
      const expired = await expireLeases(contextOf());
      logger.info('leases expired', { expired });
      return { kind: 'LeaseExpiry', expired };
    }
    const reports = await sweepAll(contextOf(), {
      timeLeft: () => lambdaContext?.getRemainingTimeInMillis() ?? Number.POSITIVE_INFINITY,
    });
    const run: RepairRun = {
      kind: 'RepairRun',
      namespaces: reports.length,
      complete: reports.every((report) => report.complete),
      found: sumOf(reports, 'found'),
      fixed: sumOf(reports, 'fixed'),
    };
    publishRepairs(run.fixed);
    if (REPAIR_KINDS.some((kind) => run.fixed[kind] > 0)) logger.warn('repair sweep fixed state', { ...run });
    else logger.info('repair sweep', { ...run });
    return run;
  };
}

function sumOf(reports: readonly RepairReport[], field: 'found' | 'fixed'): RepairCounts {
  const total = Object.fromEntries(REPAIR_KINDS.map((kind) => [kind, 0])) as RepairCounts;
  for (const report of reports) for (const kind of REPAIR_KINDS) total[kind] += report[field][kind];
  return total;
}

export const handler = createRepairHandler();
