/**
 * The release function: claim delete over HTTP (the route table says which routes), and `release`
 * requests by direct invocation or from the event bus (`Allot Release Requested`).
 */
import { dispatchOf } from '../lib/http/dispatch/dispatch.ts';
import { RELEASE_OPERATIONS } from '../lib/http/dispatch/release.ts';
import type { ClaimContext } from '../lib/service/context.ts';
import { deleteClaim } from '../lib/service/operations/claims.ts';
import { createClaimsHandler } from './claims-handler.ts';

export function createReleaseHandler(context?: Partial<ClaimContext>) {
  return createClaimsHandler({
    direct: { release: deleteClaim },
    dispatch: dispatchOf('release', RELEASE_OPERATIONS),
    context,
  });
}

export const handler = createReleaseHandler();
