/**
 * API Gateway HTTP API (payload 2.0) and EventBridge events and a counting SDK client, for calling
 * handlers directly.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export function httpEvent(method: string, path: string, body?: unknown): APIGatewayProxyEventV2 {
  const [rawPath, rawQueryString = ''] = path.split('?') as [string, string?];
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    requestContext: {
      accountId: '000000000000',
      apiId: 'test',
      domainName: 'test',
      domainPrefix: 'test',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'test',
      routeKey: '$default',
      stage: '$default',
      time: new Date().toISOString(),
      timeEpoch: Date.now(),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
  };
}

/** An SDK client for the local store that counts the DynamoDB requests it sends, by operation. */
export function countingClient(endpoint: string) {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const counts: Record<string, number> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      counts[operation] = (counts[operation] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  const total = () => Object.values(counts).reduce((sum, n) => sum + n, 0);
  const reset = () => {
    for (const key of Object.keys(counts)) delete counts[key];
  };
  return { client, counts, total, reset };
}

/** An EventBridge event as a rule delivers it to a Lambda target. */
export function busEvent(detailType: string, detail: unknown) {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': detailType,
    source: 'team.provisioning',
    account: '000000000000',
    time: '2026-11-29T12:00:00Z',
    region: 'local',
    resources: [],
    detail,
  };
}
