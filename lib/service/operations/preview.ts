/**
 * `GET …/{pool}/{name}/preview` (api.md, "Routes"): the values, in order, that claims made now by one
 * caller would get. Reads only: it walks the claim's candidates from the pool's hint as a claim does,
 * skipping what the stream function's summaries show held and confirming each pick against the
 * allocation objects of its block (the summaries may lag). Nothing is written and nothing held.
 */
import { SUMMARY_SPAN, BLOCK_SIZE } from '../../domain/search/allocate.ts';
import { runsFrom, type Segment } from '../../domain/values/candidates.ts';
import { BadRequestError, InvalidError } from '../../domain/errors.ts';
import { poolKindInfo, type PoolKindInfo } from '../../domain/kinds.ts';
import { spaceOf } from '../../domain/objects/objects.ts';
import { claimSpace, isRanged } from '../../domain/values/prefix-pools.ts';
import type { PoolRecord } from '../../domain/objects/records.ts';
import type { Cause } from '../../domain/errors.ts';
import { familyOf, type PoolSpace } from '../../domain/values/values.ts';
import { GROUP_BITS, objectKey, type PoolId } from '../../store/keys.ts';
import { isHeld } from '../../store/items.ts';
import type { ClaimContext } from '../context.ts';
import { hintOf, summarised } from '../allocation/decide.ts';
import { previewRanged } from '../allocation/prefix-search.ts';
import { namespaceOf, notFound, pathName, type OperationRequest, type Reply } from './common.ts';

const COUNT_MAX = 100;
/** Reads one preview may make: a preview of a huge, nearly full pool stops early rather than walk it. */
export const PREVIEW_READS = 256;

export interface PreviewRequest {
  count: number;
  prefixLength?: number;
  within?: string;
  reserved?: string[];
}

/** Reads `count`, `prefixLength`, `within` and `reserved` (comma-separated) from the query; 400 if malformed. */
export function previewQuery(query: Record<string, string | undefined>): PreviewRequest {
  const { count, prefixLength, within, reserved } = query;
  const request: PreviewRequest = { count: 1 };
  if (count !== undefined) {
    if (!/^[0-9]{1,3}$/.test(count) || Number(count) < 1 || Number(count) > COUNT_MAX)
      throw new BadRequestError(`count must be an integer from 1 to ${COUNT_MAX}`);
    request.count = Number(count);
  }
  if (prefixLength !== undefined) {
    if (!/^[0-9]{1,3}$/.test(prefixLength)) throw new BadRequestError('prefixLength must be an integer');
    request.prefixLength = Number(prefixLength);
  }
  if (within !== undefined) request.within = within;
  if (reserved !== undefined) request.reserved = reserved === '' ? [] : reserved.split(',');
  return request;
}

function invalid(causes: readonly Cause[], pool: PoolRecord): never {
  // The query parameters stand for a claim's spec fields: name them as the query does.
  const named = causes.map((cause) => ({ ...cause, field: cause.field.replace(/^spec\./, '') }));
  const first = named[0]!;
  throw new InvalidError(`${first.field}: ${first.message}`, named).about(pool.kind, pool.metadata.name);
}

export async function previewPool(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, info.resource);
  const query = previewQuery(request.query);
  const pool = await ctx.table.get<PoolRecord>(objectKey(namespace, info.resource, name));
  if (pool?.t !== 'pool') throw notFound(info.resource, name);
  const values = await previewValues(ctx, pool, query);
  return { statusCode: 200, body: { kind: 'Preview', values } };
}

/** The next `count` values a claim with these limits would get from the pool now. */
export async function previewValues(
  ctx: ClaimContext,
  pool: PoolRecord,
  query: PreviewRequest,
): Promise<string[]> {
  const space = spaceOf(pool);
  if (query.prefixLength !== undefined && !space.prefixLengths)
    invalid([{ field: 'prefixLength', message: 'applies to IPPrefixPool only' }], pool);
  const chosen = claimSpace(space, query.prefixLength, undefined);
  if ('causes' in chosen) return invalid(chosen.causes, pool);
  const restricted = chosen.space.claimSegments(query.within, query.reserved);
  if ('causes' in restricted) return invalid(restricted.causes, pool);
  const unrestricted = query.within === undefined && query.reserved === undefined;
  const poolId: PoolId = { namespace: pool.metadata.namespace, kind: pool.kind, name: pool.metadata.name };
  if (isRanged(space))
    return previewRanged(ctx, pool, space, chosen.length!, restricted.segments, query.count, {
      hint: unrestricted ? hintOf(pool) : 0n,
      summarised: summarised(pool),
    });
  return previewSlots(ctx, pool, poolId, chosen.space, restricted.segments, {
    from: unrestricted ? hintOf(pool) : 0n,
    count: query.count,
  });
}

async function previewSlots(
  ctx: ClaimContext,
  pool: PoolRecord,
  poolId: PoolId,
  space: PoolSpace,
  segments: readonly Segment[],
  options: { from: bigint; count: number },
): Promise<string[]> {
  const allocationKind = poolKindInfo(pool.kind)!.allocationKind;
  const family = familyOf(space);
  const values: string[] = [];
  const useSummary = summarised(pool);
  let reads = 0;
  for (const run of runsFrom(segments, options.from)) {
    let cursor = run.first;
    while (cursor <= run.last && values.length < options.count && reads < PREVIEW_READS) {
      const spanLast = minBig(run.last, cursor | (SUMMARY_SPAN - 1n));
      let summaryHeld: ((slot: bigint) => boolean) | undefined;
      if (useSummary) {
        const group = cursor >> GROUP_BITS;
        const bits = await ctx.table.summaries.readGroupBits(poolId, { family, group });
        reads++;
        summaryHeld = (slot) => isHeld(bits, Number(slot - (group << GROUP_BITS)));
      }
      // Block by block: the summary says where a free value may be, the objects of the block decide.
      for (let block = cursor; block <= spanLast && values.length < options.count;) {
        const blockLast = minBig(spanLast, block | (BLOCK_SIZE - 1n));
        let maybe = false;
        for (let slot = block; slot <= blockLast && !maybe; slot++) maybe = !(summaryHeld?.(slot) ?? false);
        if (maybe && reads < PREVIEW_READS) {
          const held = new Set(await ctx.table.heldSlots(poolId, allocationKind, family, block, blockLast));
          reads++;
          for (let slot = block; slot <= blockLast && values.length < options.count; slot++) {
            if (!held.has(slot)) values.push(space.valueAt(slot).value);
          }
        }
        block = blockLast + 1n;
      }
      cursor = spanLast + 1n;
    }
    if (values.length >= options.count || reads >= PREVIEW_READS) break;
  }
  return values;
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
