/**
 * `GET …/{pool resource}/{name}/history` and `GET …/claims/{name}/history` (api.md, "The history of a
 * value"): who held a pool's values and when, from the holdings the history function keeps
 * (service/history/holdings.ts). It reads the history of a pool that no longer exists.
 *
 *   asked                           read
 *   ?value=V (with ?at, ?since,     the pool's partition by value, V's run of keys, newest first: ?at is
 *     ?until)                       one read (a value's holdings follow one another), a window reads back
 *                                   to the first holding that ended before it
 *   ?within=R (with ?at, ?since,    the same partition, R's run of keys: by value, each newest first; a
 *     ?until, ?claim)               prefix pool's prefixes containing R one run each, one per length its
 *                                   holdings were ever of (shorter than R's)
 *   the pool (with ?at, ?since,     the pool's partition by time, newest first, filtered: the longer the
 *     ?until, ?claim)               pool's past before the window, the more it reads
 *   a claim's name                  the name's partition, across pools
 *
 * `?poolNamespace=P` asks, from a tenant's namespace, for a pool of P shared with it: the same reads of
 * the tenant's own partitions (store/keys.ts `HTV#`, `HTP#`), which hold its claims' holdings only, so
 * nothing of P's or another tenant's is read. A namespace that never held a value of the pool reads
 * nothing, as for a pool that does not exist.
 */
import { BadRequestError } from '../../domain/errors.ts';
import type { Holding } from '../../domain/objects/holdings.ts';
import type { PoolKindInfo } from '../../domain/kinds.ts';
import { nameProblem } from '../../domain/names.ts';
import { familyOf } from '../../domain/values/values.ts';
import { maskedPrefix, parsePrefix, prefixRange } from '../../domain/values/ip.ts';
import { parseRange } from '../../domain/values/ranges.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import { spaceOf } from '../../domain/objects/objects.ts';
import type { PoolRecord } from '../../domain/objects/records.ts';
import { shareFor } from '../../domain/objects/sharing.ts';
import { decodeCursor, type KeyRange } from '../../store/holdings.ts';
import {
  addressSortKey,
  claimHoldingsPk,
  holdingPoolPk,
  holdingValuePk,
  holdingValueSortKey,
  indexSortKey,
  invertedStart,
  poolKeyOf,
  prefixSortKey,
  type PoolId,
} from '../../store/keys.ts';
import type { ClaimContext } from '../context.ts';
import { namespaceOf, pathName, type OperationRequest, type Reply } from './common.ts';

const LIMIT_DEFAULT = 100;
const LIMIT_MAX = 1000;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** An instant of the query, as the holdings write it (UTC, milliseconds); 400 if malformed. */
function instant(name: string, text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const ms = RFC3339.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(ms))
    throw new BadRequestError(`${name} must be an RFC 3339 time, such as 2026-12-01T14:02:00Z`);
  return new Date(ms).toISOString();
}

interface Window {
  at?: string;
  since?: string;
  until?: string;
  limit: number;
  after?: { pk: string; sk: string };
}

function windowOf(query: OperationRequest['query']): Window {
  const { limit, at, since, until } = query;
  if (limit !== undefined && (!/^[0-9]{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > LIMIT_MAX))
    throw new BadRequestError(`limit must be an integer from 1 to ${LIMIT_MAX}`);
  const window: Window = {
    at: instant('at', at),
    since: instant('since', since),
    until: instant('until', until),
    limit: limit === undefined ? LIMIT_DEFAULT : Number(limit),
  };
  if (window.at && (window.since || window.until))
    throw new BadRequestError('at cannot go with since or until');
  if (window.since && window.until && window.since > window.until)
    throw new BadRequestError('since must not be after until');
  if (query.continue !== undefined) {
    window.after = decodeCursor(query.continue);
    if (!window.after) throw new BadRequestError('continue is not a token this API answered');
  }
  return window;
}

/** Whether a holding lasted at the instant, or overlaps the window. */
const lasted = (holding: Holding, at: string) => holding.from <= at && (!holding.until || holding.until > at);
const overlaps = (holding: Holding, window: Window) =>
  (!window.since || !holding.until || holding.until >= window.since) &&
  (!window.until || holding.from <= window.until);

const list = (items: Holding[], next?: string): Reply => ({
  statusCode: 200,
  body: { kind: 'HoldingList', apiVersion: 'v1', items, metadata: next ? { continue: next } : {} },
});

/** Whether a cursor is of the partition read (one of another answers 400, never another's holdings). */
function checkCursor(window: Window, pk: string): void {
  if (window.after && window.after.pk !== pk)
    throw new BadRequestError('continue is not a token this API answered');
}

/**
 * The runs of the pool's by-value keys that `within` covers, in key order: an index range's; the
 * addresses of a CIDR; for a prefix pool, the prefixes whose network lies in the CIDR (inside it, or
 * at its network and shorter) and, one run per length, the shorter ones at a network before it that
 * contain it. 400 if `within` is not of the pool's kind, or (the pool there, and shown to the asker)
 * of its family.
 */
async function withinRanges(
  info: PoolKindInfo,
  pool: PoolId,
  tenant: string | undefined,
  text: string,
  ctx: ClaimContext,
): Promise<KeyRange[]> {
  if (info.kind === 'IndexPool') {
    const range = parseRange(text);
    if (!range.ok) throw new BadRequestError(`within: ${range.problem} (a range "a..b")`);
    return [{ lo: indexSortKey(range.value.first), hi: `${indexSortKey(range.value.last)}~` }];
  }
  const cidr = parsePrefix(text);
  if (!cidr.ok) throw new BadRequestError(`within: ${cidr.problem}`);
  const { family, network, length } = cidr.value;
  const record = await ctx.table.get<PoolRecord>(poolKeyOf(pool));
  if (record?.t === 'pool' && (tenant === undefined || shareFor(record, tenant))) {
    const space = spaceOf(record);
    const poolFamily = space.segments.length ? familyOf(space) : undefined;
    if (poolFamily !== undefined && poolFamily !== family)
      throw new BadRequestError(`within: ${text} is IPv${family}; the pool's values are IPv${poolFamily}`);
  }
  const { last } = prefixRange(cidr.value);
  const inside = { lo: addressSortKey(family, network), hi: `${addressSortKey(family, last)}~` };
  if (info.kind === 'IPAddressPool') return [inside];
  const containing = (await ctx.table.holdings.prefixLengths(pool))
    .filter((mark) => mark.family === family && mark.length < length)
    .map((mark) => maskedPrefix(family, network, mark.length))
    // One at the CIDR's own network sorts among those inside it.
    .filter((prefix) => prefix.network !== network)
    .map((prefix) => prefixSortKey(family, prefix.network, prefix.length))
    .sort()
    .map((key) => ({ lo: `${key}#`, hi: `${key}#~` }));
  return [...containing, inside];
}

export async function poolHistory(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const asker = namespaceOf(request);
  const { value: text, claim, within, poolNamespace } = request.query;
  if (poolNamespace !== undefined) {
    const problem = nameProblem(poolNamespace);
    if (problem) throw new BadRequestError(`poolNamespace ${problem}`);
  }
  const pool: PoolId = {
    namespace: poolNamespace ?? asker,
    kind: info.kind,
    name: pathName(request, info.resource),
  };
  // A tenant's view of another namespace's pool: its own claims' holdings, from its own partitions.
  const tenant = pool.namespace === asker ? undefined : asker;
  const window = windowOf(request.query);
  if (claim !== undefined && claim === '') throw new BadRequestError('claim must name a claim');
  if (text !== undefined && within !== undefined) throw new BadRequestError('value cannot go with within');
  const startedBy = window.at ?? window.until;
  const keep = (holding: Holding) =>
    (window.at ? lasted(holding, window.at) : overlaps(holding, window)) &&
    (claim === undefined || holding.claim?.name === claim);
  if (text !== undefined) {
    const parsed = valueKind(info.allocationKind).parse(text);
    if (!parsed.ok) throw new BadRequestError(`value: ${parsed.problem}`);
    const pk = holdingValuePk(pool, tenant);
    checkCursor(window, pk);
    const sortable = holdingValueSortKey(info.kind, parsed.value.value);
    // A value's holdings follow one another: below the first that ended before the window, none is in it.
    const before = (holding: Holding) =>
      holding.until !== undefined &&
      (window.at ? holding.until <= window.at : window.since !== undefined && holding.until < window.since);
    // Newest first from the last that started by the instant (keys hold starts turned: see keys.ts).
    const lo = `${sortable}#${startedBy ? invertedStart(startedBy) : ''}`;
    const page = await ctx.table.holdings.ranges(pk, [{ lo, hi: `${sortable}#~` }], {
      limit: window.at ? 1 : window.limit,
      // Keys sort by the record's whole second, `from` by the millisecond: an instant's second may hold
      // a holding that started after it, which `keep` leaves out, and the next is read.
      after: window.after,
      keep,
      stop: before,
    });
    return list(page.items, window.at ? undefined : page.next);
  }
  if (within !== undefined) {
    const ranges = await withinRanges(info, pool, tenant, within, ctx);
    const pk = holdingValuePk(pool, tenant);
    checkCursor(window, pk);
    const page = await ctx.table.holdings.ranges(pk, ranges, {
      limit: window.limit,
      after: window.after,
      keep,
    });
    return list(page.items, page.next);
  }
  const pk = holdingPoolPk(pool, tenant);
  checkCursor(window, pk);
  const page = await ctx.table.holdings.page(pk, {
    limit: window.limit,
    after: window.after,
    startedBy,
    keep,
  });
  return list(page.items, page.next);
}

export async function claimHistory(request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, 'claims');
  const window = windowOf(request.query);
  checkCursor(window, claimHoldingsPk(namespace, name));
  const page = await ctx.table.holdings.page(claimHoldingsPk(namespace, name), {
    limit: window.limit,
    after: window.after,
    startedBy: window.at ?? window.until,
    keep: (holding) => (window.at ? lasted(holding, window.at) : overlaps(holding, window)),
  });
  return list(page.items, page.next);
}
