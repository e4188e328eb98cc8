/** The context a handler instance works in: its table (from TABLE_NAME unless given) and its own memory. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

import { Table } from '../lib/store/table.ts';
import { countConditionalCheckFailures, type FailureCounter } from './sdk-metrics.ts';
import { type ClaimContext } from '../lib/service/context.ts';

const counters = new WeakMap<DynamoDBClient, FailureCounter>();

/** The failure counter of a client, attached once however many handlers share the client. */
export function conditionalFailuresOf(client: DynamoDBClient): FailureCounter {
  let counter = counters.get(client);
  if (!counter) {
    counter = countConditionalCheckFailures(client);
    counters.set(client, counter);
  }
  return counter;
}

/** Builds the context on first use, so importing a handler touches no AWS client. */
export function lazyContext(given?: Partial<ClaimContext>): () => ClaimContext {
  let ctx: ClaimContext | undefined;
  return () => {
    if (ctx) return ctx;
    const table =
      given?.table ??
      new Table({
        tableName: process.env.TABLE_NAME ?? 'allot',
        client: new DynamoDBClient({}),
      });
    conditionalFailuresOf(table.client);
    ctx = { table, frontiers: new Map(), ...given };
    return ctx;
  };
}
