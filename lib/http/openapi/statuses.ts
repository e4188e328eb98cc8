/** The OpenAPI document's statuses (http/openapi/openapi.ts): each /v1 operation's success, and its errors. */
import type { V1OperationName } from '../routes.ts';

/** The status each operation answers with when it succeeds. */
export const SUCCESS: Record<V1OperationName, number> = {
  healthz: 200,
  openapi: 200,
  list: 200,
  read: 200,
  create: 201,
  createClaim: 201,
  replace: 200,
  replaceClaim: 200,
  delete: 200,
  deleteClaim: 200,
  renewClaim: 200,
  occupancy: 200,
  preview: 200,
  repair: 200,
  sharedPools: 200,
  history: 200,
};

/** The errors each operation can answer with, besides 500. */
export const ERRORS: Record<V1OperationName, readonly string[]> = {
  healthz: [],
  openapi: [],
  list: ['BadRequest', 'Expired'],
  read: ['NotFound'],
  create: ['BadRequest', 'AlreadyExists', 'RequestEntityTooLarge', 'UnsupportedMediaType', 'Invalid'],
  createClaim: ['BadRequest', 'AlreadyExists', 'RequestEntityTooLarge', 'UnsupportedMediaType', 'Invalid'],
  replace: ['BadRequest', 'RequestEntityTooLarge', 'UnsupportedMediaType', 'Invalid'],
  replaceClaim: ['BadRequest', 'RequestEntityTooLarge', 'UnsupportedMediaType', 'Invalid'],
  delete: ['NotFound'],
  deleteClaim: ['NotFound', 'ClaimInUse'],
  renewClaim: ['NotFound', 'Conflict'],
  occupancy: ['BadRequest', 'NotFound'],
  preview: ['BadRequest', 'NotFound', 'Invalid'],
  repair: ['BadRequest', 'NotFound'],
  sharedPools: ['BadRequest'],
  history: ['BadRequest'],
};
