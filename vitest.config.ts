import { defineConfig } from 'vitest/config';
import { javaMissing } from './lib/local/store/dynamodb-local.ts';

/**
 * Two tiers: every test on dynalite, and again on AWS's DynamoDB Local (lib/local/stores.ts) the tests of
 * what the two stores do differently: streams, conditional writes, indexes, TTL and map order
 * (docs/testing.md, "Which tests run on both stores", says why each file is on the list). DynamoDB Local's
 * own tests (test/dynamodb-local/) run only there. Without Java the second tier is left out with one line
 * saying so; under CI=true a missing Java fails the run.
 *
 * Files run side by side, three at a time: most of a file's time is spent waiting (for the stream, a
 * server, a child process), so three keep this machine's two cores busy. The files that time a server's
 * start and stop run alone at the end (`ALONE`), so no other file's load is in their figures.
 */
const DYNAMODB_LOCAL_ONLY = ['test/dynamodb-local/**/*.test.ts'];
const BOTH_STORES = [
  'test/integration/allocations.test.ts',
  'test/integration/carving.test.ts',
  'test/integration/claim-reads.test.ts',
  'test/integration/claims.test.ts',
  'test/integration/endpoint-store.test.ts',
  'test/integration/held-names.test.ts',
  'test/integration/history.test.ts',
  'test/integration/holdings.test.ts',
  'test/integration/leases.test.ts',
  'test/integration/mid-allocation.test.ts',
  'test/integration/prefix-lengths.test.ts',
  'test/integration/quarantine.test.ts',
  'test/integration/sharing.test.ts',
  'test/integration/repair.test.ts',
  'test/integration/search-memory.test.ts',
  'test/integration/settle.test.ts',
  'test/integration/stream.test.ts',
  'test/integration/unchanged.test.ts',
  'test/integration/watch.test.ts',
  'test/faults/stream-delivery.test.ts',
  'test/faults/crash.test.ts',
  'test/faults/start-stop.test.ts',
  'test/model/concurrency.test.ts',
  'test/model/sharing.test.ts',
];
const ALONE = ['test/faults/start-stop.test.ts'];

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: 'forks' as const,
  env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
};
const dynamodbLocal = {
  globalSetup: ['test/helpers/dynamodb-local-setup.ts'],
  env: { ...shared.env, ALLOT_STORE: 'dynamodb-local', MODEL_RUNS: process.env.MODEL_RUNS ?? '4' },
};

const missing = javaMissing();
const withDynamoDBLocal = !missing || process.env.CI === 'true';
if (!withDynamoDBLocal) console.log(`DynamoDB Local tier skipped: ${missing}`);

export default defineConfig({
  test: {
    maxWorkers: 3,
    projects: [
      {
        test: {
          ...shared,
          name: 'dynalite',
          include: ['test/**/*.test.ts'],
          exclude: [...DYNAMODB_LOCAL_ONLY, ...ALONE],
        },
      },
      { test: { ...shared, name: 'dynalite (alone)', include: ALONE, maxWorkers: 1 } },
      ...(withDynamoDBLocal
        ? [
            {
              test: {
                ...shared,
                ...dynamodbLocal,
                name: 'dynamodb-local',
                include: [...BOTH_STORES, ...DYNAMODB_LOCAL_ONLY],
                exclude: ALONE,
              },
            },
            {
              test: {
                ...shared,
                ...dynamodbLocal,
                name: 'dynamodb-local (alone)',
                include: ALONE.filter((file) => BOTH_STORES.includes(file)),
                maxWorkers: 1,
              },
            },
          ]
        : []),
    ],
  },
});
