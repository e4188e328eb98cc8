/**
 * `Custom::AllotClaim` (api.md, "From other stacks and services"; docs/stacks.md): CloudFormation's
 * custom resource requests turned into the claim operations, and the response CloudFormation reads.
 *
 * The protocol (AWS CloudFormation User Guide, "Custom resource request types" and "Custom resource
 * response objects", docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-responses.html):
 * a request carries `RequestType` (Create, Update, Delete), `StackId`, `LogicalResourceId`,
 * `RequestId`, `ResourceProperties` (every scalar a string), for Update `OldResourceProperties` and for
 * Update and Delete the `PhysicalResourceId` answered before. The answer (a PUT to `ResponseURL`, at
 * most 4096 bytes) echoes the last three, with `Status` SUCCESS or FAILED, `Reason` when FAILED, the
 * `PhysicalResourceId` and `Data` for `Fn::GetAtt`. An Update answered with another physical id is a
 * replacement: CloudFormation sends the old one a Delete once the update completes, or the new one a
 * Delete when the stack rolls back. A Create answered FAILED is followed by a Delete during the rollback;
 * a Create the stack stopped waiting for is followed by a Delete with a physical id CloudFormation made
 * up (CDK's custom-resources README, "Important cases to handle").
 *
 * So every answer here is safe to repeat: a claim's name is derived, never random (the stack, the
 * resource's logical id, which CDK derives from the construct path, and the spec), a create is a POST (it
 * never overwrites), and a claim records the stack and resource that made it in two annotations; a
 * request from any other stack or resource never changes or deletes it.
 */
import { createHash } from 'node:crypto';
import {
  CLAIM_RESOURCE_TYPE,
  LOGICAL_ID_ANNOTATION,
  STACK_ID_ANNOTATION,
} from '../../domain/objects/claim-resource.ts';
import { AlreadyExistsError, NotFoundError, toAllotError } from '../../domain/errors.ts';
import { nameProblem } from '../../domain/names.ts';
import { claimObject, type ApiObject } from '../../domain/objects/objects.ts';
import type { ClaimRecord } from '../../domain/objects/records.ts';
import { isObject, type JsonObject } from '../../domain/objects/validation.ts';
import { type ClaimContext } from '../context.ts';
import { ChangedSinceRead, type OperationRequest } from '../operations/common.ts';
import { claimKeyOf, createClaim, deleteClaim, replaceClaim } from '../operations/claims.ts';

export interface CloudFormationRequest {
  RequestType: 'Create' | 'Update' | 'Delete';
  ResponseURL: string;
  StackId: string;
  RequestId: string;
  ResourceType?: string;
  LogicalResourceId: string;
  PhysicalResourceId?: string;
  ResourceProperties?: unknown;
  OldResourceProperties?: unknown;
}

export interface CloudFormationResponse {
  Status: 'SUCCESS' | 'FAILED';
  Reason?: string;
  PhysicalResourceId: string;
  StackId: string;
  RequestId: string;
  LogicalResourceId: string;
  NoEcho: false;
  Data?: ClaimData;
}

/** What `Fn::GetAtt` reads (`AllotClaim.value`, `.allocationName`, `.claimName`). */
export interface ClaimData {
  Value: string;
  AllocationName: string;
  Name: string;
  Namespace: string;
}

export interface Outcome {
  status: 'SUCCESS' | 'FAILED';
  physicalId: string;
  reason?: string;
  data?: ClaimData;
}

const REQUEST_TYPES = ['Create', 'Update', 'Delete'];

/**
 * Whether an event is a request that can be answered: the fields the response echoes and its URL. An
 * event without them cannot be answered at all, so the caller only logs it.
 */
export function isAnswerable(event: unknown): event is CloudFormationRequest {
  return (
    isObject(event) &&
    REQUEST_TYPES.includes(event.RequestType as string) &&
    ['ResponseURL', 'StackId', 'RequestId', 'LogicalResourceId'].every(
      (field) => typeof event[field] === 'string' && event[field] !== '',
    )
  );
}

/** The response body for an outcome, within CloudFormation's 4096 bytes (a long reason is clipped). */
export function responseOf(request: CloudFormationRequest, outcome: Outcome): CloudFormationResponse {
  const response: CloudFormationResponse = {
    Status: outcome.status,
    PhysicalResourceId: outcome.physicalId,
    StackId: request.StackId,
    RequestId: request.RequestId,
    LogicalResourceId: request.LogicalResourceId,
    // The values are not secrets (any reader of the API sees them); NoEcho would mask them in the console.
    NoEcho: false,
  };
  if (outcome.reason !== undefined) response.Reason = clip(outcome.reason, 1000);
  if (outcome.data) response.Data = outcome.data;
  return response;
}

// ---------------------------------------------------------------- properties

interface ClaimProperties {
  namespace: string;
  /** The claim's name when the resource names it (`claimName`); else it is derived. */
  name?: string;
  spec: JsonObject;
  labels: Record<string, string>;
}

class PropertyError extends Error {}

const PROPERTIES = ['ServiceToken', 'ServiceTimeout', 'Namespace', 'Name', 'Spec', 'Labels'];
/** Spec fields that are integers: CloudFormation delivers every scalar as a string (`"24"`). */
const INTEGER_FIELDS = ['prefixLength', 'leaseSeconds'];

function propertiesOf(properties: unknown): ClaimProperties {
  if (!isObject(properties)) throw new PropertyError('the resource has no properties');
  const unknown = Object.keys(properties).filter((key) => !PROPERTIES.includes(key));
  if (unknown.length > 0)
    throw new PropertyError(
      `unknown properties ${unknown.join(', ')}; ${CLAIM_RESOURCE_TYPE} takes Namespace, Name, Spec, Labels`,
    );
  const { Namespace: namespace = 'default', Name: name, Spec: spec, Labels: labels = {} } = properties;
  if (typeof namespace !== 'string') throw new PropertyError('Namespace must be a string');
  if (name !== undefined && typeof name !== 'string') throw new PropertyError('Name must be a string');
  if (!isObject(spec)) throw new PropertyError('Spec must be an object (the claim spec)');
  if (!isObject(labels) || Object.values(labels).some((value) => typeof value !== 'string'))
    throw new PropertyError('Labels must be a map of strings');
  const typed: JsonObject = { ...spec };
  for (const field of INTEGER_FIELDS) {
    const value = typed[field];
    if (typeof value === 'string' && /^[0-9]{1,15}$/.test(value)) typed[field] = Number(value);
  }
  return {
    namespace,
    ...(name !== undefined ? { name } : {}),
    spec: typed,
    labels: labels as Record<string, string>,
  };
}

/** JSON with every object's keys sorted: two specs that mean the same print the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .filter((key) => value[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

function slug(text: string, max: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, max)
    .replace(/^-+|-+$/g, '');
}

/**
 * A claim name made from the stack, the resource and its spec, when the resource names none: the same
 * inputs always give the same name (a retried request finds its claim), a spec change gives another
 * (the replacement claim), and another stack (another StackId, which ends in the stack's unique id), even
 * of the same name in another account, gives another. `<stack>-<logical id>-<hash>`, at most 60
 * characters, a valid claim name.
 */
export function derivedClaimName(stackId: string, logicalId: string, spec: JsonObject): string {
  const stackName = /:stack\/([^/]+)/.exec(stackId)?.[1] ?? '';
  const hash = createHash('sha256')
    .update(canonical([stackId, logicalId, spec]))
    .digest('hex')
    .slice(0, 10);
  return [slug(stackName, 20), slug(logicalId, 28), hash].filter((part) => part !== '').join('-');
}

interface ClaimId {
  namespace: string;
  name: string;
}

const physicalIdOf = (id: ClaimId) => `${id.namespace}/${id.name}`;

/** `<namespace>/<name>`, or undefined for anything else (a physical id CloudFormation made up). */
export function parsePhysicalId(physicalId: string | undefined): ClaimId | undefined {
  const [namespace, name, ...rest] = (physicalId ?? '').split('/');
  if (rest.length > 0 || nameProblem(namespace) || nameProblem(name)) return undefined;
  return { namespace: namespace!, name: name! };
}

function claimIdOf(request: CloudFormationRequest, properties: ClaimProperties): ClaimId {
  return {
    namespace: properties.namespace,
    name: properties.name ?? derivedClaimName(request.StackId, request.LogicalResourceId, properties.spec),
  };
}

// ---------------------------------------------------------------- the claim, through the API's operations

const owner = (request: CloudFormationRequest) => ({
  [STACK_ID_ANNOTATION]: request.StackId,
  [LOGICAL_ID_ANNOTATION]: request.LogicalResourceId,
});

function annotationsOf(claim: ApiObject): Record<string, string> {
  const metadata = claim.metadata as { annotations?: Record<string, string> } | undefined;
  return metadata?.annotations ?? {};
}

/** Whether this stack's resource made the claim. */
function isOurs(claim: ApiObject, request: CloudFormationRequest): boolean {
  const annotations = annotationsOf(claim);
  return (
    annotations[STACK_ID_ANNOTATION] === request.StackId &&
    annotations[LOGICAL_ID_ANNOTATION] === request.LogicalResourceId
  );
}

function operationRequest(id: ClaimId, body?: unknown, unchangedSince?: ApiObject): OperationRequest {
  return {
    params: { namespace: id.namespace, resource: 'claims', name: id.name },
    query: {},
    body,
    ...(unchangedSince ? { unchangedSince } : {}),
  };
}

/** The claim as stored (mid-allocation included: what a later replace or delete is conditional on). */
async function readClaim(ctx: ClaimContext, id: ClaimId): Promise<ApiObject | undefined> {
  const record = await ctx.table.get<ClaimRecord>(claimKeyOf(id.namespace, id.name));
  return record?.t === 'claim' ? claimObject(record) : undefined;
}

const ATTEMPTS = 4;

/** Why an attempt loop gave up: the claim kept changing under it (another writer), which is rare. */
const busy = (id: ClaimId) => `Claim ${physicalIdOf(id)} kept changing while this request ran; retry`;

type Made = { claim: ApiObject } | { failed: string };

/**
 * The claim this Create (or replacing Update) asks for: made by a POST, which never overwrites; if the
 * name is taken, the claim is this resource's own (the same request again) or it is refused.
 */
async function makeClaim(
  request: CloudFormationRequest,
  id: ClaimId,
  properties: ClaimProperties,
  ctx: ClaimContext,
): Promise<Made> {
  const body = {
    metadata: { name: id.name, labels: properties.labels, annotations: owner(request) },
    spec: properties.spec,
  };
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      return { claim: (await createClaim(operationRequest(id, body), ctx)).body as ApiObject };
    } catch (error) {
      if (!(error instanceof AlreadyExistsError)) throw error;
    }
    const existing = await readClaim(ctx, id);
    if (!existing) continue;
    if (!isOurs(existing, request))
      return {
        failed:
          `Claim ${physicalIdOf(id)} already exists and was not made by this resource of this stack; ` +
          'give the resource another claimName',
      };
    try {
      // Ours: this request again (a retry), whose outcome the PUT of the same claim answers (it waits
      // for an allocation still under way).
      const reply = await replaceClaim(operationRequest(id, body, existing), ctx);
      return { claim: reply.body as ApiObject };
    } catch (error) {
      if (!(error instanceof ChangedSinceRead)) throw error;
    }
  }
  return { failed: busy(id) };
}

/** Deletes the claim if this resource made it; returns once it is gone or was never this resource's. */
async function releaseIfOurs(request: CloudFormationRequest, id: ClaimId, ctx: ClaimContext): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const existing = await readClaim(ctx, id);
    if (!existing || !isOurs(existing, request)) return;
    try {
      // Only the claim as read: one that another stack made meanwhile under this name stays.
      await deleteClaim(operationRequest(id, undefined, existing), ctx);
      return;
    } catch (error) {
      if (error instanceof NotFoundError) return;
      if (!(error instanceof ChangedSinceRead)) throw error;
    }
  }
  throw new Error(busy(id));
}

type Condition = { type?: string; status?: string; reason?: string; message?: string };

function allocatedData(claim: ApiObject, id: ClaimId): ClaimData | undefined {
  const status = (claim.status ?? {}) as {
    value?: string;
    allocationRef?: { name?: string };
    conditions?: Condition[];
  };
  const allocated = status.conditions?.find((condition) => condition.type === 'Allocated');
  if (allocated?.status !== 'True' || status.value === undefined) return undefined;
  return {
    Value: status.value,
    AllocationName: status.allocationRef?.name ?? '',
    Name: id.name,
    Namespace: id.namespace,
  };
}

/** `PoolExhausted: no free value …`: the claim's Allocated condition, as the stack's events show it. */
function notAllocatedReason(claim: ApiObject, id: ClaimId): string {
  const conditions = ((claim.status ?? {}) as { conditions?: Condition[] }).conditions ?? [];
  const allocated = conditions.find((condition) => condition.type === 'Allocated');
  const why = allocated ? `${allocated.reason}: ${allocated.message}` : 'no value';
  return `Claim ${physicalIdOf(id)} was not allocated (${why}); it was released`;
}

// ---------------------------------------------------------------- the request types

async function create(
  request: CloudFormationRequest,
  id: ClaimId,
  properties: ClaimProperties,
  ctx: ClaimContext,
): Promise<Outcome> {
  const physicalId = physicalIdOf(id);
  const made = await makeClaim(request, id, properties, ctx);
  if ('failed' in made) return { status: 'FAILED', physicalId, reason: made.failed };
  const data = allocatedData(made.claim, id);
  if (data) return { status: 'SUCCESS', physicalId, data };
  // Nothing waits for minutes: a claim that cannot be allocated now fails the resource, and goes.
  await releaseIfOurs(request, id, ctx);
  return { status: 'FAILED', physicalId, reason: notAllocatedReason(made.claim, id) };
}

async function update(
  request: CloudFormationRequest,
  properties: ClaimProperties,
  ctx: ClaimContext,
): Promise<Outcome> {
  const physicalId = request.PhysicalResourceId ?? '';
  const was = parsePhysicalId(physicalId);
  if (!was)
    return { status: 'FAILED', physicalId, reason: `physical id "${clip(physicalId, 100)}" is not a claim` };
  const id = claimIdOf(request, properties);
  if (physicalIdOf(id) !== physicalId) {
    // A replacement: the new claim; CloudFormation then deletes the old one (or this one, on rollback).
    const outcome = await create(request, id, properties, ctx);
    return outcome.status === 'SUCCESS' ? outcome : { ...outcome, physicalId };
  }
  const before = isObject(request.OldResourceProperties)
    ? propertiesOf(request.OldResourceProperties)
    : undefined;
  if (before && canonical(before.spec) !== canonical(properties.spec))
    return {
      status: 'FAILED',
      physicalId,
      reason:
        `the spec of Claim ${physicalId} changed but its name did not: a claim is replaced under a new name. ` +
        'Change claimName too (or leave it out, and the name follows the spec)',
    };
  // Labels only: in place, on this resource's claim as read.
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const existing = await readClaim(ctx, id);
    if (!existing)
      return {
        status: 'FAILED',
        physicalId,
        reason: `Claim ${physicalId} no longer exists (deleted outside CloudFormation)`,
      };
    if (!isOurs(existing, request))
      return {
        status: 'FAILED',
        physicalId,
        reason: `Claim ${physicalId} was not made by this resource of this stack`,
      };
    const body = {
      metadata: { name: id.name, labels: properties.labels, annotations: annotationsOf(existing) },
      spec: existing.spec,
    };
    try {
      const reply = await replaceClaim(operationRequest(id, body, existing), ctx);
      const data = allocatedData(reply.body as ApiObject, id);
      if (!data) return { status: 'FAILED', physicalId, reason: `Claim ${physicalId} holds no value` };
      return { status: 'SUCCESS', physicalId, data };
    } catch (error) {
      if (!(error instanceof ChangedSinceRead)) throw error;
    }
  }
  return { status: 'FAILED', physicalId, reason: busy(id) };
}

async function remove(request: CloudFormationRequest, ctx: ClaimContext): Promise<Outcome> {
  const physicalId = request.PhysicalResourceId ?? '';
  let id = parsePhysicalId(physicalId);
  if (!id) {
    // A physical id CloudFormation made up (it never got the Create's answer): the Create's claim, by the
    // name the Create derived from these same properties, if the Create made one.
    try {
      id = claimIdOf(request, propertiesOf(request.ResourceProperties));
    } catch (error) {
      if (error instanceof PropertyError) return { status: 'SUCCESS', physicalId };
      throw error;
    }
  }
  // Another stack's claim (or none) stays as it is: the answer is SUCCESS, as nothing of ours is left.
  await releaseIfOurs(request, id, ctx);
  return { status: 'SUCCESS', physicalId };
}

/** What CloudFormation is answered: the outcome of the request, or FAILED with why, never no answer. */
export async function handleClaimResource(
  request: CloudFormationRequest,
  ctx: ClaimContext,
  /** Told of every failure that is not the request's own (a 5xx), with the original error. */
  reportInternal?: (error: unknown) => void,
): Promise<Outcome> {
  // The physical id a failed Create answers when its properties name no claim: not `<ns>/<name>`, so
  // the Delete that follows it touches nothing.
  const fallbackId = request.PhysicalResourceId ?? `allot:not-created:${request.RequestId}`;
  try {
    if (request.RequestType === 'Delete') return await remove(request, ctx);
    const properties = propertiesOf(request.ResourceProperties);
    if (request.RequestType === 'Update') return await update(request, properties, ctx);
    return await create(request, claimIdOf(request, properties), properties, ctx);
  } catch (error) {
    if (error instanceof PropertyError)
      return { status: 'FAILED', physicalId: fallbackId, reason: error.message };
    const allotError = toAllotError(error);
    if (allotError.code >= 500) reportInternal?.(error);
    const physicalId =
      request.RequestType === 'Create' && isObject(request.ResourceProperties)
        ? createdIdOrFallback(request, fallbackId)
        : fallbackId;
    return { status: 'FAILED', physicalId, reason: `${allotError.reason}: ${allotError.message}` };
  }
}

/**
 * The answer when the function's time is up before the request's outcome: FAILED, with the physical id
 * the outcome would have had (a Create's claim's, so the Delete of the rollback releases it if it was
 * made after all).
 */
export function timedOut(request: CloudFormationRequest): Outcome {
  const fallbackId = request.PhysicalResourceId ?? `allot:not-created:${request.RequestId}`;
  return {
    status: 'FAILED',
    physicalId: request.RequestType === 'Create' ? createdIdOrFallback(request, fallbackId) : fallbackId,
    reason: `the ${request.RequestType} of ${CLAIM_RESOURCE_TYPE} timed out; it is safe to retry`,
  };
}

/** A failed Create's physical id: its claim's, so the Delete that follows cleans up after it. */
function createdIdOrFallback(request: CloudFormationRequest, fallback: string): string {
  try {
    return physicalIdOf(claimIdOf(request, propertiesOf(request.ResourceProperties)));
  } catch {
    return fallback;
  }
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
