/**
 * What every resource's operations share: the request and reply shapes, the pieces of a request
 * (namespace, names, body, list query), new metadata, list replies and continue tokens, recognising
 * our own write whose answer was lost, and reads and lists of pools and claims alike.
 */
import { sharingOf } from '../allocation/quota.ts';
import { randomUUID } from 'node:crypto';
import { BadRequestError, InvalidError, NotFoundError } from '../../domain/errors.ts';
import {
  kindOfResource,
  poolInfoByAllocationResource,
  type PoolKindInfo,
  type Resource,
} from '../../domain/kinds.ts';
import { ALLOCATION_NAME_MAX, nameProblem } from '../../domain/names.ts';
import { liveClaim } from '../leases/leases.ts';
import { claimObject, poolObject, type ApiObject, timestamp } from '../../domain/objects/objects.ts';
import type { ClaimRecord, ItemKey, PoolRecord } from '../../domain/objects/records.ts';

import { isObject, type JsonObject, type Metadata } from '../../domain/objects/validation.ts';
import { objectKey } from '../../store/keys.ts';
import { type ClaimContext } from '../context.ts';
import { allocationOutcome, midAllocation } from '../allocation/outcome.ts';
export interface OperationRequest {
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  body: unknown;
  /**
   * A PATCH's read of the object: the replace goes ahead only while the object is still as read (else
   * `ChangedSinceRead`, and the PATCH reads again), and never creates one. A claim's delete takes it too
   * (lib/service/requests/claim-resource.ts deletes only the claim it read).
   */
  unchangedSince?: ApiObject;
  /** A watch: where its lines go and how long it lasts (operations/watch.ts). */
  watch?: WatchOptions;
}

/** How a watch answers (operations/watch.ts). */
export interface WatchOptions {
  /** Where the answer's lines go, as they are found. */
  write(line: string): void;
  /**
   * Called once the watch is sure to answer 200 (its position is kept), before its first line: a stream
   * sends its head then, as a Kubernetes API server does, so a client knows the watch is on.
   */
  open?(): void;
  /** End the answer once it has events (a long poll); otherwise at its deadline. */
  endAfterEvents: boolean;
  /** The most an answer lasts, ms (`timeoutSeconds` may ask for less). */
  maxMs: number;
  /** How long to wait before reading the history again when nothing came. */
  pollMs: number;
  /** The most an answer's lines may weigh (a long poll: Lambda's answer is at most 6 MB). */
  maxBytes?: number;
  /** Aborted when the client has gone. */
  signal?: AbortSignal;
  /** How an event's object is shown (a Kubernetes Table of one row, when the client asks for one). */
  present?(object: ApiObject): unknown;
}

export interface Reply {
  statusCode: number;
  body: unknown;
}

export type Operation = (request: OperationRequest, ctx: ClaimContext) => Promise<Reply>;

export const MAX_REPLACE_ATTEMPTS = 5;

/** A PATCH's object changed, or went, between its read and its replace. */
export class ChangedSinceRead extends Error {
  override readonly name = 'ChangedSinceRead';
}

/** What a PATCH compares: everything a replace writes, and the uid (the same object, not a new one). */
const fingerprint = (object: ApiObject) => {
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  return JSON.stringify([metadata.uid, metadata.labels, metadata.annotations, object.spec]);
};

/** For a PATCH's replace: throws ChangedSinceRead unless the object stored now is the one it read. */
export function checkUnchangedSince(request: OperationRequest, current: () => ApiObject | undefined): void {
  const read = request.unchangedSince;
  if (read === undefined) return;
  const now = current();
  if (now === undefined || fingerprint(now) !== fingerprint(read)) throw new ChangedSinceRead();
}

// ---------------------------------------------------------------- request pieces

export function namespaceOf(request: OperationRequest): string {
  const namespace = request.params.namespace ?? '';
  if (nameProblem(namespace))
    throw new NotFoundError(`namespace "${clipName(namespace)}" is not a valid namespace`);
  return namespace;
}

/** A name in the path: a malformed one names nothing, so reads and deletes answer 404. */
export function pathName(request: OperationRequest, resource: Resource): string {
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

export function clipName(name: string): string {
  return name.length > 80 ? `${name.slice(0, 80)}…` : name;
}

export function bodyObject(body: unknown): JsonObject {
  if (!isObject(body)) throw new BadRequestError('the body must be a JSON object');
  return body;
}

export function newMetadata(
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
export async function storedUid(ctx: ClaimContext, key: ItemKey): Promise<string | undefined> {
  return (await ctx.table.get<{ metadata?: { uid?: string } }>(key))?.metadata?.uid;
}

/**
 * Whether the item under `key` is the one this request wrote (its uid): the SDK retries a conditional put
 * whose answer was lost (a timeout after the store applied it), and the retry fails on that very item.
 */
export async function ownWriteLanded(ctx: ClaimContext, key: ItemKey, uid: string): Promise<boolean> {
  return (await storedUid(ctx, key)) === uid;
}

/**
 * After a conditional delete failed: when the object read before is gone, it was deleted (maybe by this
 * request's own first attempt, whose answer was lost and retried), and what was read is its last state.
 */
export async function goneSinceRead<T extends { metadata: { uid: string } }>(
  ctx: ClaimContext,
  key: ItemKey,
  read: T,
): Promise<T | undefined> {
  return (await storedUid(ctx, key)) === read.metadata.uid ? undefined : read;
}

export function notFound(resource: Resource, name: string): NotFoundError {
  const kind = kindOfResource(resource);
  return new NotFoundError(`${kind} "${name}" not found`).about(kind, name);
}

export function cascadeFlag(request: OperationRequest): boolean {
  const value = request.query.cascade;
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new BadRequestError('cascade must be true or false');
}

/** The name in a PUT's path: a malformed one is the body's problem to name (422), not a missing object. */
export function putName(request: OperationRequest, kind: string): string {
  const name = request.params.name ?? '';
  const problem = nameProblem(
    name,
    poolInfoByAllocationResource(request.params.resource ?? '') ? ALLOCATION_NAME_MAX : 63,
  );
  if (problem) throw InvalidError.field('metadata.name', problem).about(kind, clipName(name));
  return name;
}

export async function readObject(
  resource: Resource,
  request: OperationRequest,
  ctx: ClaimContext,
): Promise<Reply> {
  const namespace = namespaceOf(request);
  const name = pathName(request, resource);
  const key = objectKey(namespace, resource, name);
  const item = await ctx.table.get<PoolRecord | ClaimRecord>(key);
  if (resource === 'claims') {
    // A claim mid-allocation is answered with its outcome (api.md, "Routes").
    const live = item?.t === 'claim' ? await liveClaim(ctx, key, item) : item;
    const claim = live?.t === 'claim' && midAllocation(live) ? await allocationOutcome(ctx, key, live) : live;
    if (claim?.t !== 'claim') throw notFound(resource, name);
    return { statusCode: 200, body: claimObject(claim) };
  }
  if (item?.t !== 'pool') throw notFound(resource, name);
  const object = poolObject(item);
  const sharing = await sharingOf(ctx, item);
  if (sharing) (object.status as Record<string, unknown>).sharing = sharing;
  return { statusCode: 200, body: object };
}

/** A pool as an operation reads it (eventually consistent, as a hint for its spec); undefined when none. */
export async function poolOf(ctx: ClaimContext, namespace: string, info: PoolKindInfo, name: string) {
  const pool = await ctx.table.get<PoolRecord>(objectKey(namespace, info.resource, name), false);
  return pool?.t === 'pool' ? pool : undefined;
}
