/**
 * Errors that map onto the contract's `Status` reasons (api.md, "Errors").
 * Allocation outcomes (exhausted, taken, out of range) are not HTTP errors: they live in allocate.ts.
 */

export type StatusReason =
  | 'BadRequest'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'AlreadyExists'
  | 'PoolInUse'
  | 'ClaimInUse'
  | 'Conflict'
  | 'Expired'
  | 'RequestEntityTooLarge'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'InternalError';

export interface Cause {
  readonly field: string;
  readonly message: string;
}

export interface StatusDetails {
  kind?: string;
  name?: string;
  causes?: Cause[];
}

/** The Kubernetes `Status` body every error answers with. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  status: 'Failure';
  code: number;
  reason: StatusReason;
  message: string;
  details?: StatusDetails;
}

export abstract class AllotError extends Error {
  abstract readonly code: number;
  abstract readonly reason: StatusReason;
  readonly causes: Cause[] | undefined;
  details: { kind?: string; name?: string } = {};

  constructor(message: string, causes?: Cause[], options?: ErrorOptions) {
    super(message, options);
    this.causes = causes;
  }

  /** Names the object the error is about, for `details`. */
  about(kind: string | undefined, name: string | undefined): this {
    if (kind !== undefined) this.details.kind = kind;
    if (name !== undefined) this.details.name = name;
    return this;
  }

  toStatus(): Status {
    const details: StatusDetails = { ...this.details };
    if (this.causes?.length) details.causes = this.causes;
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: this.code,
      reason: this.reason,
      message: this.message,
    };
    if (Object.keys(details).length > 0) status.details = details;
    return status;
  }
}

export class BadRequestError extends AllotError {
  readonly code = 400;
  readonly reason = 'BadRequest';
  override readonly name = 'BadRequestError';
}
export class NotFoundError extends AllotError {
  readonly code = 404;
  readonly reason = 'NotFound';
  override readonly name = 'NotFoundError';
}
export class MethodNotAllowedError extends AllotError {
  readonly code = 405;
  readonly reason = 'MethodNotAllowed';
  override readonly name = 'MethodNotAllowedError';
}
export class AlreadyExistsError extends AllotError {
  readonly code = 409;
  readonly reason = 'AlreadyExists';
  override readonly name = 'AlreadyExistsError';
}
export class PoolInUseError extends AllotError {
  readonly code = 409;
  readonly reason = 'PoolInUse';
  override readonly name = 'PoolInUseError';
}
export class ClaimInUseError extends AllotError {
  readonly code = 409;
  readonly reason = 'ClaimInUse';
  override readonly name = 'ClaimInUseError';
}
/** A request that does not fit the object's state: `renew` of a claim without a lease. */
export class ConflictError extends AllotError {
  readonly code = 409;
  readonly reason = 'Conflict';
  override readonly name = 'ConflictError';
}
/** A watch from a resourceVersion older than the history keeps (Kubernetes' 410 Gone, reason Expired). */
export class ExpiredError extends AllotError {
  readonly code = 410;
  readonly reason = 'Expired';
  override readonly name = 'ExpiredError';
}
export class RequestEntityTooLargeError extends AllotError {
  readonly code = 413;
  readonly reason = 'RequestEntityTooLarge';
  override readonly name = 'RequestEntityTooLargeError';
}
/** An `Accept` header that lists only what the route cannot answer (a Table of a pool's preview). */
export class NotAcceptableError extends AllotError {
  readonly code = 406;
  readonly reason = 'NotAcceptable';
  override readonly name = 'NotAcceptableError';
}
export class UnsupportedMediaTypeError extends AllotError {
  readonly code = 415;
  readonly reason = 'UnsupportedMediaType';
  override readonly name = 'UnsupportedMediaTypeError';
}
export class InvalidError extends AllotError {
  readonly code = 422;
  readonly reason = 'Invalid';
  override readonly name = 'InvalidError';

  /** One failing field; the message names the field so it reads alone. */
  static field(field: string, message: string): InvalidError {
    return new InvalidError(`${field}: ${message}`, [{ field, message }]);
  }
}

/** Anything unexpected: a fixed message, so internals never reach a client (the original stays as `cause`). */
export class InternalError extends AllotError {
  readonly code = 500;
  readonly reason = 'InternalError';
  override readonly name = 'InternalError';
  constructor(cause?: unknown) {
    super('internal error: the request was not completed; it is safe to retry', undefined, { cause });
  }
}

export function toAllotError(error: unknown): AllotError {
  return error instanceof AllotError ? error : new InternalError(error);
}
