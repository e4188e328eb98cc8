/**
 * The stream function's event source mapping, as plain data: the CDK construct deploys it
 * (lib/cloud/construct.ts), and the local stream emulation (lib/local/stream.ts) and the DynamoDB Local
 * consumer (lib/local/stream-consumer.ts) follow it, so local and deployed batch alike.
 *
 * `parallelizationFactor`: batches of one shard in flight at once (1 to 10). Lambda keeps an item's
 * records in order whatever the factor: "When you increase the number of concurrent batches per shard,
 * Lambda still ensures in-order processing at the item (partition and sort key) level"
 * (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html). Order per item is all the stream function
 * needs (lib/service/stream/batch.ts says why), so it takes the most: a batch that waits (for a claim's
 * handler, a pending name hold) holds up a tenth of its shard, not all of it.
 */
export const STREAM_MAPPING = {
  batchSize: 100,
  maxBatchingWindowSeconds: 1,
  parallelizationFactor: 10,
  retryAttempts: 5,
  maxRecordAgeHours: 24,
} as const;
