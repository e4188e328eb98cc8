/** The on-demand repair sweep of one namespace (`POST /v1/namespaces/{namespace}/repair`, `allot repair`). */
import { BadRequestError } from '../../domain/errors.ts';
import type { ClaimContext } from '../context.ts';
import { sweepNamespace } from '../repair/sweep.ts';
import { namespaceOf, type OperationRequest, type Reply } from './common.ts';

export async function repairNamespace(request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const flag = request.query.dryRun;
  if (flag !== undefined && flag !== 'true' && flag !== 'false')
    throw new BadRequestError(`dryRun must be true or false, not ${JSON.stringify(flag.slice(0, 20))}`);
  const report = await sweepNamespace(ctx, namespace, { dryRun: flag === 'true' });
  return { statusCode: 200, body: report };
}
