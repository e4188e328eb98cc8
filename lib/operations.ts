/**
 * The API's operations (api.md, "Routes"): each takes a parsed request and the table and returns its
 * success reply; every failure is a thrown AllotError, mapped to a Status body in one place.
 */
import { randomUUID } from 'node:crypto';
import {
  AlreadyExistsError,
  BadRequestError,
  InvalidError,
  NotFoundError,
  PoolInUseError,
} from './errors.ts';
import {
  API_VERSION,
  kindOfResource,
  poolInfoByAllocationResource,
  poolInfoByResource,
  poolKindInfo,
  type PoolKindInfo,
  type Resource,
} from './kinds.ts';
import { ALLOCATION_NAME_MAX, nameProblem } from './names.ts';
import {
  allocationObject,
  claimObject,
  condition,
  poolObject,
  spaceOf,
  type ApiObject,
  timestamp,
} from './objects.ts';
import type { AllocationRecord, ClaimRecord, ClaimSpec, ItemKey, PoolRecord } from './records.ts';
import { poolSpecChecker, valueKind } from './spaces.ts';
import { parseRange } from './ranges.ts';
import { parsePrefix } from './ip.ts';
import {
  ConditionFailedError,
  allocationKey,
  decodeContinue,
  encodeContinue,
  nameKey,
  objectKey,
  type Stored,
} from './table.ts';
import {
  Causes,
  checkEnvelope,
  isObject,
  objectRef,
  ownerRef,
  reclaimPolicy,
  rejectUnknownFields,
  specFields,
  fieldsOf,
  RESERVED_MAX,
  WITHIN_MAX,
  type JsonObject,
  type Metadata,
} from './validation.ts';
import {
  decide,
  HANDLER_DEADLINE_MS,
  poolIdOf,
  poolRefValid,
  readPool,
  settle,
  type ClaimContext,
} from './claims.ts';
import { buildOpenApi } from './openapi.ts';
import type { ParsedValue } from './values.ts';

export interface OperationRequest {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  body: unknown;
}

export interface Reply {
  statusCode: number;
  body: unknown;
}

export type Operation = (request: OperationRequest, ctx: ClaimContext) => Promise<Reply>;

const MAX_REPLACE_ATTEMPTS = 5;

// ---------------------------------------------------------------- request pieces

function namespaceOf(request: OperationRequest): string {
  const namespace = request.params.namespace ?? '';
  if (nameProblem(namespace))
    throw new NotFoundError(`namespace "${clipName(namespace)}" is not a valid namespace`);
  return namespace;
}

/** A name in the path: a malformed one names nothing, so reads and deletes answer 404. */
function pathName(request: OperationRequest, resource: Resource): string {
  const name = request.params.name ?? '';
  const max = poolInfoByAllocationResource(resource) ? ALLOCATION_NAME_MAX : 63;
  if (nameProblem(name, max)) {
    throw new NotFoundError(`${kindOfResource(resource)} "${clipName(name)}" not found`).about(
      kindOfResource(resource),
      clipName(name),
    );
  }
  return name;
}

function clipName(name: string): string {
  return name.length > 80 ? `${name.slice(0, 80)}…` : name;
}

function bodyObject(body: unknown): JsonObject {
  if (!isObject(body)) throw new BadRequestError('the body must be a JSON object');
  return body;
}

function newMetadata(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  annotations: Record<string, string>,
): Metadata {
  return {
    name,
    namespace,
    uid: randomUUID(),
    generation: 1,
    creationTimestamp: timestamp(),
    labels,
    annotations,
  };
}

/** The uid of the object stored under `key`, if any (a consistent read). */
async function storedUid(ctx: ClaimContext, key: ItemKey): Promise<string | undefined> {
  return (await ctx.table.get<{ metadata?: { uid?: string } }>(key))?.metadata?.uid;
}

/**
 * Whether the item under `key` is the one this request wrote (its uid): the SDK retries a conditional put
 * whose answer was lost (a timeout after the store applied it), and the retry fails on that very item.
 */
async function ownWriteLanded(ctx: ClaimContext, key: ItemKey, uid: string): Promise<boolean> {
  return (await storedUid(ctx, key)) === uid;
}

/**
 * After a conditional delete failed: when the object read before is gone, it was deleted (maybe by this
 * request's own first attempt, whose answer was lost and retried), and what was read is its last state.
 */
async function goneSinceRead<T extends { metadata: { uid: string } }>(
  ctx: ClaimContext,
  key: ItemKey,
  read: T,
): Promise<T | undefined> {
  return (await storedUid(ctx, key)) === read.metadata.uid ? undefined : read;
}

function notFound(resource: Resource, name: string): NotFoundError {
  const kind = kindOfResource(resource);
  return new NotFoundError(`${kind} "${name}" not found`).about(kind, name);
}

function listQuery(request: OperationRequest): { limit: number; after?: string } {
  const { limit: limitText, continue: token } = request.query;
  let limit = 100;
  if (limitText !== undefined) {
    if (!/^[0-9]{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 1000) {
      throw new BadRequestError('limit must be an integer from 1 to 1000');
    }
    limit = Number(limitText);
  }
  if (token === undefined || token === '') return { limit };
  const after = decodeContinue(token);
  if (after === undefined) throw new BadRequestError('continue is not a token this API issued');
  return { limit, after };
}

function listReply(items: ApiObject[], last: string | undefined): Reply {
  return {
    statusCode: 200,
    body: { items, metadata: last === undefined ? {} : { continue: encodeContinue(last) } },
  };
}

// ---------------------------------------------------------------- pools

interface CheckedPool {
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: PoolRecord['spec'];
}

function checkPoolBody(info: PoolKindInfo, namespace: string, body: JsonObject, name?: string): CheckedPool {
  const causes = new Causes();
  const metadata = checkEnvelope(body, { kind: info.kind, namespace, pathName: name }, causes);
  const spec = body.spec;
  let canonical: PoolRecord['spec'] = { reclaimPolicy: 'Recycle' };
  if (!isObject(spec)) causes.add('spec', 'is required');
  else {
    rejectUnknownFields(spec, specFields(info.kind), causes);
    const policy = reclaimPolicy(spec.reclaimPolicy, causes);
    const checked = poolSpecChecker(info.kind)(spec);
    if ('causes' in checked) causes.addAll(checked.causes);
    else canonical = { ...checked.spec, reclaimPolicy: policy };
  }
  causes.throwIfAny(info.kind, metadata.name || name);
  return { metadata, spec: canonical };
}

async function createPool(info: PoolKindInfo, request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
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
  try {
    await ctx.table.createObject(key, record);
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    if (!(await ownWriteLanded(ctx, key, record.metadata.uid))) {
      throw new AlreadyExistsError(`${info.kind} "${record.metadata.name}" already exists`).about(
        info.kind,
        record.metadata.name,
      );
    }
  }
  return { statusCode: 201, body: poolObject(record) };
}

function samePoolSpec(a: PoolRecord['spec'], b: PoolRecord['spec']): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

async function replacePool(info: PoolKindInfo, request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const body = bodyObject(request.body);
  const name = putName(request, info.kind);
  const checked = checkPoolBody(info, namespace, body, name);
  const key = objectKey(namespace, info.resource, name);
  for (let attempt = 0; attempt < MAX_REPLACE_ATTEMPTS; attempt++) {
    const current = await ctx.table.get<PoolRecord>(key);
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
    try {
      await ctx.table.replaceObject(key, record, current.rv);
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

async function deletePool(info: PoolKindInfo, request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
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
    // Allocation objects and their claims go first: a cascade cut short leaves the pool, and a retry
    // finishes it, so nothing is orphaned.
    for await (const allocation of ctx.table.poolAllocations(namespace, info.allocationResource, name)) {
      const ref = allocation.spec.claimRef;
      if (ref?.uid) await ctx.table.deleteItem(objectKey(namespace, 'claims', ref.name), { uid: ref.uid });
      await ctx.table.deleteItem({ pk: allocation.pk, sk: allocation.sk });
      await deleteCustomName(ctx, allocation, info.allocationResource);
    }
  }
  // The stream function's summaries of the pool go with it: a pool created again under the name starts
  // empty at once, not when the stream has caught up.
  await ctx.table.deleteSummaries({ namespace, kind: info.kind, name });
  const deleted =
    (await ctx.table.deleteItem<PoolRecord>(key, { uid: pool.metadata.uid })) ??
    (await goneSinceRead(ctx, key, pool));
  if (!deleted) throw notFound(info.resource, name);
  return { statusCode: 200, body: poolObject(deleted) };
}

function cascadeFlag(request: OperationRequest): boolean {
  const value = request.query.cascade;
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new BadRequestError('cascade must be true or false');
}

/** The name in a PUT's path: a malformed one is the body's problem to name (422), not a missing object. */
function putName(request: OperationRequest, kind: string): string {
  const name = request.params.name ?? '';
  const problem = nameProblem(
    name,
    poolInfoByAllocationResource(request.params.resource ?? '') ? ALLOCATION_NAME_MAX : 63,
  );
  if (problem) throw InvalidError.field('metadata.name', problem).about(kind, clipName(name));
  return name;
}

// ---------------------------------------------------------------- claims

function checkClaimBody(namespace: string, body: JsonObject, name?: string) {
  const causes = new Causes();
  const metadata = checkEnvelope(body, { kind: 'Claim', namespace, pathName: name }, causes);
  const spec = body.spec;
  const claimSpec: ClaimSpec = { poolRef: { kind: '', name: '' } };
  if (!isObject(spec)) causes.add('spec', 'is required');
  else {
    rejectUnknownFields(spec, specFields('Claim'), causes);
    const ref = objectRef(spec.poolRef, 'spec.poolRef', causes);
    if (ref) claimSpec.poolRef = ref;
    const info = ref ? poolKindInfo(ref.kind) : undefined;
    if (spec.value !== undefined) {
      if (info) {
        const value = valueKind(info.allocationKind).parse(spec.value);
        if (!value.ok) causes.add('spec.value', value.problem);
        else claimSpec.value = value.value.value;
      } else if (typeof spec.value === 'string' || typeof spec.value === 'number')
        claimSpec.value = String(spec.value);
      else causes.add('spec.value', 'must be a string or an integer');
    }
    if (spec.within !== undefined) {
      if (typeof spec.within !== 'string' || spec.within.length > WITHIN_MAX)
        causes.add('spec.within', 'must be a range "a..b" or a CIDR');
      else {
        // Its form follows from poolRef.kind, as the value's does: a malformed one is refused now, not
        // stored to turn PoolExhausted once the pool appears.
        const problem = info ? withinProblem(info.kind, spec.within) : undefined;
        if (problem) causes.add('spec.within', problem);
        else claimSpec.within = spec.within;
      }
    }
    if (spec.reserved !== undefined) {
      if (!Array.isArray(spec.reserved) || spec.reserved.length > RESERVED_MAX)
        causes.add('spec.reserved', `must be a list of at most ${RESERVED_MAX} addresses`);
      else if (info?.kind === 'IPAddressPool') {
        claimSpec.reserved = spec.reserved.map((entry: unknown, i) => {
          const value = valueKind('IPAddress').parse(entry);
          if (!value.ok) causes.add(`spec.reserved[${i}]`, value.problem);
          return value.ok ? value.value.value : '';
        });
      } else if (info) causes.add('spec.reserved', 'applies to IPAddressPool only');
      else claimSpec.reserved = spec.reserved.map(String);
    }
    const owner = ownerRef(spec.owner, 'spec.owner', causes);
    if (owner) claimSpec.owner = owner;
  }
  causes.throwIfAny('Claim', metadata.name || name);
  return { metadata, spec: claimSpec };
}

/** Why `within` is not of the form its pool kind takes ("a..b" for IndexPool, a CIDR for IP pools). */
function withinProblem(kind: PoolKindInfo['kind'], within: string): string | undefined {
  const parsed = kind === 'IndexPool' ? parseRange(within) : parsePrefix(within);
  return parsed.ok ? undefined : parsed.problem;
}

/** Checks a claim's `within`, `reserved` and `value` against its pool when the pool exists (422 on misfit). */
function checkClaimAgainstPool(spec: ClaimSpec, pool: PoolRecord, name: string): void {
  const space = spaceOf(pool);
  const causes = new Causes();
  const restricted = space.claimSegments(spec.within, spec.reserved);
  if ('causes' in restricted) causes.addAll(restricted.causes);
  if (spec.value !== undefined) {
    const value = valueKind(poolKindInfo(pool.kind)!.allocationKind).parse(spec.value);
    if (value.ok && !space.fits(value.value))
      causes.add('spec.value', `is not of the pool's address family or prefix length`);
  }
  causes.throwIfAny('Claim', name);
}

function claimKeyOf(namespace: string, name: string): ItemKey {
  return objectKey(namespace, 'claims', name);
}

async function createClaim(request: OperationRequest, ctx: ClaimContext, name?: string): Promise<Reply> {
  const namespace = namespaceOf(request);
  const body = bodyObject(request.body);
  const checked = checkClaimBody(namespace, body, name);
  const claimName = checked.metadata.name;
  const key = claimKeyOf(namespace, claimName);
  const now = timestamp();
  const record: ClaimRecord = {
    t: 'claim',
    metadata: newMetadata(claimName, namespace, checked.metadata.labels, checked.metadata.annotations),
    spec: checked.spec,
    status: {
      conditions: [condition('Allocated', 'Unknown', 'Allocating', 'a value is being allocated', now)],
    },
    phase: 'Allocating',
    allocatingUntil: new Date(Date.now() + HANDLER_DEADLINE_MS).toISOString(),
    rv: 1,
  };
  const refValid = poolRefValid(record);
  // The pool is read before anything is written, so a claim that cannot fit its pool changes nothing.
  const pool = refValid ? await readPool(ctx, poolIdOf(record)) : undefined;
  if (pool) checkClaimAgainstPool(record.spec, pool, claimName);
  if (!refValid) {
    record.phase = 'PoolRefInvalid';
    record.status = {
      conditions: [
        condition(
          'Allocated',
          'False',
          'PoolRefInvalid',
          `poolRef must name an IndexPool, IPAddressPool or IPPrefixPool of ${API_VERSION}`,
          now,
        ),
      ],
    };
  }
  let stub;
  try {
    // Written before any allocation: if this request dies after the allocation put, the stream function
    // finds a claim to bind it to (or to give it back for), never an orphan.
    stub = await ctx.table.createObject(key, record);
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    if (!(await ownWriteLanded(ctx, key, record.metadata.uid))) {
      if (name !== undefined) return replaceClaim(request, ctx);
      throw new AlreadyExistsError(`Claim "${claimName}" already exists`).about('Claim', claimName);
    }
  }
  if (!refValid) return { statusCode: 201, body: claimObject(record) };
  const offers = stub?.t === 'stub' ? Object.values(stub.offers ?? {}) : [];
  const { outcome } = await decide(ctx, record, pool, offers);
  const settled = await settle(ctx, key, record, outcome);
  return { statusCode: 201, body: claimObject(settled ?? record) };
}

function sameClaimSpec(a: ClaimSpec, b: ClaimSpec): boolean {
  return JSON.stringify(normalizeSpec(a)) === JSON.stringify(normalizeSpec(b));
}

function normalizeSpec(spec: ClaimSpec) {
  return {
    poolRef: {
      kind: spec.poolRef.kind,
      name: spec.poolRef.name,
      apiVersion: spec.poolRef.apiVersion ?? API_VERSION,
    },
    value: spec.value,
    within: spec.within,
    reserved: spec.reserved,
    owner: spec.owner,
  };
}

async function replaceClaim(request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const body = bodyObject(request.body);
  const name = putName(request, 'Claim');
  const checked = checkClaimBody(namespace, body, name);
  const key = claimKeyOf(namespace, name);
  for (let attempt = 0; attempt < MAX_REPLACE_ATTEMPTS; attempt++) {
    const current = await ctx.table.get<ClaimRecord>(key);
    if (current?.t !== 'claim') return createClaim(request, ctx, name);
    const causes = new Causes();
    const was = normalizeSpec(current.spec);
    const now = normalizeSpec(checked.spec);
    if (JSON.stringify(was.poolRef) !== JSON.stringify(now.poolRef))
      causes.add('spec.poolRef', 'is immutable');
    if (current.phase === 'Allocated') {
      for (const field of ['value', 'within', 'reserved'] as const) {
        if (JSON.stringify(was[field]) !== JSON.stringify(now[field])) {
          causes.add(
            `spec.${field}`,
            'cannot change while the claim holds a value; delete and recreate the claim',
          );
        }
      }
    }
    causes.throwIfAny('Claim', name);
    const unchanged =
      sameClaimSpec(current.spec, checked.spec) &&
      JSON.stringify(current.metadata.labels ?? {}) === JSON.stringify(checked.metadata.labels) &&
      JSON.stringify(current.metadata.annotations ?? {}) === JSON.stringify(checked.metadata.annotations);
    if (unchanged) return { statusCode: 200, body: claimObject(current) };
    const specChanged = !sameClaimSpec(current.spec, checked.spec);
    const record: ClaimRecord = {
      ...stripKeys(current),
      metadata: {
        ...current.metadata,
        labels: checked.metadata.labels,
        annotations: checked.metadata.annotations,
        generation: current.metadata.generation + (specChanged ? 1 : 0),
      },
      spec: checked.spec,
      rv: current.rv + 1,
    };
    try {
      await ctx.table.replaceObject(key, record, current.rv);
    } catch (error) {
      if (error instanceof ConditionFailedError) continue;
      throw error;
    }
    // A waiting claim whose limits changed tries again at once.
    if (specChanged && record.phase === 'Waiting') {
      const pool = await readPool(ctx, poolIdOf(record));
      if (pool) checkClaimAgainstPool(record.spec, pool, name);
      const { outcome } = await decide(ctx, record, pool);
      const settled = await settle(ctx, key, record, outcome);
      return { statusCode: 200, body: claimObject(settled ?? record) };
    }
    return { statusCode: 200, body: claimObject(record) };
  }
  throw new AlreadyExistsError(`Claim "${name}" changed while it was being replaced; retry`).about(
    'Claim',
    name,
  );
}

/** A stored claim without its key and index attributes: the table adds those back on every write. */
function stripKeys<T extends object>(item: T): T {
  const {
    pk: _pk,
    sk: _sk,
    wpk: _wpk,
    wsk: _wsk,
    ...rest
  } = item as T & Partial<Record<'pk' | 'sk' | 'wpk' | 'wsk', string>>;
  return rest as T;
}

async function deleteClaim(request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, 'claims');
  const key = claimKeyOf(namespace, name);
  const current = await ctx.table.get<ClaimRecord>(key);
  if (current?.t !== 'claim') throw notFound('claims', name);
  // The reclaim policy is applied by the stream function from this delete's REMOVE record.
  const deleted =
    (await ctx.table.deleteItem<ClaimRecord>(key, { uid: current.metadata.uid })) ??
    (await goneSinceRead(ctx, key, current));
  if (!deleted) throw notFound('claims', name);
  return { statusCode: 200, body: claimObject(deleted) };
}

// ---------------------------------------------------------------- allocation objects

interface CheckedAllocation {
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  record: Omit<AllocationRecord, 'metadata'>;
  value: ParsedValue;
}

function checkAllocationBody(
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
        if (!problem)
          record.spec.claimRef = {
            name: claimRef.name as string,
            uid: (claimRef.uid as string | undefined) ?? '',
          };
      }
    }
    const owner = ownerRef(spec.owner, 'spec.owner', causes);
    if (owner) record.spec.owner = owner;
  }
  // A deterministic-looking name must be the one of its own value, so names never collide.
  const finalName = metadata.name || name;
  if (finalName && value && record.spec.poolRef.name) {
    const standsFor = valueKind(info.allocationKind).parseAllocationName(finalName);
    const own = valueKind(info.allocationKind).allocationName(record.spec.poolRef.name, value);
    if (standsFor && finalName !== own) {
      causes.add(
        'metadata.name',
        `names value ${standsFor.value.value} of pool ${standsFor.pool}; use ${own} or a name of another form`,
      );
    }
  }
  causes.throwIfAny(info.allocationKind, finalName);
  return { metadata, record, value: value! };
}

/** Finds an allocation object by name: a deterministic name is its key; any other name has a name item. */
async function findAllocation(
  ctx: ClaimContext,
  info: PoolKindInfo,
  namespace: string,
  name: string,
): Promise<Stored<AllocationRecord> | undefined> {
  const standsFor = valueKind(info.allocationKind).parseAllocationName(name);
  if (standsFor && nameProblem(standsFor.pool) === undefined) {
    const key = allocationKey(
      { namespace, kind: info.kind, name: standsFor.pool },
      info.allocationKind,
      standsFor.value,
    );
    const item = await ctx.table.get<AllocationRecord>(key);
    if (item?.t === 'alloc' && item.metadata.name === name) return item;
    return undefined;
  }
  const pointer = await ctx.table.get<{ target: ItemKey }>(nameKey(namespace, info.allocationResource, name));
  if (!pointer) return undefined;
  const item = await ctx.table.get<AllocationRecord>(pointer.target);
  return item?.t === 'alloc' && item.metadata.name === name ? item : undefined;
}

function isCustomName(allocation: AllocationRecord): boolean {
  const standsFor = valueKind(allocation.kind).parseAllocationName(allocation.metadata.name);
  return standsFor === undefined;
}

async function deleteCustomName(ctx: ClaimContext, allocation: Stored<AllocationRecord>, resource: Resource) {
  if (isCustomName(allocation)) {
    await ctx.table.deleteName(
      nameKey(allocation.metadata.namespace, resource, allocation.metadata.name),
      allocation,
    );
  }
}

async function poolOf(ctx: ClaimContext, namespace: string, info: PoolKindInfo, name: string) {
  const pool = await ctx.table.get<PoolRecord>(objectKey(namespace, info.resource, name), false);
  return pool?.t === 'pool' ? pool : undefined;
}

async function createAllocation(
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
  const key = allocationKey(poolId, info.allocationKind, checked.value);
  const custom = isCustomName(record);
  // A custom name is reserved first, so a retry after a crash finds its own reservation and completes.
  if (
    custom &&
    !(await ctx.table.putName(nameKey(namespace, info.allocationResource, allocationName), key))
  ) {
    throw new AlreadyExistsError(`${info.allocationKind} "${allocationName}" already exists`).about(
      info.allocationKind,
      allocationName,
    );
  }
  const placed = await ctx.table.putAllocation(key, record, checked.value.slot, info.allocationResource);
  const holder = placed ? undefined : await ctx.table.get<AllocationRecord>(key);
  // A retried put whose first attempt landed (its answer lost) finds this very object: it is created.
  if (!placed && holder?.metadata.uid !== record.metadata.uid) {
    if (holder?.metadata.name === allocationName) {
      if (name !== undefined) return replaceAllocation(info, request, ctx);
      throw new AlreadyExistsError(`${info.allocationKind} "${allocationName}" already exists`).about(
        info.allocationKind,
        allocationName,
      );
    }
    if (custom) await ctx.table.deleteName(nameKey(namespace, info.allocationResource, allocationName), key);
    throw new AlreadyExistsError(
      `${checked.value.value} of ${info.kind} ${poolId.name} is already held by ${info.allocationKind} "${holder?.metadata.name ?? '?'}"`,
    ).about(info.allocationKind, allocationName);
  }
  if (record.spec.claimRef)
    await ctx.table.offerToClaim(claimKeyOf(namespace, record.spec.claimRef.name), key);
  return { statusCode: 201, body: allocationObject(record, pool) };
}

async function replaceAllocation(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const body = bodyObject(request.body);
  const name = putName(request, info.allocationKind);
  for (let attempt = 0; attempt < MAX_REPLACE_ATTEMPTS; attempt++) {
    const current = await findAllocation(ctx, info, namespace, name);
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
      metadata: {
        ...current.metadata,
        labels: checked.metadata.labels,
        annotations: checked.metadata.annotations,
        generation:
          current.metadata.generation +
          (JSON.stringify(current.spec) === JSON.stringify(checked.record.spec) ? 0 : 1),
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

async function readAllocation(
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

async function deleteAllocation(
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
  await deleteCustomName(ctx, deleted, info.allocationResource);
  const pool = await poolOf(ctx, namespace, info, deleted.spec.poolRef.name);
  return { statusCode: 200, body: allocationObject(deleted, pool) };
}

async function listAllocations(
  info: PoolKindInfo,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const { limit, after } = listQuery(request);
  const poolFilter = request.query.pool;
  if (poolFilter !== undefined && nameProblem(poolFilter))
    throw new BadRequestError('pool must be a pool name');
  const page = await ctx.table.listAllocations(namespace, info.allocationResource, poolFilter, limit, after);
  const pools = new Map<string, PoolRecord | undefined>();
  const items: ApiObject[] = [];
  for (const allocation of page.items) {
    const poolName = allocation.spec.poolRef.name;
    if (!pools.has(poolName)) pools.set(poolName, await poolOf(ctx, namespace, info, poolName));
    items.push(allocationObject(allocation, pools.get(poolName)));
  }
  return listReply(items, page.last);
}

// ---------------------------------------------------------------- dispatch

async function readObject(resource: Resource, request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, resource);
  const item = await ctx.table.get<PoolRecord | ClaimRecord>(objectKey(namespace, resource, name));
  if (resource === 'claims') {
    if (item?.t !== 'claim') throw notFound(resource, name);
    return { statusCode: 200, body: claimObject(item) };
  }
  if (item?.t !== 'pool') throw notFound(resource, name);
  return { statusCode: 200, body: poolObject(item) };
}

async function listObjects(resource: Resource, request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const { limit, after } = listQuery(request);
  const page = await ctx.table.listObjects<PoolRecord | ClaimRecord>(namespace, resource, limit, after);
  const items = page.items.map((item) =>
    item.t === 'claim' ? claimObject(item) : poolObject(item as PoolRecord),
  );
  return listReply(items, page.last);
}

/** The operation for a route: what the route table names, bound to its resource. */
export function operationFor(operation: string, resource: Resource | undefined): Operation {
  const pool = resource ? poolInfoByResource(resource) : undefined;
  const allocation = resource ? poolInfoByAllocationResource(resource) : undefined;
  const withResource = (request: OperationRequest): OperationRequest => ({
    ...request,
    params: { ...request.params, resource: resource ?? '' },
  });
  switch (operation) {
    case 'healthz':
      return async () => ({ statusCode: 200, body: { status: 'ok' } });
    case 'openapi':
      return async () => ({ statusCode: 200, body: buildOpenApi() });
    case 'list':
      if (allocation) return (request, ctx) => listAllocations(allocation, request, ctx);
      return (request, ctx) => listObjects(resource!, request, ctx);
    case 'read':
      if (allocation) return (request, ctx) => readAllocation(allocation, request, ctx);
      return (request, ctx) => readObject(resource!, request, ctx);
    case 'create':
      if (allocation) return (request, ctx) => createAllocation(allocation, withResource(request), ctx);
      return (request, ctx) => createPool(pool!, withResource(request), ctx);
    case 'replace':
      if (allocation) return (request, ctx) => replaceAllocation(allocation, withResource(request), ctx);
      return (request, ctx) => replacePool(pool!, withResource(request), ctx);
    case 'delete':
      if (allocation) return (request, ctx) => deleteAllocation(allocation, request, ctx);
      return (request, ctx) => deletePool(pool!, request, ctx);
    case 'createClaim':
      return (request, ctx) => createClaim(withResource(request), ctx);
    case 'replaceClaim':
      return (request, ctx) => replaceClaim(withResource(request), ctx);
    case 'deleteClaim':
      return (request, ctx) => deleteClaim(request, ctx);
    default:
      throw new Error(`no operation ${operation}`);
  }
}
