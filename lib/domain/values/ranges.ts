/** IndexPool: integer ranges, Index values, and their names (api.md, "Pools"). */
import type { Cause } from '../errors.ts';
import { countCandidates, intersectSegments, overlaps, type Segment } from './candidates.ts';
import {
  parsed,
  problem,
  type CheckedPoolSpec,
  type Parsed,
  type ParsedValue,
  type PoolSpace,
  type ValueKind,
} from './values.ts';

/** Largest index a range may hold: ranges satisfy 0 ≤ a ≤ b < 2^63−1. */
export const MAX_INDEX = 2n ** 63n - 2n;
const DECIMAL = /^[0-9]{1,19}$/;

/** Reads one integer bound: a JSON integer (safe range only) or a decimal string. */
export function parseIndex(input: unknown): Parsed<bigint> {
  let n: bigint;
  if (typeof input === 'number') {
    if (!Number.isInteger(input)) return problem(`${input} is not an integer`);
    if (!Number.isSafeInteger(input)) {
      return problem(`${input} is beyond 2^53 and loses precision as a JSON number; write it as a string`);
    }
    n = BigInt(input);
  } else if (typeof input === 'string') {
    if (!DECIMAL.test(input)) return problem(`"${clip(input)}" is not a decimal integer`);
    n = BigInt(input);
  } else {
    return problem('must be an integer or a decimal string');
  }
  if (n < 0n || n > MAX_INDEX) return problem(`${n} is outside 0..${MAX_INDEX}`);
  return parsed(n);
}

/** Reads `"a..b"`, `"a"` or a JSON integer as an inclusive run. */
export function parseRange(input: unknown): Parsed<Segment> {
  if (typeof input === 'string' && input.includes('..')) {
    const parts = input.split('..');
    if (parts.length !== 2) return problem(`"${clip(input)}" is not a range "a..b"`);
    const first = parseIndex(parts[0]);
    if (!first.ok) return first;
    const last = parseIndex(parts[1]);
    if (!last.ok) return last;
    if (first.value > last.value) return problem(`"${input}" starts after it ends`);
    return parsed({ first: first.value, last: last.value });
  }
  const single = parseIndex(input);
  return single.ok ? parsed({ first: single.value, last: single.value }) : single;
}

export function formatRange(range: Segment): string {
  return range.first === range.last ? `${range.first}` : `${range.first}..${range.last}`;
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function indexValue(slot: bigint): ParsedValue {
  return { value: slot.toString(), slot };
}

export const indexValues: ValueKind = {
  allocationKind: 'Index',
  parse(input) {
    const n = parseIndex(input);
    return n.ok ? parsed(indexValue(n.value)) : n;
  },
  allocationName: (pool, value) => `${pool}-${value.value}`,
  parseAllocationName(name) {
    const match = /^(.+)-([0-9]{1,19})$/.exec(name);
    if (!match) return undefined;
    const n = parseIndex(match[2]);
    // Only the canonical spelling is a deterministic name ("p-007" is not p's index 7).
    if (!n.ok || n.value.toString() !== match[2]) return undefined;
    return { pool: match[1]!, value: indexValue(n.value) };
  },
  specValue: (value) => (value.slot <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value.slot) : value.value),
};

/** Checks `spec.ranges`: at least one, each valid, none overlapping; spec order is candidate order. */
export function checkIndexPoolSpec(spec: Record<string, unknown>): CheckedPoolSpec | { causes: Cause[] } {
  const { ranges } = spec;
  if (!Array.isArray(ranges) || ranges.length === 0) {
    return { causes: [{ field: 'spec.ranges', message: 'must be a list of at least one range' }] };
  }
  if (ranges.length > 1000) {
    return { causes: [{ field: 'spec.ranges', message: 'must hold at most 1000 ranges' }] };
  }
  const causes: Cause[] = [];
  const segments: Segment[] = [];
  // Where each segment stands in spec.ranges (an invalid entry has no segment).
  const positions: number[] = [];
  const canonical: unknown[] = [];
  ranges.forEach((input: unknown, i) => {
    const range = parseRange(input);
    if (!range.ok) {
      causes.push({ field: `spec.ranges[${i}]`, message: range.problem });
      return;
    }
    const clash = segments.findIndex((other) => overlaps(other, range.value));
    if (clash >= 0) {
      causes.push({
        field: `spec.ranges[${i}]`,
        message: `spec.ranges[${i}] (${formatRange(range.value)}) overlaps with spec.ranges[${positions[clash]}] (${formatRange(segments[clash]!)})`,
      });
    }
    segments.push(range.value);
    positions.push(i);
    canonical.push(typeof input === 'number' ? input : formatRange(range.value));
  });
  if (causes.length) return { causes };
  return { spec: { ranges: canonical }, space: indexPoolSpace(segments) };
}

export function indexPoolSpace(segments: readonly Segment[]): PoolSpace {
  return {
    kind: 'IndexPool',
    segments,
    total: countCandidates(segments),
    valueAt: indexValue,
    fits: (value) => value.family === undefined,
    claimSegments(within, reserved) {
      const causes: Cause[] = [];
      if (reserved !== undefined) {
        causes.push({ field: 'spec.reserved', message: 'applies to IP pools only' });
      }
      let result = [...segments];
      if (within !== undefined) {
        const range =
          typeof within === 'string' ? parseRange(within) : problem<Segment>('must be a range "a..b"');
        if (!range.ok) causes.push({ field: 'spec.within', message: range.problem });
        else result = intersectSegments(segments, range.value);
      }
      return causes.length ? { causes } : { segments: result };
    },
  };
}
