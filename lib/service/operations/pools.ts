/**
 * Pool operations (api.md, "Pools"): create, replace (spec changes; reclaimPolicy and kind are fixed)
 * and delete (409 PoolInUse while allocation objects exist, unless ?cascade=true).
 */
import { AlreadyExistsError, InvalidError, PoolInUseError } from '../../domain/errors.ts';
import { sourceClaimOf } from '../../domain/values/carving.ts';
import { prefixesOfClaim, readSourceClaim } from '../allocation/carving.ts';
import { type PoolKindInfo } from '../../domain/kinds.ts';
import { poolObject } from '../../domain/objects/objects.ts';
import {
  sameData,
  type AllocationRecord,
  type ItemKey,
  type PoolRecord,
} from '../../domain/objects/records.ts';
import { poolSpecChecker } from '../../domain/values/spaces.ts';
import { checkSharedWith, sharedNamespaces } from '../../domain/objects/sharing.ts';

import {
  Causes,
  checkEnvelope,
  isObject,
  quarantineSeconds,
  reclaimPolicy,
  rejectUnknownFields,
  specFields,
  type JsonObject,
} from '../../domain/objects/validation.ts';
import { ConditionFailedError } from '../../store/client.ts';
import type { Stored } from '../../store/items.ts';
import { objectKey } from '../../store/keys.ts';
import { type ClaimContext } from '../context.ts';
import {
  OperationRequest,
  Reply,
  MAX_REPLACE_ATTEMPTS,
  namespaceOf,
  checkUnchangedSince,
  pathName,
  bodyObject,
  newMetadata,
  ownWriteLanded,
  goneSinceRead,
  notFound,
  cascadeFlag,
  putName,
} from './common.ts';
import { RepairStore } from '../../store/repairs.ts';
import { releaseName } from '../allocation/name-holds.ts';
export interface CheckedPool {
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: PoolRecord['spec'];
}

export function checkPoolBody(
  info: PoolKindInfo,
  namespace: string,
  body: JsonObject,
  name?: string,
): CheckedPool {
  const causes = new Causes();
  const metadata = checkEnvelope(body, { kind: info.kind, namespace, pathName: name }, causes);
  const spec = body.spec;
  let canonical: PoolRecord['spec'] = { reclaimPolicy: 'Recycle' };
  if (!isObject(spec)) causes.add('spec', 'is required');
  else {
    rejectUnknownFields(spec, specFields(info.kind), causes);
    const policy = reclaimPolicy(spec.reclaimPolicy, causes);
    const quarantine = quarantineSeconds(spec, causes);
    const sharedWith = checkSharedWith(spec.sharedWith, causes);
    const checked = poolSpecChecker(info.kind)(spec);
    if ('causes' in checked) causes.addAll(checked.causes);
    else
      canonical = {
        ...checked.spec,
        reclaimPolicy: policy,
        ...(quarantine !== undefined && { quarantineSeconds: quarantine }),
        ...(sharedWith !== undefined && { sharedWith }),
      };
  }
  causes.throwIfAny(info.kind, metadata.name || name);
  return { metadata, spec: canonical };
}

export async function createPool(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const checked = checkPoolBody(info, namespace, bodyObject(request.body));
  const record: PoolRecord = {
    t: 'pool',
    kind: info.kind,
    metadata: newMetadata(
      checked.metadata.name,
      namespace,
      checked.metadata.labels,
      checked.metadata.annotations,
    ),
    spec: checked.spec,
    rv: 1,
  };
  const key = objectKey(namespace, info.resource, record.metadata.name);
  // The repair sweep finds namespaces in this registry (no Scan); before the pool, so none is missed.
  await new RepairStore(ctx.table).registerNamespace(namespace);
  // Objects made before their pool are keyed as a pool of one length's; a pool of a range of lengths,
  // whose overlap check could not see them, starts without any.
  if (
    record.spec.allocationPrefixLengths !== undefined &&
    (await ctx.table.poolHasAllocations(namespace, info.allocationResource, record.metadata.name))
  ) {
    throw InvalidError.field(
      'spec.allocationPrefixLengths',
      `IPPrefix objects already name pool ${record.metadata.name}; delete them first (a pool of a range of lengths starts empty)`,
    ).about(info.kind, record.metadata.name);
  }
  // Carved from a claim: the carving item first (so the claim's DELETE and the stream see the pool),
  // then the claim's value, then the pool (service/allocation/carving.ts).
  const source = sourceClaimOf(record.spec);
  const carving = { resource: info.resource, pool: record.metadata.name };
  if (source !== undefined) {
    await ctx.table.carvings.put(namespace, source, carving);
    const carved = prefixesOfClaim(await readSourceClaim(ctx, namespace, source));
    if (carved) record.carved = carved;
  }
  // Listed where its tenants find it before the pool names them (a leftover is never shown: the read
  // checks the pool's spec).
  const id = { namespace, kind: info.kind, name: record.metadata.name };
  await ctx.table.quotas.share(id, sharedNamespaces(record.spec));
  try {
    await ctx.table.createObject(key, record);
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    if (!(await ownWriteLanded(ctx, key, record.metadata.uid))) {
      const existing = await ctx.table.get<PoolRecord>(key);
      if (source !== undefined && (existing?.t !== 'pool' || sourceClaimOf(existing.spec) !== source))
        await ctx.table.carvings.delete(namespace, source, carving);
      throw new AlreadyExistsError(`${info.kind} "${record.metadata.name}" already exists`).about(
        info.kind,
        record.metadata.name,
      );
    }
  }
  return { statusCode: 201, body: poolObject(record) };
}

export function samePoolSpec(a: PoolRecord['spec'], b: PoolRecord['spec']): boolean {
  return sameData(a, b);
}

export async function replacePool(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const body = bodyObject(request.body);
  const name = putName(request, info.kind);
  const checked = checkPoolBody(info, namespace, body, name);
  const key = objectKey(namespace, info.resource, name);
  for (let attempt = 0; attempt < MAX_REPLACE_ATTEMPTS; attempt++) {
    const current = await ctx.table.get<PoolRecord>(key);
    checkUnchangedSince(request, () => (current?.t === 'pool' ? poolObject(current) : undefined));
    if (current?.t !== 'pool')
      return createPool(
        info,
        { ...request, body: { ...body, metadata: { ...(body.metadata as object), name } } },
        ctx,
      );
    const causes = new Causes();
    if (checked.spec.reclaimPolicy !== current.spec.reclaimPolicy) {
      causes.add('spec.reclaimPolicy', `is immutable (${current.spec.reclaimPolicy})`);
    }
    if (
      info.kind === 'IPPrefixPool' &&
      checked.spec.allocationPrefixLength !== current.spec.allocationPrefixLength
    ) {
      causes.add(
        'spec.allocationPrefixLength',
        `is immutable (${String(current.spec.allocationPrefixLength)})`,
      );
    }
    if (
      info.kind === 'IPPrefixPool' &&
      JSON.stringify(checked.spec.allocationPrefixLengths) !==
        JSON.stringify(current.spec.allocationPrefixLengths)
    ) {
      causes.add(
        'spec.allocationPrefixLengths',
        `is immutable (${JSON.stringify(current.spec.allocationPrefixLengths ?? null)})`,
      );
    }
    if (JSON.stringify(checked.spec.prefixesFrom) !== JSON.stringify(current.spec.prefixesFrom)) {
      causes.add(
        'spec.prefixesFrom',
        current.spec.prefixesFrom === undefined
          ? 'cannot be given to a pool with its own prefixes'
          : `is immutable (${JSON.stringify(current.spec.prefixesFrom)})`,
      );
    }
    causes.throwIfAny(info.kind, name);
    const specChanged = !samePoolSpec(checked.spec, current.spec);
    const record: PoolRecord = {
      t: 'pool',
      kind: info.kind,
      metadata: {
        ...current.metadata,
        labels: checked.metadata.labels,
        annotations: checked.metadata.annotations,
        generation: current.metadata.generation + (specChanged ? 1 : 0),
      },
      spec: checked.spec,
      rv: current.rv + 1,
    };
    if (current.counts) record.counts = current.counts;
    if (current.carved) record.carved = current.carved;
    const id = { namespace, kind: info.kind, name };
    const before = sharedNamespaces(current.spec);
    const after = sharedNamespaces(record.spec);
    await ctx.table.quotas.share(
      id,
      after.filter((ns) => !before.includes(ns)),
    );
    try {
      await ctx.table.replaceObject(key, record, current.rv);
      await ctx.table.quotas.unshare(
        id,
        before.filter((ns) => !after.includes(ns)),
      );
      return { statusCode: 200, body: poolObject(record) };
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }
  throw new AlreadyExistsError(`${info.kind} "${name}" changed while it was being replaced; retry`).about(
    info.kind,
    name,
  );
}

export async function deletePool(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, info.resource);
  const cascade = cascadeFlag(request);
  const key = objectKey(namespace, info.resource, name);
  const pool = await ctx.table.get<PoolRecord>(key);
  if (pool?.t !== 'pool') throw notFound(info.resource, name);
  if (!cascade) {
    if (await ctx.table.poolHasAllocations(namespace, info.allocationResource, name)) {
      throw new PoolInUseError(
        `${info.kind} "${name}" still has allocation objects; release its claims, or delete with ?cascade=true`,
      ).about(info.kind, name);
    }
  } else {
    // Marked first, so claims of other namespaces (which stay) do not take its values again meanwhile.
    if (pool.spec.sharedWith !== undefined) await ctx.table.markDeleting(key, pool.metadata.uid);
    // Allocation objects and their claims go first: a cascade cut short leaves the pool, and a retry
    // finishes it, so nothing is orphaned.
    for await (const listed of ctx.table.poolAllocations(namespace, info.allocationResource, name))
      await deleteWithItsClaim(ctx, namespace, info, listed);
  }
  // The stream function's summaries of the pool go with it: a pool created again under the name starts
  // empty at once, not when the stream has caught up.
  await ctx.table.summaries.deleteSummaries({ namespace, kind: info.kind, name });
  const deleted =
    (await ctx.table.deleteItem<PoolRecord>(key, { uid: pool.metadata.uid })) ??
    (await goneSinceRead(ctx, key, pool));
  if (!deleted) throw notFound(info.resource, name);
  await ctx.table.quotas.unshare({ namespace, kind: info.kind, name }, sharedNamespaces(deleted.spec));
  // Its source claim may be released now (it stays as it was).
  const source = sourceClaimOf(deleted.spec);
  if (source !== undefined)
    await ctx.table.carvings.delete(namespace, source, { resource: info.resource, pool: name });
  return { statusCode: 200, body: poolObject(deleted) };
}

/** Attempts at one object of a cascade while claims keep binding it (each attempt reads it again). */
const CASCADE_ATTEMPTS = 5;

/**
 * A cascade's delete of one allocation object, and of the claim bound to it. The delete is conditional
 * on the revision read, so a claim that binds the object meanwhile (bumping it) is not left Allocated
 * with its object gone: the object is read again, and its new claim goes with it.
 */
async function deleteWithItsClaim(
  ctx: ClaimContext,
  namespace: string,
  info: PoolKindInfo,
  listed: Stored<AllocationRecord>,
): Promise<void> {
  let allocation: Stored<AllocationRecord> | undefined = listed;
  for (let attempt = 0; allocation && attempt < CASCADE_ATTEMPTS; attempt++) {
    const ref = allocation.spec.claimRef;
    // A claim of another namespace (a shared pool) stays: its owner's namespace is not the pool's to
    // change. It loses its object, and the stream function has it wait for the pool (PoolNotFound).
    const own = ref?.namespace === undefined || ref.namespace === namespace;
    if (ref?.uid && own)
      await ctx.table.deleteItem(objectKey(namespace, 'claims', ref.name), { uid: ref.uid });
    const key: ItemKey = { pk: allocation.pk, sk: allocation.sk };
    if (await ctx.table.deleteItem(key, { rv: allocation.rv })) {
      await releaseName(ctx, allocation, info.allocationResource);
      return;
    }
    // Changed since it was listed (the index lags) or read: as it is now, if it is still there.
    const now: Stored<AllocationRecord> | undefined = await ctx.table.get<AllocationRecord>(key);
    allocation = now?.t === 'alloc' ? now : undefined;
  }
  if (allocation)
    throw new AlreadyExistsError(
      `allocation object ${allocation.metadata.name} kept changing while the pool was deleted; retry`,
    ).about(info.kind, allocation.spec.poolRef.name);
}
