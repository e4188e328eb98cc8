/**
 * Counts the ConditionalCheckFailedExceptions a DynamoDB client sees: each is a race a claim lost (or a
 * stale write refused, or a PUT's create that found its claim already there), the figure that says how
 * contended a pool is. An SDK middleware on the function's
 * own client, so lib/ stays free of metrics.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface FailureCounter {
  /** Failures since the last take. */
  take(): number;
}

export function countConditionalCheckFailures(client: DynamoDBClient): FailureCounter {
  let count = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if ((error as Error | undefined)?.name === 'ConditionalCheckFailedException') count++;
        throw error;
      }
    },
    { step: 'initialize', name: 'allotCountConditionalCheckFailures' },
  );
  return {
    take() {
      const taken = count;
      count = 0;
      return taken;
    },
  };
}
