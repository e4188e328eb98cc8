/** `POST …/claims/{name}/renew` (api.md, "Claim"): a lease starts again from now (service/leases/leases.ts). */
import { ConflictError } from '../../domain/errors.ts';
import { leaseEnd } from '../../domain/objects/leases.ts';
import { claimObject } from '../../domain/objects/objects.ts';
import type { ClaimRecord } from '../../domain/objects/records.ts';
import { objectKey } from '../../store/keys.ts';
import { nowMs, nowText, type ClaimContext } from '../context.ts';
import { liveClaim } from '../leases/leases.ts';
import { namespaceOf, notFound, pathName, type OperationRequest, type Reply } from './common.ts';

/**
 * `POST …/claims/{name}/renew`: the lease starts again from now (one read for its `leaseSeconds`, one
 * conditional write). 404 for a claim that is not there or has expired, 409 for one without a lease.
 */
export async function renewClaim(request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, 'claims');
  const key = objectKey(namespace, 'claims', name);
  for (let attempt = 0; attempt < 3; attempt++) {
    const current = await liveClaim(ctx, key, await ctx.table.get<ClaimRecord>(key));
    if (current?.t !== 'claim') throw notFound('claims', name);
    const seconds = current.spec.leaseSeconds;
    if (seconds === undefined || current.leaseExpiresAt === undefined)
      throw new ConflictError(`Claim "${name}" has no lease (spec.leaseSeconds) to renew`).about(
        'Claim',
        name,
      );
    const renewed = await ctx.table.renewLease(
      key,
      current.metadata.uid,
      current.leaseExpiresAt,
      leaseEnd(nowMs(ctx), seconds),
      nowText(ctx),
    );
    // Lost to another renewal, a change, or the lease's end: read again and answer what is there.
    if (renewed) return { statusCode: 200, body: claimObject(renewed) };
  }
  throw new ConflictError(`Claim "${name}" changed while it was being renewed; retry`).about('Claim', name);
}
