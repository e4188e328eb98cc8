/**
 * The map of a pool's space (the occupancy route): a span of slots cut into buckets, each with how
 * many candidates it has and how many slots are held, counted from the group summaries' bitmaps.
 * Pure: the service reads the bitmaps, this says which to read and counts them. Nothing here walks the
 * span value by value, so a 2^32 index pool or a /48 costs what a /24 costs.
 */
import { formatRange, parseRange } from '../values/ranges.ts';
import { familyBits, formatPrefix, parsePrefix, prefixRange, type Prefix } from '../values/ip.ts';
import type { Segment } from '../values/candidates.ts';
import type { PoolKind } from '../kinds.ts';
import type { PoolSpace } from '../values/values.ts';

export const DEFAULT_BUCKETS = 256;
export const MAX_BUCKETS = 4096;

/** The slots a map covers, and how its buckets are named. */
export interface OccupancySpan {
  readonly first: bigint;
  readonly last: bigint;
  /**
   * IP pools: the span is an aligned block of `2^k` slots in a space of `slotBits` bits, so every
   * bucket (a power of two) is a CIDR. Absent for index pools.
   */
  readonly ip?: { readonly family: 4 | 6; readonly slotBits: number; readonly prefixBits: number };
}

export interface Bucket extends Segment {
  /** Candidates in the bucket: excluded addresses, gaps between ranges and values outside the spec are not. */
  readonly size: bigint;
}

/** The pool's slot space as the map sees it: for an IP pool, its family and slot width. */
export interface SpaceShape {
  readonly kind: PoolKind;
  readonly family?: 4 | 6;
  /** IPPrefixPool: the length of the prefixes it hands out (its slots are sub-prefix numbers). */
  readonly allocationPrefixLength?: number;
}

export function shapeOf(kind: PoolKind, spec: Record<string, unknown>, space: PoolSpace): SpaceShape {
  const first = space.segments[0];
  const family = first ? space.valueAt(first.first).family : familyOfSpec(spec);
  // A pool of a range of prefix lengths (allocationPrefixLengths) keeps summaries of its finest slots,
  // prefixes of its longest length: its map counts those.
  const length =
    typeof spec.allocationPrefixLength === 'number' ? spec.allocationPrefixLength : space.prefixLengths?.max;
  return { kind, family, allocationPrefixLength: length };
}

function familyOfSpec(spec: Record<string, unknown>): 4 | 6 | undefined {
  const prefix = Array.isArray(spec.prefixes) ? parsePrefix(spec.prefixes[0]) : undefined;
  return prefix?.ok ? prefix.value.family : undefined;
}

/** Bits of one slot number: the address width, or an IPPrefixPool's allocation length. */
function slotBits(shape: SpaceShape): number {
  if (shape.kind === 'IPPrefixPool') return shape.allocationPrefixLength ?? familyBits(shape.family ?? 4);
  return familyBits(shape.family ?? 4);
}

/**
 * The span a map covers: `within` ("a..b" for an index pool, a CIDR for an IP pool), else the pool's
 * candidates (an IP pool's: the smallest aligned block that covers them). A string is the problem
 * with `within`; undefined: the pool has no candidates to draw.
 */
export function spanOf(
  shape: SpaceShape,
  segments: readonly Segment[],
  within: string | undefined,
): OccupancySpan | string | undefined {
  if (shape.kind === 'IndexPool') {
    if (within !== undefined) {
      const range = parseRange(within);
      return range.ok ? { first: range.value.first, last: range.value.last } : `within: ${range.problem}`;
    }
    if (segments.length === 0) return undefined;
    return hull(segments);
  }
  if (shape.family === undefined) return undefined;
  const bits = slotBits(shape);
  const ip = { family: shape.family, slotBits: bits, prefixBits: familyBits(shape.family) };
  if (within !== undefined) {
    const prefix = parsePrefix(within);
    if (!prefix.ok) return `within: ${prefix.problem}`;
    if (prefix.value.family !== shape.family)
      return `within: ${within} is IPv${prefix.value.family} but the pool is IPv${shape.family}`;
    if (prefix.value.length > bits) return `within: ${within} is longer than the pool's /${bits} values`;
    const range = prefixRange(prefix.value);
    const shift = BigInt(ip.prefixBits - bits);
    return { first: range.first >> shift, last: range.last >> shift, ip };
  }
  if (segments.length === 0) return undefined;
  const { first, last } = hull(segments);
  let k = 0n;
  while (first >> k !== last >> k) k++;
  const base = (first >> k) << k;
  return { first: base, last: base + (1n << k) - 1n, ip };
}

function hull(segments: readonly Segment[]): Segment {
  let first = segments[0]!.first;
  let last = segments[0]!.last;
  for (const segment of segments) {
    if (segment.first < first) first = segment.first;
    if (segment.last > last) last = segment.last;
  }
  return { first, last };
}

/**
 * Cuts the span into at most `count` buckets of one width: a power of two for IP pools (each bucket a
 * CIDR), the span's size divided by `count`, rounded up, for index pools (the last may be shorter).
 */
export function planBuckets(
  span: OccupancySpan,
  count: number,
  segments: readonly Segment[],
): { width: bigint; buckets: Bucket[] } {
  const size = span.last - span.first + 1n;
  let width: bigint;
  if (span.ip) {
    let n = 1n;
    while (n * 2n <= BigInt(count) && n * 2n <= size) n *= 2n;
    width = size / n;
  } else {
    width = (size + BigInt(count) - 1n) / BigInt(count);
  }
  const buckets: Bucket[] = [];
  for (let first = span.first; first <= span.last; first += width) {
    const last = first + width - 1n > span.last ? span.last : first + width - 1n;
    buckets.push({ first, last, size: candidatesIn(segments, { first, last }) });
  }
  return { width, buckets };
}

function candidatesIn(segments: readonly Segment[], range: Segment): bigint {
  let count = 0n;
  for (const segment of segments) {
    const first = segment.first > range.first ? segment.first : range.first;
    const last = segment.last < range.last ? segment.last : range.last;
    if (first <= last) count += last - first + 1n;
  }
  return count;
}

/** How a bucket is written in the reply: `within` is what a claim's `within` (or the next map) takes. */
export function bucketWithin(span: OccupancySpan, bucket: Segment): string {
  if (!span.ip) return formatRange(bucket);
  const size = bucket.last - bucket.first + 1n;
  const k = size.toString(2).length - 1;
  const shift = BigInt(span.ip.prefixBits - span.ip.slotBits);
  const prefix: Prefix = {
    family: span.ip.family,
    network: bucket.first << shift,
    length: span.ip.slotBits - k,
  };
  return formatPrefix(prefix);
}

const POPCOUNT = Uint8Array.from({ length: 256 }, (_, byte) => {
  let bits = 0;
  for (let b = byte; b; b >>= 1) bits += b & 1;
  return bits;
});

/** Held bits of a bitmap (bit i: slot `groupFirst + i`) inside an inclusive slot range. */
export function heldInRange(bits: Uint8Array, groupFirst: bigint, groupSize: number, range: Segment): number {
  const groupLast = groupFirst + BigInt(groupSize) - 1n;
  if (range.last < groupFirst || range.first > groupLast) return 0;
  const from = Number((range.first > groupFirst ? range.first : groupFirst) - groupFirst);
  const to = Number((range.last < groupLast ? range.last : groupLast) - groupFirst);
  let held = 0;
  let offset = from;
  while (offset <= to && offset & 7) held += (bits[offset >> 3]! >> (offset++ & 7)) & 1;
  while (offset + 7 <= to) {
    held += POPCOUNT[bits[offset >> 3]!]!;
    offset += 8;
  }
  while (offset <= to) held += (bits[offset >> 3]! >> (offset++ & 7)) & 1;
  return held;
}
