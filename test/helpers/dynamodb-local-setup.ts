/**
 * Global setup of the DynamoDB Local tier (vitest.config.ts): one DynamoDB Local for the whole run, in
 * memory, shared by every test file (each makes its own tables), so the JVM starts once.
 */
import { javaMissing, startDynamoDBLocal } from '../../lib/local/store/dynamodb-local.ts';

export default async function setup(): Promise<() => Promise<void>> {
  const missing = javaMissing();
  // vitest.config.ts leaves the tier out when Java is missing, except under CI, where that is a failure.
  if (missing) throw new Error(`the DynamoDB Local tier cannot run: ${missing}`);
  const local = await startDynamoDBLocal({ dataDir: ':memory:' });
  process.env.ALLOT_DYNAMODB_LOCAL_ENDPOINT = local.endpoint;
  return () => local.close();
}
