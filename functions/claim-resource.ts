/**
 * The claim-resource function: CloudFormation's requests for `Custom::AllotClaim` (decided by
 * lib/service/requests/claim-resource.ts), answered as CloudFormation expects, by an HTTP PUT of the response JSON
 * to the request's presigned `ResponseURL`. It always answers, because CloudFormation otherwise waits
 * the resource's whole ServiceTimeout: on its own errors with FAILED and why, and with FAILED before its
 * time runs out. It throws only when the answer could not be delivered, so that Lambda invokes it again
 * (CloudFormation invokes asynchronously; the request is idempotent).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Context } from 'aws-lambda';
import {
  handleClaimResource,
  isAnswerable,
  responseOf,
  timedOut,
  type CloudFormationResponse,
  type Outcome,
} from '../lib/service/requests/claim-resource.ts';
import type { ClaimContext } from '../lib/service/context.ts';
import { lazyContext } from './context.ts';
import { logger } from './observability.ts';

/** Kept back from the function's time for the answer itself. */
const ANSWER_MARGIN_MS = 3_000;
const SEND_ATTEMPTS = 3;

/**
 * PUTs the response to the presigned URL as CloudFormation's own cfn-response module does: an empty
 * Content-Type (the URL is signed without one) and the body's length.
 */
export async function sendResponse(url: string, response: CloudFormationResponse): Promise<void> {
  const body = Buffer.from(JSON.stringify(response));
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  await new Promise<void>((resolve, reject) => {
    const put = request(
      url,
      { method: 'PUT', headers: { 'content-type': '', 'content-length': body.byteLength }, timeout: 10_000 },
      (answer) => {
        answer.resume();
        answer.once('end', () =>
          (answer.statusCode ?? 0) < 300
            ? resolve()
            : reject(new Error(`the response URL answered ${answer.statusCode}`)),
        );
        answer.once('error', reject);
      },
    );
    put.once('timeout', () => put.destroy(new Error('the response URL did not answer in 10 s')));
    put.once('error', reject);
    put.end(body);
  });
}

export function createClaimResourceHandler(context?: Partial<ClaimContext>) {
  const contextOf = lazyContext(context);

  const handle = async (event: unknown, lambdaContext: Context) => {
    if (!isAnswerable(event)) {
      // Without a ResponseURL and the ids it echoes there is nobody to answer: only the log knows.
      logger.error('not a CloudFormation custom resource request; nothing to answer', { event });
      return {
        error:
          'not a CloudFormation custom resource request (RequestType, ResponseURL, StackId, RequestId, LogicalResourceId)',
      };
    }
    logger.appendKeys({
      requestId: event.RequestId,
      requestType: event.RequestType,
      stackId: event.StackId,
      logicalResourceId: event.LogicalResourceId,
    });
    const budget = (lambdaContext?.getRemainingTimeInMillis?.() ?? 30_000) - ANSWER_MARGIN_MS;
    const timer = new AbortController();
    const outcome: Outcome = await Promise.race([
      handleClaimResource(event, contextOf(), (error) =>
        logger.error('claim resource request failed', { error: error as Error }),
      ),
      sleep(Math.max(budget, 0), undefined, { signal: timer.signal }).then(
        () => timedOut(event),
        () => timedOut(event),
      ),
    ]);
    timer.abort();
    const response = responseOf(event, outcome);
    logger.info('answering CloudFormation', {
      status: response.Status,
      physicalResourceId: response.PhysicalResourceId,
      reason: response.Reason,
    });
    for (let attempt = 1; ; attempt++) {
      try {
        await sendResponse(event.ResponseURL, response);
        return response;
      } catch (error) {
        if (attempt >= SEND_ATTEMPTS) throw error;
        logger.warn('the response was not delivered; trying again', { error: error as Error, attempt });
        await sleep(500 * 2 ** attempt);
      }
    }
  };

  return middy(handle).use(injectLambdaContext(logger, { resetKeys: true }));
}

export const handler = createClaimResourceHandler();
