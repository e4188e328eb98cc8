/**
 * The claim and release functions' handler: API Gateway events go through the shared HTTP chain; anything
 * else is a direct invocation or an EventBridge request (lib/service/requests/invocation.ts), answered with the Claim or a
 * Status as a value. Each invocation logs its namespace, pool, claim and request id; the claim function
 * also records the claim's latency and the conditional-check failures it met (races lost).
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

import type { Dispatch } from '../lib/http/dispatch/dispatch.ts';
import {
  directRequestOf,
  invokeDirect,
  isBusEvent,
  type DirectOperations,
} from '../lib/service/requests/invocation.ts';
import { isObject } from '../lib/domain/objects/validation.ts';
import { conditionalFailuresOf, lazyContext } from './context.ts';
import { createHttpChain } from './http-chain.ts';
import { logger } from './observability.ts';
import { type ClaimContext } from '../lib/service/context.ts';

function isHttpEvent(event: unknown): event is APIGatewayProxyEventV2 {
  return isObject(event) && typeof event.rawPath === 'string' && isObject(event.requestContext);
}

/** What a direct or bus request is about, for the log keys (HTTP requests get theirs in http.ts). */
function logKeysOf(event: unknown, requestId: string | undefined): Record<string, string> {
  const keys: Record<string, string> = {};
  if (requestId) keys.requestId = requestId;
  if (isHttpEvent(event)) return keys;
  try {
    const request = directRequestOf(event);
    keys.namespace = request.namespace;
    keys.claim = request.name;
    const poolRef =
      request.operation === 'claim' && isObject(request.spec) ? request.spec.poolRef : undefined;
    if (isObject(poolRef) && typeof poolRef.name === 'string') keys.pool = poolRef.name;
  } catch {
    // a malformed request is answered with a Status below; nothing to add
  }
  return keys;
}

export interface ClaimsHandlerOptions {
  /** The direct operations this function serves (the other needs grants it does not have). */
  direct: DirectOperations;
  /** The function's HTTP routes (lib/http/dispatch/dispatch.ts). */
  dispatch: Dispatch;
  /**
   * Told of each invocation's time and the conditional-check failures it met: the claim function records
   * them as metrics (functions/claim.ts), so the release function's bundle holds no Metrics.
   */
  measured?: (milliseconds: number, conditionalFailures: number) => void;
  context?: Partial<ClaimContext>;
}

export function createClaimsHandler(options: ClaimsHandlerOptions) {
  const contextOf = lazyContext(options.context);
  const http = createHttpChain(options.dispatch, contextOf);

  const handle = async (event: unknown, lambdaContext: Context) => {
    const requestId = isHttpEvent(event)
      ? event.requestContext.requestId
      : isBusEvent(event)
        ? event.id
        : lambdaContext?.awsRequestId;
    logger.appendKeys(logKeysOf(event, requestId));
    const ctx = contextOf();
    const failures = conditionalFailuresOf(ctx.table.client);
    failures.take();
    const started = performance.now();
    const result = isHttpEvent(event)
      ? await http(event, lambdaContext)
      : await invokeDirect(event, ctx, options.direct, (error) =>
          logger.error('direct request failed', { error: error as Error }),
        );
    const conditionalFailures = failures.take();
    options.measured?.(performance.now() - started, conditionalFailures);
    if (!isHttpEvent(event)) {
      const answer = result as Record<string, any>;
      // Nobody reads a bus request's answer: a failure of ours is thrown, so Lambda retries it (and then
      // sends it to the request dead-letter queue); a refusal of the request itself is only logged.
      if (isBusEvent(event) && answer.kind === 'Status' && answer.code >= 500)
        throw new Error(`${event['detail-type']} ${event.id ?? ''} failed: ${answer.message}`);
      // The caller's mistake, answered: worth a line, not a warning.
      if (answer.kind === 'Status' && answer.code < 500) logger.info('request refused', { status: answer });
      else
        logger.info('request answered', {
          value: answer.status?.value,
          reason: answer.status?.conditions?.[0]?.reason,
        });
    }
    return result;
  };

  return middy(handle).use(injectLambdaContext(logger, { resetKeys: true }));
}
