/**
 * The service's Lambda functions, each built from `functions/<name>.ts`: what each is for, how long it may
 * run, and the least it needs from the table (test/access compares these grants with the calls each makes).
 */
import { Duration } from 'aws-cdk-lib';
import { ALLOCATIONS_INDEX, LEASES_INDEX, WAITING_INDEX } from '../store/schema.ts';

export type AllotFunctionName =
  'api' | 'claim' | 'release' | 'stream' | 'repair' | 'claim-resource' | 'history';

const ITEM_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:Query',
];

export interface FunctionSettings {
  readonly description: string;
  readonly timeout: Duration;
  /** Actions on the table itself. */
  readonly tableActions: readonly string[];
  /** Indexes the function queries (the only action an index takes). */
  readonly queriedIndexes: readonly string[];
}

/** Per function: what it is for, how long it may run, and the least it needs from the table. */
export const FUNCTION_SETTINGS: Readonly<Record<AllotFunctionName, FunctionSettings>> = {
  api: {
    description: 'Allot HTTP API: pools, allocation objects, claim reads, lists and watches, 404/405',
    // A watch is a long poll of up to 25 s (functions/http-chain.ts), within API Gateway's 30 s.
    timeout: Duration.seconds(29),
    // BatchGetItem: a pool's map reads its group summaries, up to 100 to a request; the overlap check
    // of a prefix in a pool of a range of lengths reads its ancestors.
    tableActions: [...ITEM_ACTIONS, 'dynamodb:BatchGetItem'],
    queriedIndexes: [ALLOCATIONS_INDEX],
  },
  claim: {
    description: 'Allot HTTP API: claim create and replace (allocates before answering)',
    timeout: Duration.seconds(10),
    // BatchGetItem: the overlap check of a prefix in a pool of a range of lengths (its ancestors).
    tableActions: [...ITEM_ACTIONS, 'dynamodb:BatchGetItem'],
    queriedIndexes: [],
  },
  release: {
    description: 'Allot HTTP API: claim delete',
    timeout: Duration.seconds(10),
    // Query: the pools carved from the claim (409 ClaimInUse).
    tableActions: ['dynamodb:GetItem', 'dynamodb:DeleteItem', 'dynamodb:Query'],
    queriedIndexes: [],
  },
  stream: {
    description: 'Allot table stream: reclaim, pool status, waiting claims',
    timeout: Duration.seconds(60),
    // BatchGetItem: what a batch's work decides on, read once for the whole batch.
    tableActions: [...ITEM_ACTIONS, 'dynamodb:BatchGetItem'],
    queriedIndexes: [WAITING_INDEX],
  },
  repair: {
    description: 'Allot repair sweep: scheduled over every namespace, and on demand for one; lease expiry',
    // A run stops well before this (it leaves a cursor); one namespace's run is bounded by its budget.
    timeout: Duration.minutes(2),
    // BatchGetItem: the open holdings' marks read against their copies (service/repair/holdings.ts).
    tableActions: [...ITEM_ACTIONS, 'dynamodb:BatchGetItem'],
    queriedIndexes: [ALLOCATIONS_INDEX, WAITING_INDEX, LEASES_INDEX],
  },
  'claim-resource': {
    description: 'Allot Custom::AllotClaim: CloudFormation creates, updates and deletes claims',
    // It answers CloudFormation itself before this ends (functions/claim-resource.ts), also on a timeout.
    timeout: Duration.seconds(30),
    // A claim's create and read (as the claim function), and its release when the claim cannot be
    // allocated at once or the resource is deleted (as the release function: Query for the carvings).
    tableActions: [...ITEM_ACTIONS, 'dynamodb:BatchGetItem'],
    queriedIndexes: [],
  },
  history: {
    description: 'Allot table stream, second reader: the history watches read, and who held each value',
    timeout: Duration.seconds(60),
    // Appends entries and batch markers, raises heads, reads what a batch delivered again appended; puts,
    // ends and reads holdings, and deletes a holding's open mark when it ends (service/history/holdings.ts).
    tableActions: [
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:Query',
    ],
    queriedIndexes: [],
  },
};

export const FUNCTION_NAMES = Object.keys(FUNCTION_SETTINGS) as AllotFunctionName[];

/**
 * The most a function's bundle (`index.mjs`, the AWS SDK included) may weigh, in bytes: a bigger one loads
 * slower on every cold start. The bundling test and `tsx bench/bundles.ts` fail past it.
 */
export const BUNDLE_BUDGET_BYTES = 500_000;
