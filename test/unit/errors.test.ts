import { describe, it, expect } from 'vitest';
import {
  AllotError,
  AlreadyExistsError,
  BadRequestError,
  InternalError,
  InvalidError,
  MethodNotAllowedError,
  NotFoundError,
  PoolInUseError,
  RequestEntityTooLargeError,
  UnsupportedMediaTypeError,
  toAllotError,
} from '../../lib/domain/errors.ts';

const FIXED_INTERNAL_MESSAGE = 'internal error: the request was not completed; it is safe to retry';

describe('error classes', () => {
  it.each([
    { Class: BadRequestError, code: 400, reason: 'BadRequest', name: 'BadRequestError' },
    { Class: NotFoundError, code: 404, reason: 'NotFound', name: 'NotFoundError' },
    { Class: MethodNotAllowedError, code: 405, reason: 'MethodNotAllowed', name: 'MethodNotAllowedError' },
    { Class: AlreadyExistsError, code: 409, reason: 'AlreadyExists', name: 'AlreadyExistsError' },
    { Class: PoolInUseError, code: 409, reason: 'PoolInUse', name: 'PoolInUseError' },
    {
      Class: RequestEntityTooLargeError,
      code: 413,
      reason: 'RequestEntityTooLarge',
      name: 'RequestEntityTooLargeError',
    },
    {
      Class: UnsupportedMediaTypeError,
      code: 415,
      reason: 'UnsupportedMediaType',
      name: 'UnsupportedMediaTypeError',
    },
    { Class: InvalidError, code: 422, reason: 'Invalid', name: 'InvalidError' },
  ])('$name answers $code $reason', ({ Class, code, reason, name }) => {
    const error = new Class('what happened');
    expect(error).toBeInstanceOf(AllotError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe(code);
    expect(error.reason).toBe(reason);
    expect(error.name).toBe(name);
    expect(error.message).toBe('what happened');
    expect(error.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code,
      reason,
      message: 'what happened',
    });
  });

  it('InternalError answers 500 InternalError with a fixed message', () => {
    const error = new InternalError();
    expect(error.code).toBe(500);
    expect(error.reason).toBe('InternalError');
    expect(error.name).toBe('InternalError');
    expect(error.message).toBe(FIXED_INTERNAL_MESSAGE);
  });
});

describe('toStatus', () => {
  it('has exactly the Status fields and no details when there are none', () => {
    const status = new NotFoundError('indexpools "p" not found').toStatus();
    expect(Object.keys(status).sort()).toEqual(['apiVersion', 'code', 'kind', 'message', 'reason', 'status']);
  });

  it('carries kind and name from about()', () => {
    const error = new NotFoundError('not found').about('IndexPool', 'asn-pool');
    expect(error.toStatus().details).toEqual({ kind: 'IndexPool', name: 'asn-pool' });
  });

  it('about() is chainable and leaves out what is undefined', () => {
    const error = new AlreadyExistsError('exists');
    expect(error.about('Claim', undefined)).toBe(error);
    expect(error.toStatus().details).toEqual({ kind: 'Claim' });
    expect(new AlreadyExistsError('x').about(undefined, undefined).toStatus()).not.toHaveProperty('details');
  });

  it('carries causes in details', () => {
    const causes = [{ field: 'spec.ranges[1]', message: 'overlaps' }];
    const status = new InvalidError('spec.ranges[1]: overlaps', causes)
      .about('IndexPool', 'asn-pool')
      .toStatus();
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: 'spec.ranges[1]: overlaps',
      details: { kind: 'IndexPool', name: 'asn-pool', causes },
    });
  });

  it('leaves an empty cause list out', () => {
    expect(new InvalidError('bad', []).toStatus()).not.toHaveProperty('details');
  });

  it('survives JSON unchanged', () => {
    const status = new InvalidError('bad', [{ field: 'f', message: 'm' }]).about('Claim', 'c').toStatus();
    expect(JSON.parse(JSON.stringify(status))).toEqual(status);
  });

  it('InvalidError.field names one field in the message and the causes', () => {
    expect(InvalidError.field('spec.value', 'is immutable').toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: 'spec.value: is immutable',
      details: { causes: [{ field: 'spec.value', message: 'is immutable' }] },
    });
  });
});

describe('toAllotError', () => {
  it('passes an AllotError through', () => {
    const error = new PoolInUseError('in use');
    expect(toAllotError(error)).toBe(error);
  });

  it.each([
    {
      why: 'an Error with a secret',
      error: new Error('connect ECONNREFUSED 10.0.0.5:8000 password=hunter2'),
    },
    { why: 'a TypeError', error: new TypeError("Cannot read properties of undefined (reading 'secret')") },
    { why: 'a thrown string', error: 'secret string' },
    { why: 'a thrown object', error: { message: 'secret object', code: 403 } },
    { why: 'undefined', error: undefined },
  ])('wraps $why as an InternalError that never carries the original message', ({ why, error }) => {
    const wrapped = toAllotError(error);
    expect(wrapped).toBeInstanceOf(InternalError);
    expect(wrapped.message).toBe(FIXED_INTERNAL_MESSAGE);
    const status = wrapped.toStatus();
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 500,
      reason: 'InternalError',
      message: FIXED_INTERNAL_MESSAGE,
    });
    const body = JSON.stringify(status);
    expect(body).not.toMatch(/secret|hunter2|ECONNREFUSED|Cannot read/);
    expect(why).toBeTruthy();
  });

  it('keeps the original as cause, for logs only', () => {
    const original = new Error('boom');
    const wrapped = toAllotError(original);
    expect(wrapped.cause).toBe(original);
    expect(JSON.stringify(wrapped.toStatus())).not.toContain('boom');
  });
});
