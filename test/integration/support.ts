/**
 * Assertions the integration tests share: the contract's Status body (api.md, "Errors") and the
 * conditions of claims, pools and allocation objects. Not a test file (vitest includes `*.test.ts` only).
 */
import { expect } from 'vitest';
import type { Answer } from '../helpers/allot.ts';

/** The error answers exactly the Status shape, with the HTTP status in `code`. */
export function expectFailure(answer: Answer, code: number, reason: string): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(code);
  expect(answer.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
  expect(typeof answer.body.message).toBe('string');
  expect(answer.body.message.length).toBeGreaterThan(0);
  const keys = Object.keys(answer.body).filter((key) => key !== 'details');
  expect(keys.sort()).toEqual(['apiVersion', 'code', 'kind', 'message', 'reason', 'status']);
}

/** The fields `details.causes` names. */
export function causeFields(answer: Answer): string[] {
  return ((answer.body.details?.causes ?? []) as { field: string }[]).map((cause) => cause.field);
}

/** 422 Invalid naming (at least) each of `fields` in `details.causes`. */
export function expectInvalid(answer: Answer, ...fields: string[]): void {
  expectFailure(answer, 422, 'Invalid');
  const named = causeFields(answer);
  for (const field of fields) expect(named, JSON.stringify(answer.body)).toContain(field);
}

export function conditionOf(object: Record<string, any>, type: string): Record<string, any> | undefined {
  return (object.status?.conditions ?? []).find((condition: { type: string }) => condition.type === type);
}

/** A claim's `Allocated` condition as `status/reason`, e.g. `True/Allocated`, `False/PoolExhausted`. */
export function allocatedState(claim: Record<string, any>): string {
  const condition = conditionOf(claim, 'Allocated');
  return condition ? `${condition.status}/${condition.reason}` : 'none';
}

/** An allocation object's `Valid` condition as `status/reason`. */
export function validState(allocation: Record<string, any>): string {
  const condition = conditionOf(allocation, 'Valid');
  return condition ? `${condition.status}/${condition.reason}` : 'none';
}

/** A pool's `Available` condition as `status/reason`. */
export function availableState(pool: Record<string, any>): string {
  const condition = conditionOf(pool, 'Available');
  return condition ? `${condition.status}/${condition.reason}` : 'none';
}
