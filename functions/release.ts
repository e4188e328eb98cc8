/**
 * The release function: claim delete over HTTP (the route table says which routes), and `release`
 * requests by direct invocation or from the event bus (`Allot Release Requested`).
 */
import { createClaimsHandler } from './claims-handler.ts';

export const handler = createClaimsHandler({ operations: ['release'] });
