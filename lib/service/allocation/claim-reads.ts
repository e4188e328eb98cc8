/**
 * What a new claim reads before its allocation put, fetched in the round trip its own write goes out in
 * (operations/claims.ts): its pool and, beside it in one BatchGetItem, the group summary its search
 * reads first (decide.ts).
 *
 * Which summary that is follows from the pool (its spec, its counts' hint, whether it is contended), which
 * is being read at that moment; so the instance remembers each pool as its last claim read it, and picks
 * the summary from that memory. The memory picks a key to read, nothing more: the claim is decided on the
 * pool read now, and the summary is used only when it is the one the search asks for first. A memory gone
 * stale (the spec changed, the pool was deleted or made again, the hint moved to another group) costs the
 * summary read again, one more round trip; it never hands out a value outside the pool as it is, nor one
 * of a pool that is gone. It is refreshed by every read, and forgotten when the pool is not found.
 */
import type { ClaimRecord, PoolRecord } from '../../domain/objects/records.ts';
import type { Stored } from '../../store/items.ts';
import { poolKeyOf } from '../../store/keys.ts';
import type { ClaimContext } from '../context.ts';
import { poolIdOf, type DecideOptions } from './decide.ts';
import { firstSummaryOf } from './search.ts';

/** Pools one instance remembers at most (it forgets them all past this, as its other memories do). */
const POOLS_REMEMBERED = 10_000;

export interface ClaimReads {
  pool: Stored<PoolRecord> | undefined;
  /** For decide: the summary read beside the pool, and the draw it was picked with. */
  decideOptions: DecideOptions;
}

/**
 * The claim's pool (an eventually consistent read, confirmed by a consistent one when it finds nothing, as
 * decide.ts's readPool) and, when this instance has read the pool before, the summary its search will
 * read first.
 */
export async function readForClaim(ctx: ClaimContext, claim: ClaimRecord): Promise<ClaimReads> {
  const id = poolIdOf(claim);
  const key = poolKeyOf(id);
  const memoryKey = `${key.pk}/${key.sk}`;
  const draw = (ctx.random ?? Math.random)();
  const remembered = ctx.poolsRead?.get(memoryKey);
  const group = remembered ? firstSummaryOf(ctx, claim, remembered, draw) : undefined;
  let found: Stored<PoolRecord> | undefined;
  let bits: Uint8Array | undefined;
  if (group) {
    const read = await ctx.table.summaries.readWithGroupBits(key, id, group);
    found = read.item as Stored<PoolRecord> | undefined;
    bits = read.bits;
  } else found = await ctx.table.get<PoolRecord>(key, false);
  if (found?.t !== 'pool') found = await ctx.table.get<PoolRecord>(key, true);
  const pool = found?.t === 'pool' ? found : undefined;
  const pools = (ctx.poolsRead ??= new Map());
  if (pool) {
    if (pools.size >= POOLS_REMEMBERED) pools.clear();
    pools.set(memoryKey, pool);
  } else pools.delete(memoryKey);
  return {
    pool,
    decideOptions: { draw, prefetched: group && bits && pool ? { group, bits } : undefined },
  };
}
