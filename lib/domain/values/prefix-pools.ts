/**
 * IPPrefixPool specs and spaces: one length (`allocationPrefixLength`, every slot a prefix of it) or a
 * range of lengths (`allocationPrefixLengths { min, max, default }`, api.md "Pools").
 *
 * A pool of a range of lengths counts in prefixes of its longest length, `max` (its "finest slots"): a
 * prefix of length L covers the aligned run of 2^(max−L) finest slots from `network >> (bits − max)`.
 * For a claim of length L the pool is, as far as candidates go, a pool of that one length
 * (`atLength(L)`): the aligned sub-prefixes of each prefix, in spec order. Which of them are free is
 * the store's to say: no allocation object of any length may overlap one (service/allocation/prefix-check.ts).
 */
import type { Cause } from '../errors.ts';
import { countCandidates, intersectSegments, type Segment } from './candidates.ts';
import {
  checkPrefixes,
  checkWithin,
  familyBits,
  formatPrefix,
  prefixAt,
  prefixValue,
  subPrefixRange,
  type Family,
  type Prefix,
} from './ip.ts';
import type { CheckedPoolSpec, ParsedValue, PoolSpace, PrefixLengths } from './values.ts';

const LENGTHS_FIELDS = ['min', 'max', 'default'] as const;

/** Checks one length: an integer longer than every prefix, at most the family's width. */
function checkLength(
  field: string,
  input: unknown,
  prefixes: readonly Prefix[] | undefined,
  causes: Cause[],
): number | undefined {
  const fail = (message: string): undefined => {
    causes.push({ field, message });
    return undefined;
  };
  if (typeof input !== 'number' || !Number.isInteger(input) || input < 1 || input > 128) {
    return fail('must be an integer prefix length 1..128');
  }
  if (!prefixes) return undefined;
  const { family } = prefixes[0]!;
  if (input > familyBits(family)) {
    return fail(`must be at most ${familyBits(family)} for an IPv${family} pool`);
  }
  const index = prefixes.findIndex((prefix) => prefix.length >= input);
  if (index >= 0) {
    const prefix = prefixes[index]!;
    return fail(
      `must be longer than every prefix: spec.prefixes[${index}] (${formatPrefix(prefix)}) is /${prefix.length}`,
    );
  }
  return input;
}

/** Checks `allocationPrefixLengths`: `{ min, max, default }`, each a length, min ≤ default ≤ max. */
function checkLengths(
  input: unknown,
  prefixes: readonly Prefix[] | undefined,
  causes: Cause[],
): PrefixLengths | undefined {
  const field = 'spec.allocationPrefixLengths';
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    causes.push({ field, message: 'must be an object { min, max, default }' });
    return undefined;
  }
  const given = input as Record<string, unknown>;
  const before = causes.length;
  for (const name of Object.keys(given)) {
    if (!(LENGTHS_FIELDS as readonly string[]).includes(name))
      causes.push({ field: `${field}.${name}`, message: 'is not a field of allocationPrefixLengths' });
  }
  const lengths: Partial<Record<(typeof LENGTHS_FIELDS)[number], number>> = {};
  for (const name of LENGTHS_FIELDS) {
    if (given[name] === undefined) causes.push({ field: `${field}.${name}`, message: 'is required' });
    else lengths[name] = checkLength(`${field}.${name}`, given[name], prefixes, causes);
  }
  const { min, max, default: fallback } = lengths;
  if (min !== undefined && max !== undefined && min > max)
    causes.push({ field: `${field}.min`, message: `must be at most max (${max})` });
  else if (
    min !== undefined &&
    max !== undefined &&
    fallback !== undefined &&
    (fallback < min || fallback > max)
  )
    causes.push({ field: `${field}.default`, message: `must lie in min..max (${min}..${max})` });
  if (causes.length > before || min === undefined || max === undefined || fallback === undefined)
    return undefined;
  return { min, max, default: fallback };
}

/** Checks an IPPrefixPool's `prefixes` and its one length or its range of lengths. */
export function checkIPPrefixPoolSpec(spec: Record<string, unknown>): CheckedPoolSpec | { causes: Cause[] } {
  const causes: Cause[] = [];
  const prefixes = checkPrefixes(spec.prefixes, causes);
  const one = spec.allocationPrefixLength;
  const range = spec.allocationPrefixLengths;
  if (one !== undefined && range !== undefined) {
    causes.push({
      field: 'spec.allocationPrefixLengths',
      message: 'give allocationPrefixLength or allocationPrefixLengths, not both',
    });
    return { causes };
  }
  if (range !== undefined) {
    const lengths = checkLengths(range, prefixes, causes);
    if (causes.length > 0 || prefixes === undefined || lengths === undefined) return { causes };
    const canonical = { prefixes: prefixes.map(formatPrefix), allocationPrefixLengths: lengths };
    return { spec: canonical, space: rangedSpace(prefixes, lengths) };
  }
  if (one === undefined) {
    causes.push({
      field: 'spec.allocationPrefixLength',
      message: 'is required: the length of the prefixes handed out (or allocationPrefixLengths)',
    });
  }
  const length =
    one === undefined ? undefined : checkLength('spec.allocationPrefixLength', one, prefixes, causes);
  if (causes.length > 0 || prefixes === undefined || length === undefined) return { causes };
  const canonical = { prefixes: prefixes.map(formatPrefix), allocationPrefixLength: length };
  return { spec: canonical, space: oneLengthSpace(prefixes, length) };
}

/** Candidates of one length: the aligned sub-prefixes of that length of each prefix. */
function oneLengthSpace(
  prefixes: readonly Prefix[],
  length: number,
  lengths: PrefixLengths = { min: length, max: length, default: length },
): PoolSpace {
  const family = prefixes[0]!.family;
  const segments = prefixes.map((prefix) => subPrefixRange(prefix, length));
  return {
    kind: 'IPPrefixPool',
    segments,
    total: countCandidates(segments),
    prefixLengths: lengths,
    valueAt: (slot) => prefixValue(prefixAt(family, length, slot)),
    fits: (value) => value.family === family && value.length === length,
    claimSegments(within, reserved) {
      const causes: Cause[] = [];
      let result = [...segments];
      if (reserved !== undefined) {
        causes.push({ field: 'spec.reserved', message: 'applies to IPAddressPool only' });
      }
      if (within !== undefined) {
        const prefix = checkWithin(within, prefixes, causes);
        if (prefix && prefix.length > length) {
          const what =
            lengths.min === lengths.max ? `allocationPrefixLength ${length}` : `the claim's length ${length}`;
          causes.push({
            field: 'spec.within',
            message: `${formatPrefix(prefix)} is longer than ${what}: it holds no /${length}`,
          });
        } else if (prefix) {
          result = intersectSegments(result, subPrefixRange(prefix, length));
        }
      }
      return causes.length > 0 ? { causes } : { segments: result };
    },
  };
}

/** A pool of a range of lengths: counted in its finest slots, searched one length at a time. */
function rangedSpace(prefixes: readonly Prefix[], lengths: PrefixLengths): PoolSpace {
  const finest = oneLengthSpace(prefixes, lengths.max, lengths);
  const family = prefixes[0]!.family;
  const byLength = new Map<number, PoolSpace>();
  return {
    ...finest,
    fits: (value) =>
      value.family === family &&
      value.length !== undefined &&
      value.length >= lengths.min &&
      value.length <= lengths.max,
    atLength(length) {
      let space = byLength.get(length);
      if (!space) byLength.set(length, (space = oneLengthSpace(prefixes, length, lengths)));
      return space;
    },
  };
}

/** Why a claim's `prefixLength` does not fit its pool's space (api.md "Claim"), or undefined. */
export function prefixLengthProblem(space: PoolSpace, length: number): string | undefined {
  const lengths = space.prefixLengths;
  if (!lengths) return 'applies to IPPrefixPool only';
  if (lengths.min === lengths.max)
    return length === lengths.min ? undefined : `must be the pool's allocationPrefixLength, ${lengths.min}`;
  return length >= lengths.min && length <= lengths.max
    ? undefined
    : `must lie in the pool's allocationPrefixLengths, ${lengths.min}..${lengths.max}`;
}

/** Whether the pool hands out more than one length (and so needs the overlap check). */
export function isRanged(space: PoolSpace): boolean {
  return space.atLength !== undefined;
}

/** The run of finest slots (prefixes of length `max`) that a prefix covers. */
export function finestRun(value: Pick<ParsedValue, 'slot' | 'length'>, max: number): Segment {
  const shift = BigInt(max - value.length!);
  const first = value.slot << shift;
  return { first, last: first + (1n << shift) - 1n };
}

/** The prefixes that contain `value`, one per length from `min` to its own length − 1. */
export function ancestorsOf(value: ParsedValue, min: number): ParsedValue[] {
  const family = value.family as Family;
  const length = value.length!;
  const out: ParsedValue[] = [];
  for (let l = min; l < length; l++)
    out.push(prefixValue(prefixAt(family, l, value.slot >> BigInt(length - l))));
  return out;
}

/** The prefix of `length` numbered `slot` in a pool of `family`, as a value. */
export function prefixValueAt(family: Family, length: number, slot: bigint): ParsedValue {
  return prefixValue(prefixAt(family, length, slot));
}

/**
 * The space a claim draws from: for an IPPrefixPool of a range of lengths, its candidates of the
 * claim's length (`prefixLength`, else the length of its `value`, else the pool's `default`); for every
 * other pool, the pool's own space. Causes name `spec.prefixLength`.
 */
export function claimSpace(
  space: PoolSpace,
  prefixLength: number | undefined,
  value: ParsedValue | undefined,
): { space: PoolSpace; length?: number } | { causes: Cause[] } {
  const lengths = space.prefixLengths;
  if (prefixLength !== undefined) {
    const problem = prefixLengthProblem(space, prefixLength);
    if (problem) return { causes: [{ field: 'spec.prefixLength', message: problem }] };
    if (value?.length !== undefined && value.length !== prefixLength) {
      const message = `is ${prefixLength} but spec.value ${value.value} is a /${value.length}`;
      return { causes: [{ field: 'spec.prefixLength', message }] };
    }
  }
  if (!lengths) return { space };
  const length = prefixLength ?? value?.length ?? lengths.default;
  if (!space.atLength) return { space, length: lengths.max };
  if (length < lengths.min || length > lengths.max) return { space, length };
  return { space: space.atLength(length), length };
}
