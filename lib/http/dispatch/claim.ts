/** The claim function's operations (dispatch.ts): claim create, replace and merge patch (it allocates), and a lease's renewal. */
import { patchOperation } from '../../service/operations/patch.ts';
import { readObject } from '../../service/operations/common.ts';
import { createClaim, replaceClaim } from '../../service/operations/claims.ts';
import { renewClaim } from '../../service/operations/renew.ts';
import { withResource, type OperationTable } from './dispatch.ts';

export const CLAIM_OPERATIONS: OperationTable = {
  createClaim: (resource) => (request, ctx) => createClaim(withResource(request, resource), ctx),
  replaceClaim: (resource) => (request, ctx) => replaceClaim(withResource(request, resource), ctx),
  renewClaim: () => renewClaim,
  patchClaim: (resource) =>
    patchOperation(
      resource!,
      (request, ctx) => readObject(resource!, request, ctx),
      (request, ctx) => replaceClaim(withResource(request, resource), ctx),
    ),
};
