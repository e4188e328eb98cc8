import { defineConfig } from 'vitest/config';
import { javaMissing } from './lib/local/dynamodb-local.ts';

/**
 * Two tiers: every test on dynalite, and the HTTP contract, stream, crash, start-stop and model tests again on AWS's
 * DynamoDB Local (lib/local/stores.ts), whose own tests (test/dynamodb-local/) run only there. Without
 * Java the second tier is left out with one line saying so; under CI=true a missing Java fails the run.
 */
const DYNAMODB_LOCAL_ONLY = ['test/dynamodb-local/**/*.test.ts'];
const BOTH_STORES = [
  'test/integration/**/*.test.ts',
  'test/faults/stream-delivery.test.ts',
  'test/faults/crash.test.ts',
  'test/faults/start-stop.test.ts',
  'test/model/concurrency.test.ts',
];

const shared = {
  testTimeout: 30_000,
  hookTimeout: 30_000,
  pool: 'forks' as const,
  env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
};

const missing = javaMissing();
const withDynamoDBLocal = !missing || process.env.CI === 'true';
if (!withDynamoDBLocal) console.log(`DynamoDB Local tier skipped: ${missing}`);

export default defineConfig({
  test: {
    projects: [
      {
        test: { ...shared, name: 'dynalite', include: ['test/**/*.test.ts'], exclude: DYNAMODB_LOCAL_ONLY },
      },
      ...(withDynamoDBLocal
        ? [
            {
              test: {
                ...shared,
                name: 'dynamodb-local',
                include: [...BOTH_STORES, ...DYNAMODB_LOCAL_ONLY],
                globalSetup: ['test/helpers/dynamodb-local-setup.ts'],
                env: {
                  ...shared.env,
                  ALLOT_STORE: 'dynamodb-local',
                  MODEL_RUNS: process.env.MODEL_RUNS ?? '4',
                },
              },
            },
          ]
        : []),
    ],
  },
});
