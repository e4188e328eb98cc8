/**
 * Allocation object operations (api.md, "Allocation objects"): pre-provisioned values, their custom
 * names, reads with `Valid` computed from the pool (lists: lists.ts).
 */
import { AlreadyExistsError, InvalidError } from '../../domain/errors.ts';
import { API_VERSION, type PoolKindInfo } from '../../domain/kinds.ts';
import { ALLOCATION_NAME_MAX, nameProblem } from '../../domain/names.ts';
import { nameRole, valueNamedBy } from '../../domain/objects/name-roles.ts';
import { allocationObject, spaceOf } from '../../domain/objects/objects.ts';
import {
  sameData,
  type AllocationRecord,
  type ItemKey,
  type NameHoldRecord,
  type QuarantineRecord,
} from '../../domain/objects/records.ts';
import { valueKind } from '../../domain/values/spaces.ts';

import {
  Causes,
  checkEnvelope,
  isObject,
  objectRef,
  ownerRef,
  rejectUnknownFields,
  specFields,
  fieldsOf,
  type JsonObject,
} from '../../domain/objects/validation.ts';
import type { ParsedValue } from '../../domain/values/values.ts';
import { ConditionFailedError } from '../../store/client.ts';
import { allocationKey, nameKey } from '../../store/keys.ts';
import { type Stored } from '../../store/items.ts';
import { type ClaimContext } from '../context.ts';
import { RepairStore } from '../../store/repairs.ts';
import { confirmHold, holdKeyOf, newHold, placeHold, releaseName } from '../allocation/name-holds.ts';
import { isRanged } from '../../domain/values/prefix-pools.ts';
import { rangedAllocationKey } from '../../store/overlaps.ts';
import { layoutOf, placeChecked } from '../allocation/prefix-check.ts';
import {
  OperationRequest,
  Reply,
  MAX_REPLACE_ATTEMPTS,
  namespaceOf,
  checkUnchangedSince,
  pathName,
  bodyObject,
  newMetadata,
  goneSinceRead,
  notFound,
  putName,
  poolOf,
} from './common.ts';
import { claimKeyOf } from './claims.ts';
export interface CheckedAllocation {
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  record: Omit<AllocationRecord, 'metadata'>;
  value: ParsedValue;
}

export function checkAllocationBody(
  info: PoolKindInfo,
  namespace: string,
  body: JsonObject,
  name?: string,
): CheckedAllocation {
  const causes = new Causes();
  const metadata = checkEnvelope(
    body,
    { kind: info.allocationKind, namespace, pathName: name, nameMax: ALLOCATION_NAME_MAX },
    causes,
  );
  const spec = body.spec;
  let value: ParsedValue | undefined;
  const record: Omit<AllocationRecord, 'metadata'> = {
    t: 'alloc',
    kind: info.allocationKind,
    spec: { poolRef: { kind: info.kind, name: '' } },
    value: '',
    origin: 'user',
    rv: 1,
  };
  if (!isObject(spec)) causes.add('spec', 'is required');
  else {
    rejectUnknownFields(spec, specFields(info.allocationKind), causes);
    const ref = objectRef(spec.poolRef, 'spec.poolRef', causes);
    if (ref) {
      if (ref.kind !== info.kind) causes.add('spec.poolRef.kind', `must be ${info.kind}`);
      if (ref.apiVersion !== undefined && ref.apiVersion !== API_VERSION)
        causes.add('spec.poolRef.apiVersion', `must be ${API_VERSION}`);
      record.spec.poolRef = { apiVersion: API_VERSION, kind: info.kind, name: ref.name };
    }
    const parsed = valueKind(info.allocationKind).parse(spec[info.valueField]);
    if (!parsed.ok)
      causes.add(
        `spec.${info.valueField}`,
        spec[info.valueField] === undefined ? 'is required' : parsed.problem,
      );
    else {
      value = parsed.value;
      record.value = parsed.value.value;
    }
    if (spec.claimRef !== undefined && spec.claimRef !== null) {
      const claimRef = spec.claimRef;
      if (!isObject(claimRef)) causes.add('spec.claimRef', 'must be an object { name, uid }');
      else {
        rejectUnknownFields(claimRef, fieldsOf('ClaimRef'), causes, 'spec.claimRef');
        const problem = nameProblem(claimRef.name);
        if (problem) causes.add('spec.claimRef.name', problem);
        if (claimRef.uid !== undefined && (typeof claimRef.uid !== 'string' || claimRef.uid.length > 253)) {
          causes.add('spec.claimRef.uid', 'must be a string');
        }
        // A claim of another namespace, on a shared pool: only one that namespace's claims may bind.
        const claimNamespace = claimRef.namespace;
        const namespaceProblem = claimNamespace === undefined ? undefined : nameProblem(claimNamespace);
        if (namespaceProblem) causes.add('spec.claimRef.namespace', namespaceProblem);
        if (!problem && !namespaceProblem)
          record.spec.claimRef = {
            name: claimRef.name as string,
            uid: (claimRef.uid as string | undefined) ?? '',
            ...(claimNamespace !== undefined &&
              claimNamespace !== namespace && { namespace: claimNamespace as string }),
          };
      }
    }
    const owner = ownerRef(spec.owner, 'spec.owner', causes);
    if (owner) record.spec.owner = owner;
  }
  const finalName = metadata.name || name;
  causes.throwIfAny(info.allocationKind, finalName);
  return { metadata, record, value: value! };
}

/**
 * Finds an allocation object by name (service/allocation/name-holds.ts): a name that stands for a value is that
 * value's key, where the object itself is (its own value) or its name hold, pointing at it; any other name
 * has a name item.
 */
export async function findAllocation(
  ctx: ClaimContext,
  info: PoolKindInfo,
  namespace: string,
  name: string,
): Promise<Stored<AllocationRecord> | undefined> {
  const named = valueNamedBy(info.allocationKind, name);
  if (named) {
    const key = holdKeyOf(namespace, info.kind, info.allocationKind, named);
    const item = await ctx.table.get<AllocationRecord | NameHoldRecord>(key);
    if (item?.t === 'alloc' && item.metadata.name === name) return item;
    if (item?.t === 'hold' && item.metadata.name === name) {
      const object = await ctx.table.get<AllocationRecord>(item.target);
      return object?.t === 'alloc' && object.metadata.uid === item.metadata.uid ? object : undefined;
    }
    // A pool of a range of prefix lengths keys its objects by its own layout.
    const ranged = await rangedKeyOf(ctx, info, namespace, named.pool, named.value);
    const other = ranged && (await ctx.table.get<AllocationRecord>(ranged));
    return other && other.t === 'alloc' && other.metadata.name === name ? other : undefined;
  }
  const pointer = await ctx.table.get<{ target: ItemKey }>(nameKey(namespace, info.allocationResource, name));
  if (!pointer) return undefined;
  const item = await ctx.table.get<AllocationRecord>(pointer.target);
  return item?.t === 'alloc' && item.metadata.name === name ? item : undefined;
}

/** The key of `value` in a pool of a range of prefix lengths, when the pool is one. */
async function rangedKeyOf(
  ctx: ClaimContext,
  info: PoolKindInfo,
  namespace: string,
  poolName: string,
  value: ParsedValue,
): Promise<ItemKey | undefined> {
  if (info.kind !== 'IPPrefixPool') return undefined;
  const pool = await poolOf(ctx, namespace, info, poolName);
  const space = pool && spaceOf(pool);
  if (!space || !isRanged(space) || !space.fits(value)) return undefined;
  return rangedAllocationKey({ namespace, kind: info.kind, name: poolName }, layoutOf(space), value);
}

export async function createAllocation(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
  name?: string,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const body = bodyObject(request.body);
  const checked = checkAllocationBody(info, namespace, body, name);
  const allocationName = checked.metadata.name || name!;
  const pool = await poolOf(ctx, namespace, info, checked.record.spec.poolRef.name);
  // A namespace with a pool is registered (pools.ts); one whose first object comes before its pool is
  // registered here, before the object, so a list across every namespace finds it.
  if (!pool) await new RepairStore(ctx.table).registerNamespace(namespace);
  if (pool && !spaceOf(pool).fits(checked.value)) {
    throw InvalidError.field(
      `spec.${info.valueField}`,
      `is not of pool ${pool.metadata.name}'s address family or prefix length`,
    ).about(info.allocationKind, allocationName);
  }
  const record: AllocationRecord = {
    ...checked.record,
    metadata: newMetadata(allocationName, namespace, checked.metadata.labels, checked.metadata.annotations),
  };
  const poolId = { namespace, kind: info.kind, name: record.spec.poolRef.name };
  const space = pool && spaceOf(pool);
  const layout = space && isRanged(space) ? layoutOf(space) : undefined;
  const key = layout
    ? rangedAllocationKey(poolId, layout, checked.value)
    : allocationKey(poolId, info.allocationKind, checked.value);
  const role = nameRole(info.allocationKind, allocationName, poolId.name, checked.value);
  const custom = role.role === 'custom';
  const exists = () =>
    new AlreadyExistsError(`${info.allocationKind} "${allocationName}" already exists`).about(
      info.allocationKind,
      allocationName,
    );
  // A custom name is reserved first, so a retry after a crash finds its own reservation and completes.
  if (custom && !(await ctx.table.putName(nameKey(namespace, info.allocationResource, allocationName), key)))
    throw exists();
  // A name that stands for another value is held first, at that value's key (service/allocation/name-holds.ts).
  const holdKey =
    role.role === 'held' ? holdKeyOf(namespace, info.kind, info.allocationKind, role) : undefined;
  if (role.role === 'held') {
    const inTheWay = await placeHold(ctx, holdKey!, newHold(record, key, info.kind, role));
    if (inTheWay?.metadata.name === allocationName) {
      if (name !== undefined && (await findAllocation(ctx, info, namespace, allocationName)))
        return replaceAllocation(info, request, ctx);
      throw exists();
    }
    if (inTheWay) {
      throw new AlreadyExistsError(
        `${info.allocationKind} "${allocationName}" is the name of ${role.value.value} of ${info.kind} ${role.pool}, which ${info.allocationKind} "${inTheWay.metadata.name}" holds`,
      ).about(info.allocationKind, allocationName);
    }
  }
  // A pool of a range of lengths: W, then R for overlap (service/allocation/prefix-check.ts).
  const placement = layout
    ? await placeChecked(ctx, poolId, layout, checked.value, record, info.allocationResource)
    : undefined;
  if (placement?.kind === 'overlaps') {
    if (holdKey) await ctx.table.holds.release(holdKey, record.metadata.uid);
    if (custom) await ctx.table.deleteName(nameKey(namespace, info.allocationResource, allocationName), key);
    const other =
      placement.other.metadata.uid === record.metadata.uid
        ? 'another allocation object'
        : `${info.allocationKind} "${placement.other.metadata.name}" (${placement.other.value})`;
    throw new AlreadyExistsError(
      `${checked.value.value} of ${info.kind} ${poolId.name} overlaps ${other}`,
    ).about(info.allocationKind, allocationName);
  }
  const placed = placement
    ? placement.kind === 'placed'
    : await ctx.table.putAllocation(key, record, checked.value.slot, info.allocationResource);
  const holder = placed
    ? undefined
    : await ctx.table.get<AllocationRecord | NameHoldRecord | QuarantineRecord>(key);
  // A retried put whose first attempt landed (its answer lost) finds this very object: it is created.
  if (!placed && holder?.metadata.uid !== record.metadata.uid) {
    if (holdKey) await ctx.table.holds.release(holdKey, record.metadata.uid);
    if (holder?.t === 'quarantine') {
      if (custom)
        await ctx.table.deleteName(nameKey(namespace, info.allocationResource, allocationName), key);
      throw new AlreadyExistsError(
        `${checked.value.value} of ${info.kind} ${poolId.name} was freed at ${holder.since} and is quarantined until ${holder.until}`,
      ).about(info.allocationKind, allocationName);
    }
    if (holder?.metadata.name === allocationName) {
      if (name !== undefined) return replaceAllocation(info, request, ctx);
      throw exists();
    }
    if (custom) await ctx.table.deleteName(nameKey(namespace, info.allocationResource, allocationName), key);
    throw new AlreadyExistsError(
      `${checked.value.value} of ${info.kind} ${poolId.name} is already held by ${info.allocationKind} "${holder?.metadata.name ?? '?'}"`,
    ).about(info.allocationKind, allocationName);
  }
  if (holdKey && !(await confirmHold(ctx, holdKey, record.metadata.uid))) {
    // This request outlived its deadline and its hold was repaired away: it undoes its object.
    await ctx.table.deleteItem(key, { uid: record.metadata.uid });
    throw new AlreadyExistsError(
      `${info.allocationKind} "${allocationName}" took too long to create and was undone; retry`,
    ).about(info.allocationKind, allocationName);
  }
  if (record.spec.claimRef)
    await ctx.table.offerToClaim(claimKeyOf(namespace, record.spec.claimRef.name), key);
  return { statusCode: 201, body: allocationObject(record, pool) };
}

export async function replaceAllocation(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const body = bodyObject(request.body);
  const name = putName(request, info.allocationKind);
  for (let attempt = 0; attempt < MAX_REPLACE_ATTEMPTS; attempt++) {
    const current = await findAllocation(ctx, info, namespace, name);
    checkUnchangedSince(request, () => (current ? allocationObject(current, undefined) : undefined));
    if (!current) return createAllocation(info, request, ctx, name);
    const checked = checkAllocationBody(info, namespace, body, name);
    const causes = new Causes();
    if (checked.record.spec.poolRef.name !== current.spec.poolRef.name)
      causes.add('spec.poolRef', 'is immutable');
    if (checked.value.value !== current.value) causes.add(`spec.${info.valueField}`, 'is immutable');
    const before = current.spec.claimRef;
    const after = checked.record.spec.claimRef;
    if (before?.uid && (after?.name !== before.name || (after.uid !== '' && after.uid !== before.uid))) {
      causes.add('spec.claimRef', `is bound to claim ${before.name}; delete that claim to release it first`);
    }
    causes.throwIfAny(info.allocationKind, name);
    const record: AllocationRecord = {
      ...checked.record,
      // A bound uid is the server's to change (bind, reclaim); a replace keeps it.
      spec: { ...checked.record.spec, ...(before?.uid && after ? { claimRef: before } : {}) },
      origin: current.origin,
      // What the overlap check wrote stays (a pool of a range of prefix lengths).
      ...(current.finest === undefined ? {} : { finest: current.finest }),
      ...(current.unchecked === undefined ? {} : { unchecked: current.unchecked }),
      metadata: {
        ...current.metadata,
        labels: checked.metadata.labels,
        annotations: checked.metadata.annotations,
        generation: current.metadata.generation + (sameData(current.spec, checked.record.spec) ? 0 : 1),
      },
      rv: current.rv + 1,
    };
    try {
      await ctx.table.replaceAllocation(
        { pk: current.pk, sk: current.sk },
        record,
        checked.value.slot,
        info.allocationResource,
        current.rv,
      );
    } catch (error) {
      if (error instanceof ConditionFailedError) continue;
      throw error;
    }
    // The offer is the key alone: a claim reads it back with GetItem, which rejects any other attribute.
    if (record.spec.claimRef) {
      await ctx.table.offerToClaim(claimKeyOf(namespace, record.spec.claimRef.name), {
        pk: current.pk,
        sk: current.sk,
      });
    }
    const pool = await poolOf(ctx, namespace, info, record.spec.poolRef.name);
    return { statusCode: 200, body: allocationObject(record, pool) };
  }
  throw new AlreadyExistsError(
    `${info.allocationKind} "${name}" changed while it was being replaced; retry`,
  ).about(info.allocationKind, name);
}

export async function readAllocation(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, info.allocationResource);
  const allocation = await findAllocation(ctx, info, namespace, name);
  if (!allocation) throw notFound(info.allocationResource, name);
  const pool = await poolOf(ctx, namespace, info, allocation.spec.poolRef.name);
  return { statusCode: 200, body: allocationObject(allocation, pool) };
}

export async function deleteAllocation(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, info.allocationResource);
  const allocation = await findAllocation(ctx, info, namespace, name);
  if (!allocation) throw notFound(info.allocationResource, name);
  const key = { pk: allocation.pk, sk: allocation.sk };
  const deleted =
    (await ctx.table.deleteItem<AllocationRecord>(key, { uid: allocation.metadata.uid })) ??
    (await goneSinceRead(ctx, key, allocation));
  if (!deleted) throw notFound(info.allocationResource, name);
  await releaseName(ctx, deleted, info.allocationResource);
  const pool = await poolOf(ctx, namespace, info, deleted.spec.poolRef.name);
  return { statusCode: 200, body: allocationObject(deleted, pool) };
}
