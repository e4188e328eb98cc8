/**
 * `GET …/{pool resource}/{name}/history` and `GET …/claims/{name}/history` (api.md, "The history of a
 * value"): who held a pool's values and when, newest first, from the holdings the history function keeps
 * (service/history/holdings.ts). It reads the history of a pool that no longer exists.
 *
 *   asked                           read
 *   ?value=V (with ?at, ?since,     V's own partition: ?at is one read (a value's holdings follow one
 *     ?until)                       another), a window reads back to the first holding that ended before it
 *   the pool (with ?at, ?since,     the pool's partition newest first, filtered: the longer the pool's
 *     ?until, ?claim)               past before the window, the more it reads
 *   a claim's name                  the name's partition, across pools
 */
import { BadRequestError } from '../../domain/errors.ts';
import type { Holding } from '../../domain/objects/holdings.ts';
import type { PoolKindInfo } from '../../domain/kinds.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import { decodeCursor } from '../../store/holdings.ts';
import { claimHoldingsPk, holdingKeys, type PoolId } from '../../store/keys.ts';
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

export async function poolHistory(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const pool: PoolId = {
    namespace: namespaceOf(request),
    kind: info.kind,
    name: pathName(request, info.resource),
  };
  const window = windowOf(request.query);
  const { value: text, claim } = request.query;
  if (claim !== undefined && claim === '') throw new BadRequestError('claim must name a claim');
  const startedBy = window.at ?? window.until;
  const keep = (holding: Holding) =>
    (window.at ? lasted(holding, window.at) : overlaps(holding, window)) &&
    (claim === undefined || holding.claim?.name === claim);
  if (text !== undefined) {
    const parsed = valueKind(info.allocationKind).parse(text);
    if (!parsed.ok) throw new BadRequestError(`value: ${parsed.problem}`);
    const { byValue } = holdingKeys(pool, parsed.value.value, undefined, '');
    // A value's holdings follow one another: below the first that ended before the window, none is in it.
    const before = (holding: Holding) =>
      holding.until !== undefined &&
      (window.at ? holding.until <= window.at : window.since !== undefined && holding.until < window.since);
    const page = await ctx.table.holdings.page(byValue.pk, {
      limit: window.at ? 1 : window.limit,
      // Keys sort by the record's whole second, `from` by the millisecond: an instant's second may hold
      // a holding that started after it, which `keep` leaves out, and the next is read.
      after: window.after,
      startedBy,
      keep,
      stop: before,
    });
    return list(page.items, window.at ? undefined : page.next);
  }
  const { byPool } = holdingKeys(pool, '', undefined, '');
  const page = await ctx.table.holdings.page(byPool.pk, {
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
  const page = await ctx.table.holdings.page(claimHoldingsPk(namespace, name), {
    limit: window.limit,
    after: window.after,
    startedBy: window.at ?? window.until,
    keep: (holding) => (window.at ? lasted(holding, window.at) : overlaps(holding, window)),
  });
  return list(page.items, page.next);
}
