/** The api function: the shared HTTP chain around its own routes' operations (lib/http/dispatch/api.ts). */
import { dispatchOf } from '../lib/http/dispatch/dispatch.ts';
import { API_OPERATIONS } from '../lib/http/dispatch/api.ts';
import { createHttpChain } from './http-chain.ts';

export const handler = createHttpChain(dispatchOf('api', API_OPERATIONS));
