/**
 * Every function's operations together, for the local server and the tests: one handler serves every
 * route, each from the table of the function the route table names for it, as the deployed HTTP API
 * sends each route to its own function.
 */
import type { ApiFunctionName } from '../routes.ts';
import { operationOf, type Dispatch, type OperationTable } from './dispatch.ts';
import { API_OPERATIONS } from './api.ts';
import { CLAIM_OPERATIONS } from './claim.ts';
import { RELEASE_OPERATIONS } from './release.ts';
import { REPAIR_OPERATIONS } from './repair.ts';

export const FUNCTION_OPERATIONS: Readonly<Record<ApiFunctionName, OperationTable>> = {
  api: API_OPERATIONS,
  claim: CLAIM_OPERATIONS,
  release: RELEASE_OPERATIONS,
  repair: REPAIR_OPERATIONS,
};

export const DISPATCH_ALL: Dispatch = (route, operation = route.operation) =>
  operationOf(FUNCTION_OPERATIONS[route.function], operation, route.resource);
