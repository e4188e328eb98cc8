/**
 * Claims and releases without HTTP (docs/events.md, "Requests"): a Lambda Invoke or Step Functions task
 * sends a typed payload, an EventBridge rule delivers an `Allot Claim Requested` / `Allot Release
 * Requested` event. Both run the HTTP API's own operations (a claim is `PUT …/claims/{name}`, a release
 * is `DELETE …/claims/{name}`), so the semantics are the contract's; the answer is the Claim or a
 * `Status`, returned as a value so a state machine can branch on `kind`.
 */
import { BadRequestError, toAllotError, type Status } from '../../domain/errors.ts';
import { CLAIM_REQUESTED, RELEASE_REQUESTED } from '../../domain/events.ts';
import { isObject } from '../../domain/objects/validation.ts';
import { type ClaimContext } from '../context.ts';
import type { Operation } from '../operations/common.ts';

export type DirectOperation = 'claim' | 'release';

/**
 * The HTTP operations a function runs its direct requests with: `claim` is the claim replace (`PUT`),
 * `release` the claim delete; each function passes its own, so its bundle holds no other.
 */
export type DirectOperations = Partial<Record<DirectOperation, Operation>>;

export interface ClaimRequest {
  operation: 'claim';
  namespace: string;
  name: string;
  /** The Claim's spec, as in a `PUT` body (`poolRef`, optional `value`, `within`, `reserved`, `owner`). */
  spec: unknown;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface ReleaseRequest {
  operation: 'release';
  namespace: string;
  name: string;
}

export type DirectRequest = ClaimRequest | ReleaseRequest;

/** An EventBridge event as a rule delivers it to a Lambda target (the fields read here). */
export interface BusRequestEvent {
  'detail-type': string;
  source?: string;
  id?: string;
  detail: unknown;
}

/** What the caller gets: the Claim (its API shape) or a Status. */
export type DirectResult = Record<string, unknown> | Status;

const DETAIL_TYPE_OPERATIONS: Readonly<Record<string, DirectOperation>> = {
  [CLAIM_REQUESTED]: 'claim',
  [RELEASE_REQUESTED]: 'release',
};

export function isBusEvent(event: unknown): event is BusRequestEvent {
  return isObject(event) && typeof event['detail-type'] === 'string' && 'detail' in event;
}

/** The request a payload or bus event carries; a malformed one is a BadRequestError. */
export function directRequestOf(event: unknown): DirectRequest {
  let payload: unknown = event;
  if (isBusEvent(event)) {
    const operation = DETAIL_TYPE_OPERATIONS[event['detail-type']];
    if (!operation) throw new BadRequestError(`detail-type "${clip(event['detail-type'])}" is not a request`);
    if (!isObject(event.detail)) throw new BadRequestError('detail must be an object');
    payload = { ...event.detail, operation };
  }
  if (!isObject(payload)) throw new BadRequestError('the payload must be an object');
  const { operation, namespace, name } = payload;
  if (operation !== 'claim' && operation !== 'release')
    throw new BadRequestError('operation must be "claim" or "release"');
  if (typeof namespace !== 'string') throw new BadRequestError('namespace must be a string');
  if (typeof name !== 'string') throw new BadRequestError('name must be a string');
  if (operation === 'release') return { operation, namespace, name };
  for (const field of ['labels', 'annotations'] as const) {
    if (payload[field] !== undefined && !isObject(payload[field]))
      throw new BadRequestError(`${field} must be an object`);
  }
  return {
    operation,
    namespace,
    name,
    spec: payload.spec,
    ...(payload.labels ? { labels: payload.labels as Record<string, string> } : {}),
    ...(payload.annotations ? { annotations: payload.annotations as Record<string, string> } : {}),
  };
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/**
 * Runs a direct or bus request with the operations the function serves (`served`): the claim function
 * serves `claim`, the release function `release`, each with the grants for its own operation only.
 */
export async function invokeDirect(
  event: unknown,
  ctx: ClaimContext,
  served: DirectOperations,
  /** Told of every failure that is not the caller's (a 5xx), with the original error. */
  reportInternal?: (error: unknown) => void,
): Promise<DirectResult> {
  try {
    const request = directRequestOf(event);
    const operation = served[request.operation];
    if (!operation) {
      const allowed = Object.keys(served) as DirectOperation[];
      throw new BadRequestError(
        `this function serves ${allowed.map((name) => `"${name}"`).join(', ')}, not "${request.operation}"`,
      );
    }
    const params = { namespace: request.namespace, name: request.name, resource: 'claims' };
    if (request.operation === 'release') {
      const reply = await operation({ params, query: {}, body: undefined }, ctx);
      return reply.body as Record<string, unknown>;
    }
    const metadata: Record<string, unknown> = { name: request.name };
    if (request.labels) metadata.labels = request.labels;
    if (request.annotations) metadata.annotations = request.annotations;
    const reply = await operation({ params, query: {}, body: { metadata, spec: request.spec } }, ctx);
    return reply.body as Record<string, unknown>;
  } catch (error) {
    const allotError = toAllotError(error);
    if (allotError.code >= 500) reportInternal?.(error);
    return allotError.toStatus();
  }
}
