/**
 * Scenario 4: what the store itself serves: conditional puts (`attribute_not_exists(pk)`) of fresh unique
 * keys into the same table, from 1 and from 32 clients (each its own SDK client), for a fixed time.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { benchClient } from './instance.ts';
import { round } from './measure.ts';

export const RAW_SECONDS = 2;

export interface RawResult {
  clients: number;
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  failures: number;
}

export async function rawConditionalPuts(
  endpoint: string,
  tableName: string,
  clients: number,
): Promise<RawResult> {
  const run = randomUUID().slice(0, 8);
  const bases = Array.from({ length: clients }, () => benchClient(endpoint));
  const docs = bases.map((base) => DynamoDBDocumentClient.from(base));
  const put = (doc: DynamoDBDocumentClient, key: string) =>
    doc.send(
      new PutCommand({
        TableName: tableName,
        Item: { pk: key, sk: 'raw', t: 'raw' },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  // One put each first, so connection setup is outside the timed window.
  await Promise.all(docs.map((doc, i) => put(doc, `R#${run}#${i}#warm`)));
  let requests = 0;
  let failures = 0;
  const started = performance.now();
  const deadline = started + RAW_SECONDS * 1000;
  await Promise.all(
    docs.map(async (doc, i) => {
      for (let n = 0; performance.now() < deadline; n++) {
        try {
          await put(doc, `R#${run}#${i}#${n}`);
          requests++;
        } catch {
          failures++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const base of bases) base.destroy();
  return {
    clients,
    seconds: round(seconds, 3),
    requests,
    requestsPerSecond: round(requests / seconds, 1),
    failures,
  };
}
