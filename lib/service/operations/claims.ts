/**
 * Claim operations (api.md, "Claim"): a claim's POST or PUT allocates before it answers (service/allocation/decide.ts
 * decides the value); DELETE releases it, and the stream function applies the reclaim policy.
 */
import { randomUUID } from 'node:crypto';
import { AlreadyExistsError, ClaimInUseError } from '../../domain/errors.ts';
import { API_VERSION, poolInfoByResource, poolKindInfo, type PoolKindInfo } from '../../domain/kinds.ts';
import { claimObject, condition, spaceOf, timestamp } from '../../domain/objects/objects.ts';
import {
  sameData,
  type ClaimRecord,
  type ClaimSpec,
  type ClaimStubRecord,
  type ItemKey,
  type PoolRecord,
} from '../../domain/objects/records.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import { parseRange } from '../../domain/values/ranges.ts';
import { parsePrefix } from '../../domain/values/ip.ts';
import { claimSpace } from '../../domain/values/prefix-pools.ts';
import { LEASE_SECONDS_MAX, LEASE_SECONDS_MIN } from '../../domain/objects/schemas.ts';
import { expireClaim, expiredNow, leaseFrom, liveClaim } from '../leases/leases.ts';

import {
  Causes,
  checkEnvelope,
  isObject,
  objectRef,
  ownerRef,
  rejectUnknownFields,
  specFields,
  RESERVED_MAX,
  WITHIN_MAX,
  type JsonObject,
} from '../../domain/objects/validation.ts';
import {
  decide,
  HANDLER_DEADLINE_MS,
  poolIdOf,
  poolRefValid,
  readPool,
  settle,
  type Outcome,
} from '../allocation/decide.ts';
import { allocationOutcome, midAllocation } from '../allocation/outcome.ts';
import { readForClaim, type ClaimReads } from '../allocation/claim-reads.ts';
import type { Stored } from '../../store/items.ts';
import { ConditionFailedError, UncertainWriteError } from '../../store/client.ts';
import { objectKey } from '../../store/keys.ts';
import { type ClaimContext } from '../context.ts';
import { RepairStore } from '../../store/repairs.ts';
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
} from './common.ts';
export function checkClaimBody(namespace: string, body: JsonObject, name?: string) {
  const causes = new Causes();
  const metadata = checkEnvelope(body, { kind: 'Claim', namespace, pathName: name }, causes);
  const spec = body.spec;
  const claimSpec: ClaimSpec = { poolRef: { kind: '', name: '' } };
  if (!isObject(spec)) causes.add('spec', 'is required');
  else {
    rejectUnknownFields(spec, specFields('Claim'), causes);
    const ref = objectRef(spec.poolRef, 'spec.poolRef', causes, 'ClaimPoolRef');
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
    if (spec.prefixLength !== undefined) {
      const length = spec.prefixLength;
      if (typeof length !== 'number' || !Number.isInteger(length) || length < 1 || length > 128)
        causes.add('spec.prefixLength', 'must be an integer prefix length 1..128');
      else if (info && info.kind !== 'IPPrefixPool')
        causes.add('spec.prefixLength', 'applies to IPPrefixPool only');
      else claimSpec.prefixLength = length;
    }
    const owner = ownerRef(spec.owner, 'spec.owner', causes);
    if (owner) claimSpec.owner = owner;
    if (spec.leaseSeconds !== undefined) {
      const seconds = spec.leaseSeconds;
      if (
        typeof seconds !== 'number' ||
        !Number.isInteger(seconds) ||
        seconds < LEASE_SECONDS_MIN ||
        seconds > LEASE_SECONDS_MAX
      )
        causes.add('spec.leaseSeconds', `must be an integer ${LEASE_SECONDS_MIN}..${LEASE_SECONDS_MAX}`);
      else claimSpec.leaseSeconds = seconds;
    }
  }
  causes.throwIfAny('Claim', metadata.name || name);
  return { metadata, spec: claimSpec };
}

/** Why `within` is not of the form its pool kind takes ("a..b" for IndexPool, a CIDR for IP pools). */
export function withinProblem(kind: PoolKindInfo['kind'], within: string): string | undefined {
  const parsed = kind === 'IndexPool' ? parseRange(within) : parsePrefix(within);
  return parsed.ok ? undefined : parsed.problem;
}

/** Checks a claim's `within`, `reserved` and `value` against its pool when the pool exists (422 on misfit). */
export function checkClaimAgainstPool(spec: ClaimSpec, pool: PoolRecord, name: string): void {
  const causes = new Causes();
  const value =
    spec.value === undefined
      ? undefined
      : valueKind(poolKindInfo(pool.kind)!.allocationKind).parse(spec.value);
  const chosen = claimSpace(spaceOf(pool), spec.prefixLength, value?.ok ? value.value : undefined);
  if ('causes' in chosen) causes.addAll(chosen.causes);
  else {
    const restricted = chosen.space.claimSegments(spec.within, spec.reserved);
    if ('causes' in restricted) causes.addAll(restricted.causes);
    if (value?.ok && !chosen.space.fits(value.value))
      causes.add('spec.value', `is not of the pool's address family or prefix length`);
  }
  causes.throwIfAny('Claim', name);
}

export function claimKeyOf(namespace: string, name: string): ItemKey {
  return objectKey(namespace, 'claims', name);
}

/**
 * A claim while its handler allocates: written before the allocation, so the stream function finds it
 * (and takes over at `allocatingUntil`) if the handler dies, and another request waits for the outcome.
 */
function allocatingState(now = timestamp()): Pick<ClaimRecord, 'status' | 'phase' | 'allocatingUntil'> {
  return {
    status: {
      conditions: [condition('Allocated', 'Unknown', 'Allocating', 'a value is being allocated', now)],
    },
    phase: 'Allocating',
    allocatingUntil: new Date(Date.now() + HANDLER_DEADLINE_MS).toISOString(),
  };
}

/**
 * The claim as its outcome made it, for the answer when the settle found the claim gone (a release or a
 * cascade took it meanwhile): as if the claim was allocated and then taken, which is what the store
 * shows (the allocation was given back), rather than the transient Allocating state.
 */
function decided(claim: ClaimRecord, outcome: Outcome): ClaimRecord {
  const { took: _took, ...state } = outcome;
  return { ...claim, ...state, allocatingUntil: undefined };
}

/**
 * Whether the claim fits every pool of its kind: `checkClaimAgainstPool` can only refuse a `value`,
 * `within`, `reserved` or `prefixLength` (test/unit/claim-fit.test.ts), so a claim with none of them needs
 * no pool read before it is written.
 */
export function fitsAnyPool(spec: ClaimSpec): boolean {
  return (
    spec.value === undefined &&
    spec.within === undefined &&
    spec.reserved === undefined &&
    spec.prefixLength === undefined
  );
}

type NewClaim = { reply: Reply } | { inTheWay: Stored<ClaimRecord> | undefined };

/**
 * Writes a new claim and allocates it, in three sequential round trips (docs/races.md):
 *
 * 1. the claim, `Allocating`, conditional on its name being free (or a stub's), while its pool and the
 *    summary its search reads first are read (claim-reads.ts). A claim that fits any pool of its kind
 *    (fitsAnyPool) cannot be refused by what the read finds, so nothing is written that a refusal would
 *    have to take back; one whose limits depend on the pool is checked against it first (422, nothing
 *    written), one round trip more;
 * 2. the allocation object's conditional put, the arbiter (decide.ts); it comes after the claim, so the
 *    stream function and the repair sweep always find the claim an object names, and a second request
 *    finds the claim mid-allocation and waits for it (outcome.ts);
 * 3. the settle, conditional on the claim's uid (decide.ts).
 *
 * When the name is taken, nothing is written and the claim in the way comes back (from the failed put,
 * or read) for a PUT to replace; `put`: a PUT's create, where a refusal waits until the name is known free.
 */
async function newClaim(
  ctx: ClaimContext,
  key: ItemKey,
  record: ClaimRecord,
  put: boolean,
): Promise<NewClaim> {
  const claimName = record.metadata.name;
  if (!poolRefValid(record)) {
    record.phase = 'PoolRefInvalid';
    record.status = {
      conditions: [
        condition(
          'Allocated',
          'False',
          'PoolRefInvalid',
          `poolRef must name an IndexPool, IPAddressPool or IPPrefixPool of ${API_VERSION}`,
          record.metadata.creationTimestamp,
        ),
      ],
    };
    await registerPoollessNamespace(ctx, record);
    const written = await writeClaim(ctx, key, record);
    return 'inTheWay' in written ? written : { reply: { statusCode: 201, body: claimObject(record) } };
  }
  let written: Awaited<ReturnType<typeof writeClaim>>;
  let reads: ClaimReads;
  if (fitsAnyPool(record.spec)) {
    [written, reads] = await Promise.all([writeClaim(ctx, key, record), readForClaim(ctx, record)]);
  } else {
    reads = await readForClaim(ctx, record);
    if (reads.pool) {
      try {
        checkClaimAgainstPool(record.spec, reads.pool, claimName);
      } catch (error) {
        // A PUT of a claim that exists replaces it, and the pool's limits are not its business then.
        const current = put ? await ctx.table.get<ClaimRecord>(key) : undefined;
        if (current?.t === 'claim') return { inTheWay: current };
        throw error;
      }
    } else await registerPoollessNamespace(ctx, record);
    written = await writeClaim(ctx, key, record);
  }
  if ('inTheWay' in written) return written;
  // The claim was written beside the pool's read: its namespace is registered once the read says there
  // is no pool (a request that dies in between leaves it out of -A lists until a pool is made there).
  if (!reads.pool && fitsAnyPool(record.spec)) await registerPoollessNamespace(ctx, record);
  const offers = written.stub?.t === 'stub' ? Object.values(written.stub.offers ?? {}) : [];
  const { outcome } = await decide(ctx, record, reads.pool, offers, reads.decideOptions);
  const settled = await settledAnswer(ctx, key, await settle(ctx, key, record, outcome));
  return { reply: { statusCode: 201, body: claimObject(settled ?? decided(record, outcome)) } };
}

/**
 * A namespace with a pool is registered (pools.ts); a claim made before any pool (or naming none it
 * could) registers its namespace itself, before it is written where the pool's absence is known first,
 * and always before it is answered, so a list across every namespace that starts after the answer finds
 * it. Not on the claim path of a pool that exists: no request more there.
 */
function registerPoollessNamespace(ctx: ClaimContext, record: ClaimRecord): Promise<void> {
  return new RepairStore(ctx.table).registerNamespace(record.metadata.namespace);
}

/**
 * What a settle left at the claim's key, as an answer: a settle that lost finds the claim as another
 * request left it, and that may be a claim of the same name made anew (a cascade deleted ours) that its
 * own request is still allocating; no answer carries a claim mid-allocation (api.md, "Routes").
 */
async function settledAnswer(
  ctx: ClaimContext,
  key: ItemKey,
  settled: ClaimRecord | undefined,
): Promise<ClaimRecord | undefined> {
  return midAllocation(settled) ? allocationOutcome(ctx, key, settled) : settled;
}

/** Puts whose outcome was unknown, each then made again under a new uid, before the request fails. */
const UNCERTAIN_PUTS = 3;

/**
 * The claim's conditional create: written before any allocation, so that if this request dies after the
 * allocation put, the stream function finds a claim to bind it to (or to give it back for), never an
 * orphan. A create that fails on a claim this request put (under any uid it tried: a put whose answer
 * was lost may have landed) is ours.
 */
async function writeClaim(
  ctx: ClaimContext,
  key: ItemKey,
  record: ClaimRecord,
): Promise<{ stub?: ClaimStubRecord } | { inTheWay: Stored<ClaimRecord> | undefined }> {
  // Every uid this request wrote under: a put whose answer was lost may have landed under any of them.
  const tried = new Set<string>();
  for (let attempt = 0, uncertain = 0; ; attempt++) {
    tried.add(record.metadata.uid);
    try {
      return { stub: await ctx.table.createObject(key, record) };
    } catch (error) {
      if (error instanceof UncertainWriteError && uncertain++ < UNCERTAIN_PUTS) {
        // The put may have landed and the claim been released since: put again under a new uid, so a
        // released claim's uid never comes back (table.ts createObject).
        record.metadata.uid = randomUUID();
        continue;
      }
      if (!(error instanceof ConditionFailedError)) throw error;
      const inTheWay =
        (error.item as Stored<ClaimRecord> | undefined) ?? (await ctx.table.get<ClaimRecord>(key));
      const ours = inTheWay?.metadata?.uid;
      if (ours !== undefined && tried.has(ours)) {
        record.metadata.uid = ours;
        return {};
      }
      // A claim whose lease ended is gone (service/leases/leases.ts): deleted under its lease's condition, and
      // the name made anew. Twice at most: a name that keeps being taken is another request's.
      if (inTheWay?.t === 'claim' && expiredNow(ctx, inTheWay) && attempt < 2) {
        await expireClaim(ctx, key, inTheWay);
        continue;
      }
      return { inTheWay };
    }
  }
}

function newClaimRecord(
  ctx: ClaimContext,
  checked: ReturnType<typeof checkClaimBody>,
  namespace: string,
): ClaimRecord {
  const now = timestamp();
  const leaseExpiresAt = leaseFrom(ctx, checked.spec.leaseSeconds);
  return {
    t: 'claim',
    metadata: newMetadata(
      checked.metadata.name,
      namespace,
      checked.metadata.labels,
      checked.metadata.annotations,
    ),
    spec: checked.spec,
    ...allocatingState(now),
    ...(leaseExpiresAt !== undefined && { leaseExpiresAt }),
    rv: 1,
  };
}

export async function createClaim(request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const checked = checkClaimBody(namespace, bodyObject(request.body));
  const claimName = checked.metadata.name;
  const made = await newClaim(
    ctx,
    claimKeyOf(namespace, claimName),
    newClaimRecord(ctx, checked, namespace),
    false,
  );
  if ('reply' in made) return made.reply;
  throw new AlreadyExistsError(`Claim "${claimName}" already exists`).about('Claim', claimName);
}

export function sameClaimSpec(a: ClaimSpec, b: ClaimSpec): boolean {
  return sameData(normalizeSpec(a), normalizeSpec(b));
}

export function normalizeSpec(spec: ClaimSpec) {
  return {
    poolRef: {
      kind: spec.poolRef.kind,
      name: spec.poolRef.name,
      apiVersion: spec.poolRef.apiVersion ?? API_VERSION,
    },
    value: spec.value,
    within: spec.within,
    reserved: spec.reserved,
    prefixLength: spec.prefixLength,
    owner: spec.owner,
    leaseSeconds: spec.leaseSeconds,
  };
}

export async function replaceClaim(request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const body = bodyObject(request.body);
  const name = putName(request, 'Claim');
  const checked = checkClaimBody(namespace, body, name);
  const key = claimKeyOf(namespace, name);
  // A PUT creates the claim if none is there: that create goes out first (a new claim's three round
  // trips, newClaim), and a claim in the way comes back with its failure. A PATCH's replace never creates.
  let create = request.unchangedSince === undefined;
  for (let attempt = 0; attempt < MAX_REPLACE_ATTEMPTS; attempt++) {
    let read: Stored<ClaimRecord> | undefined;
    if (create) {
      create = false;
      const made = await newClaim(ctx, key, newClaimRecord(ctx, checked, namespace), true);
      if ('reply' in made) return made.reply;
      read = made.inTheWay;
    } else read = await liveClaim(ctx, key, await ctx.table.get<ClaimRecord>(key));
    // Another request is allocating it: its outcome first (never answered mid-allocation).
    const current = midAllocation(read) ? await allocationOutcome(ctx, key, read!) : read;
    checkUnchangedSince(request, () => (current?.t === 'claim' ? claimObject(current) : undefined));
    if (current?.t !== 'claim') {
      create = true; // gone since (a PATCH was refused above): created anew
      continue;
    }
    const causes = new Causes();
    const was = normalizeSpec(current.spec);
    const now = normalizeSpec(checked.spec);
    if (!sameData(was.poolRef, now.poolRef)) causes.add('spec.poolRef', 'is immutable');
    if (current.phase === 'Allocated') {
      for (const field of ['value', 'within', 'reserved', 'prefixLength'] as const) {
        if (!sameData(was[field], now[field])) {
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
      sameData(current.metadata.labels ?? {}, checked.metadata.labels) &&
      sameData(current.metadata.annotations ?? {}, checked.metadata.annotations);
    if (unchanged) return { statusCode: 200, body: claimObject(current) };
    const specChanged = !sameClaimSpec(current.spec, checked.spec);
    // A waiting claim whose limits changed tries again at once: allocating again, as a new claim is, so
    // a request that reads it meanwhile waits for the outcome instead of answering the old reason.
    const again = specChanged && current.phase === 'Waiting';
    const pool = again ? await readPool(ctx, poolIdOf(current)) : undefined;
    if (pool) checkClaimAgainstPool(checked.spec, pool, name);
    // Changing leaseSeconds renews the lease (api.md, "Claim"); dropping it makes the claim last.
    const leaseChanged = was.leaseSeconds !== now.leaseSeconds;
    const { leaseExpiresAt: _lease, ...kept } = stripKeys(current);
    const leaseExpiresAt = leaseChanged ? leaseFrom(ctx, checked.spec.leaseSeconds) : current.leaseExpiresAt;
    const record: ClaimRecord = {
      ...kept,
      ...(leaseExpiresAt !== undefined && { leaseExpiresAt }),
      metadata: {
        ...current.metadata,
        labels: checked.metadata.labels,
        annotations: checked.metadata.annotations,
        generation: current.metadata.generation + (specChanged ? 1 : 0),
      },
      spec: checked.spec,
      ...(again ? allocatingState() : {}),
      rv: current.rv + 1,
    };
    try {
      await ctx.table.replaceObject(key, record, current.rv);
    } catch (error) {
      if (error instanceof ConditionFailedError) continue;
      throw error;
    }
    if (again) {
      const { outcome } = await decide(ctx, record, pool);
      const settled = await settledAnswer(ctx, key, await settle(ctx, key, record, outcome));
      return { statusCode: 200, body: claimObject(settled ?? decided(record, outcome)) };
    }
    return { statusCode: 200, body: claimObject(record) };
  }
  throw new AlreadyExistsError(`Claim "${name}" changed while it was being replaced; retry`).about(
    'Claim',
    name,
  );
}

/** A stored claim without its key and index attributes: the table adds those back on every write. */
export function stripKeys<T extends object>(item: T): T {
  const {
    pk: _pk,
    sk: _sk,
    wpk: _wpk,
    wsk: _wsk,
    ...rest
  } = item as T & Partial<Record<'pk' | 'sk' | 'wpk' | 'wsk', string>>;
  return rest as T;
}

export async function deleteClaim(request: OperationRequest, ctx: ClaimContext): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, 'claims');
  const key = claimKeyOf(namespace, name);
  // The claim first: its uid for the delete's condition, and its last state for the answer should the
  // delete's own answer be lost and retried. A claim whose lease ended is gone already: expired (its
  // REMOVE is the release), not deleted by us.
  const current = await liveClaim(ctx, key, await ctx.table.get<ClaimRecord>(key));
  if (current?.t !== 'claim') throw notFound('claims', name);
  // A caller that read the claim first (Custom::AllotClaim) deletes only the claim it read.
  checkUnchangedSince(request, () => claimObject(current));
  // Then, before the delete, whether a pool is carved from it (api.md, "Pools": that pool keeps the
  // claim; delete the pool first). Only a claim on an IPPrefixPool gives a carved pool its prefixes
  // (service/allocation/carving.ts), so only its release pays this read, one round trip more.
  const [carving] =
    current.spec.poolRef.kind === 'IPPrefixPool' ? await ctx.table.carvings.of(namespace, name, 1) : [];
  if (carving) {
    const kind = poolInfoByResource(carving.resource)?.kind ?? carving.resource;
    throw new ClaimInUseError(
      `Claim "${name}" is the prefixesFrom of ${kind} "${carving.pool}"; delete that pool first`,
    ).about('Claim', name);
  }
  // The reclaim policy is applied by the stream function from this delete's REMOVE record.
  const deleted =
    (await ctx.table.deleteItem<ClaimRecord>(key, { uid: current.metadata.uid })) ??
    (await goneSinceRead(ctx, key, current));
  if (!deleted) throw notFound('claims', name);
  return { statusCode: 200, body: claimObject(deleted) };
}
