/**
 * The HTTP handler of every route, for the local server and the tests: each route served by the
 * operations of the function the route table names for it, as the deployed HTTP API sends each route to
 * its own function. No function's bundle imports this (each has its own dispatch).
 */
import { DISPATCH_ALL } from '../lib/http/dispatch/all.ts';
import type { ClaimContext } from '../lib/service/context.ts';
import { createHttpChain } from './http-chain.ts';

export { MAX_BODY_BYTES } from './http-chain.ts';

export function createHttpHandler(context?: Partial<ClaimContext> | (() => ClaimContext)) {
  return createHttpChain(DISPATCH_ALL, context);
}
