/**
 * A "Lambda instance" of the claim function, as the benchmark runs it: its own DynamoDB client (with the
 * counting middleware), its own table object and its own search memory, behind the real HTTP handler.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createHttpHandler } from '../functions/http.ts';

import { fakeContext } from '../lib/local/server.ts';
import { localClient } from '../lib/local/store/dynalite.ts';
import { Table } from '../lib/store/table.ts';
import { httpEvent } from '../test/helpers/events.ts';
import { Meter } from './measure.ts';
import { type ClaimContext } from '../lib/service/context.ts';

export const NAMESPACE = 'bench';

export interface Answer {
  status: number;
  body: any;
}

export interface Instance {
  meter: Meter;
  client: DynamoDBClient;
  table: Table;
  /** The claim context's collaborators, for the stream function run on the same client. */
  context: ClaimContext;
  call(method: string, path: string, body?: unknown): Promise<Answer>;
  destroy(): void;
}

/** `namespace`: the one its calls go to (`/v1/namespaces/<namespace>/…`), the benchmark's own unless said. */
export function startInstance(
  endpoint: string,
  tableName: string,
  functionName = 'claim',
  namespace = NAMESPACE,
): Instance {
  const client = localClient(endpoint);
  const meter = new Meter().attach(client);
  const table = new Table({ tableName, client });
  const context: ClaimContext = { table, frontiers: new Map() };
  const handler = createHttpHandler(context);
  return {
    meter,
    client,
    table,
    context,
    async call(method, path, body) {
      const result = (await handler(
        httpEvent(method, `/v1/namespaces/${namespace}/${path}`, body),
        fakeContext(functionName),
      )) as APIGatewayProxyStructuredResultV2;
      return { status: result.statusCode ?? 0, body: JSON.parse(result.body ?? 'null') };
    },
    destroy: () => client.destroy(),
  };
}

export function claimBody(name: string, pool: { kind: string; name: string }) {
  return { metadata: { name }, spec: { poolRef: { kind: pool.kind, name: pool.name } } };
}
