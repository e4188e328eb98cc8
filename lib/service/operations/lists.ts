/**
 * Lists (api.md, "Routes"): a namespace's collection page by page, or every namespace's, with
 * Kubernetes' `labelSelector` and `fieldSelector` (lib/domain/lists/selection.ts) and a `resourceVersion`
 * from the collection's history (service/history/changes.ts) that a watch starts from.
 *
 * What a selected list reads: a selector on `metadata.name` is one read by key; `spec.poolRef.name=` of
 * allocation objects reads only that pool's part of the index (as `?pool=`); `metadata.namespace` picks
 * the namespace; every other selector is a bounded filter over the namespace's pages (store/lists.ts):
 * at most `limit + 1` items read per shard a page, so a selector that keeps few answers short pages with
 * a continue token, and never a Scan.
 */
import { BadRequestError } from '../../domain/errors.ts';
import { isAllocationResource, poolInfoByAllocationResource, type Resource } from '../../domain/kinds.ts';
import { nameProblem } from '../../domain/names.ts';
import { leaseExpired } from '../../domain/objects/leases.ts';
import { liveClaim } from '../leases/leases.ts';
import { allocationObject, claimObject, poolObject, type ApiObject } from '../../domain/objects/objects.ts';
import type { AllocationRecord, ClaimRecord, PoolRecord } from '../../domain/objects/records.ts';
import {
  requiredField,
  selectionOf,
  selects,
  selectsAll,
  type SelectableRecord,
  type Selection,
} from '../../domain/lists/selection.ts';
import { decodeContinue, encodeContinue, objectKey, type ContinueToken } from '../../store/keys.ts';
import { RepairStore } from '../../store/repairs.ts';
import { nowMs, type ClaimContext } from '../context.ts';
import { listVersion } from '../history/changes.ts';
import { snapshotList } from '../history/snapshot.ts';
import { withValidity, type ObjectState } from '../../domain/lists/watch.ts';
import { allocationOutcome } from '../allocation/outcome.ts';
import { findAllocation } from './allocations.ts';
import { namespaceOf, poolOf, type OperationRequest, type Reply } from './common.ts';

/** What a list request asks for, checked. */
export interface ListPlan {
  limit: number;
  token?: ContinueToken;
  selection: Selection;
  /** Allocation objects: only this pool's (`?pool=`, or `spec.poolRef.name=` in the field selector). */
  pool?: string;
}

export function listPlan(request: OperationRequest, resource: Resource): ListPlan {
  const { limit: limitText, continue: token, labelSelector, fieldSelector, pool } = request.query;
  let limit = 100;
  if (limitText !== undefined) {
    if (!/^[0-9]{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 1000) {
      throw new BadRequestError('limit must be an integer from 1 to 1000');
    }
    limit = Number(limitText);
  }
  const selected = selectionOf(resource, { labelSelector, fieldSelector });
  if (!selected.ok) throw new BadRequestError(selected.problem);
  const plan: ListPlan = { limit, selection: selected.value };
  if (pool !== undefined) {
    if (!isAllocationResource(resource)) throw new BadRequestError('pool applies to allocation objects only');
    if (nameProblem(pool)) throw new BadRequestError('pool must be a pool name');
  }
  plan.pool = requiredField(selected.value, 'spec.poolRef.name') ?? pool;
  if (token === undefined || token === '') return plan;
  const decoded = decodeContinue(token);
  if (decoded === undefined) throw new BadRequestError('continue is not a token this API issued');
  return { ...plan, token: decoded };
}

/** One namespace's collection, a page: the objects and where the next page starts. */
export async function collectionPage(
  ctx: ClaimContext,
  namespace: string,
  resource: Resource,
  plan: ListPlan,
  limit: number,
  after: string | undefined,
): Promise<{ items: ApiObject[]; last?: string }> {
  const { selection } = plan;
  const namespaceWanted = requiredField(selection, 'metadata.namespace');
  if (namespaceWanted !== undefined && namespaceWanted !== namespace) return { items: [] };
  const name = requiredField(selection, 'metadata.name');
  if (name !== undefined) {
    // One object, read by key; a second page has nothing more.
    if (after !== undefined) return { items: [] };
    const found = await readByName(ctx, namespace, resource, name);
    return { items: found && selects(selection, found.record) ? [found.object] : [] };
  }
  const keep = selectsAll(selection) ? undefined : (record: SelectableRecord) => selects(selection, record);
  const info = poolInfoByAllocationResource(resource);
  if (info) {
    const page = await ctx.table.lists.allocations(namespace, resource, plan.pool, limit, after, keep);
    const pools = new Map<string, PoolRecord | undefined>();
    const items: ApiObject[] = [];
    for (const allocation of page.items) {
      const poolName = allocation.spec.poolRef.name;
      if (!pools.has(poolName)) pools.set(poolName, await poolOf(ctx, namespace, info, poolName));
      items.push(allocationObject(allocation, pools.get(poolName)));
    }
    return { items, last: page.last };
  }
  const page = await ctx.table.lists.objects<PoolRecord | ClaimRecord>(
    namespace,
    resource,
    limit,
    after,
    keep,
  );
  // A claim whose lease ended is gone (service/leases/leases.ts): left out, for its reader or TTL to delete.
  const now = nowMs(ctx);
  return {
    items: page.items
      .filter((item) => item.t !== 'claim' || !leaseExpired(item, now))
      .map((item) => (item.t === 'claim' ? claimObject(item) : poolObject(item as PoolRecord))),
    last: page.last,
  };
}

/** An object by name, as a read finds it (a claim mid-allocation: its outcome), and its record. */
async function readByName(
  ctx: ClaimContext,
  namespace: string,
  resource: Resource,
  name: string,
): Promise<{ record: SelectableRecord; object: ApiObject } | undefined> {
  const info = poolInfoByAllocationResource(resource);
  if (info) {
    if (nameProblem(name, 253)) return undefined;
    const allocation = await findAllocation(ctx, info, namespace, name);
    if (!allocation) return undefined;
    const pool = await poolOf(ctx, namespace, info, allocation.spec.poolRef.name);
    return { record: allocation, object: allocationObject(allocation as AllocationRecord, pool) };
  }
  if (nameProblem(name)) return undefined;
  const key = objectKey(namespace, resource, name);
  const item = await ctx.table.get<PoolRecord | ClaimRecord>(key);
  if (resource === 'claims') {
    const live = item?.t === 'claim' ? await liveClaim(ctx, key, item) : item;
    const claim =
      live?.t === 'claim' && live.phase === 'Allocating' ? await allocationOutcome(ctx, key, live) : live;
    return claim?.t === 'claim' ? { record: claim, object: claimObject(claim) } : undefined;
  }
  return item?.t === 'pool' ? { record: item, object: poolObject(item) } : undefined;
}

/**
 * A namespace's list: a page, the collection's resourceVersion, and the continue token. A list of one
 * page stands at one position of the collection's history, which a watch goes on from exactly
 * (service/history/snapshot.ts); a longer list names the head it read before its first page.
 */
export async function listCollection(
  resource: Resource,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const plan = listPlan(request, resource);
  if (plan.token && plan.token.after === undefined)
    throw new BadRequestError('continue is not a token of this list');
  const reply = (items: ApiObject[], version: number, last?: string): Reply => {
    const metadata: Record<string, string> = { resourceVersion: String(version) };
    if (last !== undefined) metadata.continue = encodeContinue({ after: last, rv: version });
    return { statusCode: 200, body: { items, metadata } };
  };
  // The pages after the first carry the first's resourceVersion.
  if (plan.token) {
    const version =
      plan.token.rv ?? (await listVersion(ctx.table, namespace, resource, isAllocationResource(resource)));
    const page = await collectionPage(ctx, namespace, resource, plan, plan.limit, plan.token.after);
    return reply(page.items, version, page.last);
  }
  const snapshot = await snapshotPage(ctx, namespace, resource, plan, plan.limit);
  return reply(snapshot.items, snapshot.version, snapshot.last);
}

/**
 * The first page and where it stands in the history: read before the page (service/history/changes.ts,
 * 4.), then, for a page that is the whole list, where its objects stand (service/history/snapshot.ts).
 */
export async function snapshotPage(
  ctx: ClaimContext,
  namespace: string,
  resource: Resource,
  plan: ListPlan,
  limit: number,
): Promise<{ items: ApiObject[]; version: number; last?: string }> {
  const fromIndex = isAllocationResource(resource);
  const version = await listVersion(ctx.table, namespace, resource, fromIndex);
  const page = await collectionPage(ctx, namespace, resource, plan, limit, undefined);
  if (page.last === undefined) {
    // Where the objects' chains start: the history appended INDEX_SETTLE_MS ago (read after the page as
    // well as before: a state the page shows is not in the history that long).
    const base = fromIndex ? version : await listVersion(ctx.table, namespace, resource, true);
    // `?pool=` selects as `spec.poolRef.name=` does: what the history's events of other pools are not.
    const selection =
      plan.pool === undefined
        ? plan.selection
        : {
            ...plan.selection,
            fields: [
              ...plan.selection.fields,
              { field: 'spec.poolRef.name', operator: '=' as const, value: plan.pool },
            ],
          };
    const collection = { namespace, resource, selection };
    const present = historyPresenter(ctx, namespace, resource);
    const visible = async (name: string) => {
      const found = await readByName(ctx, namespace, resource, name);
      return found !== undefined && selects(selection, found.record);
    };
    const found = await snapshotList(ctx, collection, page.items, base, present, visible);
    if (found && found.items.length <= limit) return found;
  }
  return { items: page.items, version, last: page.last };
}

/** A list's object of a state the history holds: an allocation object with its pool's validity. */
function historyPresenter(ctx: ClaimContext, namespace: string, resource: Resource) {
  const info = poolInfoByAllocationResource(resource);
  const pools = new Map<string, PoolRecord | undefined>();
  return async (state: ObjectState): Promise<ApiObject> => {
    if (!info) return state.object;
    const poolName = (state.object.spec as { poolRef: { name: string } }).poolRef.name;
    if (!pools.has(poolName)) pools.set(poolName, await poolOf(ctx, namespace, info, poolName));
    return withValidity(state.object, pools.get(poolName));
  };
}

/** How many namespaces one page across every namespace looks into, at most. */
export const NAMESPACES_PER_PAGE = 32;

/**
 * Every namespace's collection (`kubectl get -A`), namespace after namespace in the registry's order
 * (store/repairs.ts: every namespace that ever had a pool, a claim whose pool was missing, or an
 * allocation object made before its pool), each as its own list; at most NAMESPACES_PER_PAGE a page.
 * No resourceVersion: a watch is served per namespace.
 */
export async function listEveryNamespace(
  resource: Resource,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const plan = listPlan(request, resource);
  const token = plan.token;
  if (token && token.ns === undefined) throw new BadRequestError('continue is not a token of this list');
  const items: ApiObject[] = [];
  const reply = (next?: ContinueToken): Reply => ({
    statusCode: 200,
    body: { items, metadata: next ? { continue: encodeContinue(next) } : {} },
  });
  const only = requiredField(plan.selection, 'metadata.namespace');
  const resume = token !== undefined && !token.next;
  const names =
    only === undefined
      ? registeredFrom(new RepairStore(ctx.table), token?.ns, resume)
      : listOf(token === undefined || (resume && token.ns === only) ? [only] : []);
  let after = resume ? token.after : undefined;
  let visited = 0;
  for await (const namespace of names) {
    if (nameProblem(namespace)) continue;
    if (visited === NAMESPACES_PER_PAGE) return reply({ ns: namespace });
    visited++;
    const page = await collectionPage(ctx, namespace, resource, plan, plan.limit - items.length, after);
    after = undefined;
    items.push(...page.items);
    if (page.last !== undefined) return reply({ ns: namespace, after: page.last });
    if (items.length >= plan.limit) return reply({ ns: namespace, next: true });
  }
  return reply();
}

async function* listOf(names: string[]): AsyncGenerator<string> {
  yield* names;
}

/** The registered namespaces in order, from `first` (itself included when `inclusive`). */
async function* registeredFrom(
  registry: RepairStore,
  first: string | undefined,
  inclusive: boolean,
): AsyncGenerator<string> {
  if (first !== undefined && inclusive) yield first;
  for (let cursor = first; ;) {
    const page = await registry.namespaces(NAMESPACES_PER_PAGE, cursor);
    yield* page.items;
    if (page.last === undefined) return;
    cursor = page.last;
  }
}
