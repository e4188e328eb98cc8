/**
 * The claim function: claim create and replace over HTTP (the route table says which routes), and
 * `claim` requests by direct invocation or from the event bus (`Allot Claim Requested`).
 */
import { createClaimsHandler } from './claims-handler.ts';

export const handler = createClaimsHandler({ operations: ['claim'], claimMetrics: true });
