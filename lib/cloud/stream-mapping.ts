/**
 * The stream function's event source mapping, as plain data: the CDK construct deploys it
 * (lib/cloud/construct.ts), and the local stream emulation (lib/local/stream/emulation.ts) and the DynamoDB Local
 * consumer (lib/local/stream/consumer.ts) follow it, so local and deployed batch alike.
 *
 * `parallelizationFactor`: batches of one shard in flight at once (1 to 10). Lambda keeps an item's
 * records in order whatever the factor: "When you increase the number of concurrent batches per shard,
 * Lambda still ensures in-order processing at the item (partition and sort key) level"
 * (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html). Order per item is all the stream function
 * needs (lib/service/stream/batch.ts says why). It is not what hides DynamoDB's latency: a batch works on
 * its items side by side already. What several batches buy is that one that waits (for a claim's handler
 * until its deadline, a pending name hold) holds up a part of its shard, not all of it. What they cost: a
 * pool's counts and summaries are written once per batch, so F batches of one pool write them up to F
 * times per batching window, and contend (a conditional write that loses reads again). bench/stream.ts
 * measured 10 at a third of the throughput of 1 on one shard, and 4 no faster than 1 at 5 ms a call.
 * It is 4: with 4, test/integration/claims.test.ts once ended with a pool's counts one short (an object
 * made before its pool, whose batch read "no pool" and then wrote its marker just after the pool's first
 * recount in another batch); the counts step now reads a pool again that its batch found missing
 * (service/counts/tally.ts applyMarkers; test/faults/stream-delivery.test.ts replays that order). Batches of
 * two shards raced the same way at a factor of 1.
 */
export const STREAM_MAPPING = {
  batchSize: 100,
  maxBatchingWindowSeconds: 1,
  parallelizationFactor: 4,
  retryAttempts: 5,
  maxRecordAgeHours: 24,
} as const;

/**
 * The history function's mapping (lib/cloud/event-sources.ts; the local second reader follows it): one
 * batch of a shard at a time, so one writer appends to a collection's entries per shard (several would
 * contend for its entry numbers); an item's events stay in order either way.
 */
export const HISTORY_MAPPING = {
  batchSize: 100,
  parallelizationFactor: 1,
} as const;
