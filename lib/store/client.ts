/**
 * The table's connection: the SDK clients, and the two request shapes every store module uses (a
 * conditional write that answers true or false, and a Query read page after page).
 */
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Item } from './items.ts';

/** A conditional write lost: the item is not in the state the write expected. */
export class ConditionFailedError extends Error {
  override readonly name = 'ConditionFailedError';
}

export interface TableOptions {
  tableName: string;
  /** An SDK client to use (Powertools' `awsSdkV3Client` habit); a default one is built when absent. */
  client?: DynamoDBClient;
  clientConfig?: DynamoDBClientConfig;
}

export class TableClient {
  readonly doc: DynamoDBDocumentClient;
  readonly client: DynamoDBClient;
  readonly tableName: string;

  constructor(options: TableOptions) {
    this.client = options.client ?? new DynamoDBClient(options.clientConfig ?? {});
    this.doc = DynamoDBDocumentClient.from(this.client, {
      marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
    });
    this.tableName = options.tableName;
  }

  /** Sends a conditional write: true when it landed, false when its condition did not hold. */
  async conditional(command: PutCommand | UpdateCommand | DeleteCommand): Promise<boolean> {
    try {
      // One call for the three command types (send is overloaded per command).
      await this.doc.send(command as PutCommand);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Every item a Query matches, page after page. */
  async *pages(input: QueryCommandInput): AsyncGenerator<Item> {
    let start: Item | undefined;
    do {
      const result = await this.doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
      yield* result.Items ?? [];
      start = result.LastEvaluatedKey;
    } while (start);
  }
}

export function conditionFailed(error: unknown): unknown {
  return error instanceof ConditionalCheckFailedException ? new ConditionFailedError(error.message) : error;
}
