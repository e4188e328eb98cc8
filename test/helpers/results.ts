/** Unwraps the domain's result types in tests, failing with what came back instead. */
import type { Cause } from '../../lib/domain/errors.ts';
import type { CheckedPoolSpec, Parsed } from '../../lib/domain/values/values.ts';

function bigintJson(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${value}n` : value;
}

export function ok<T>(result: Parsed<T>): T {
  if (!result.ok) throw new Error(`expected a value, got the problem: ${result.problem}`);
  return result.value;
}

export function problemOf<T>(result: Parsed<T>): string {
  if (result.ok) throw new Error(`expected a problem, got ${JSON.stringify(result.value, bigintJson)}`);
  return result.problem;
}

export function checked(result: CheckedPoolSpec | { causes: Cause[] }): CheckedPoolSpec {
  if ('causes' in result) throw new Error(`expected a valid spec, got ${JSON.stringify(result.causes)}`);
  return result;
}

export function causesOf(result: CheckedPoolSpec | { causes: Cause[] }): Cause[] {
  if (!('causes' in result)) throw new Error(`expected causes, got the spec ${JSON.stringify(result.spec)}`);
  return result.causes;
}
