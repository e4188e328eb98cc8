/**
 * Candidates as ordered runs of slots. Every pool kind maps its values onto bigint "slots" that sort like
 * the values (an index is its own slot, an address its 32- or 128-bit number, a prefix its sub-prefix
 * number), and its candidates onto segments: inclusive slot runs in the contract's candidate order
 * (spec order, ascending inside each range or prefix). Nothing here materialises a list of candidates,
 * so a /64 costs what a /30 costs.
 */

/** An inclusive, ascending run of slots. */
export interface Segment {
  readonly first: bigint;
  readonly last: bigint;
}

export function segmentSize(segment: Segment): bigint {
  return segment.last - segment.first + 1n;
}

/** How many candidates the segments hold (the pool's `total`). */
export function countCandidates(segments: readonly Segment[]): bigint {
  let total = 0n;
  for (const segment of segments) total += segmentSize(segment);
  return total;
}

export function containsSlot(segments: readonly Segment[], slot: bigint): boolean {
  return segments.some((segment) => segment.first <= slot && slot <= segment.last);
}

/** Whether two inclusive runs share a slot (a shared bound is an overlap). */
export function overlaps(a: Segment, b: Segment): boolean {
  return a.first <= b.last && b.first <= a.last;
}

/** The slot at a 0-based position in candidate order, or undefined past the end. */
export function slotAt(segments: readonly Segment[], ordinal: bigint): bigint | undefined {
  if (ordinal < 0n) return undefined;
  let remaining = ordinal;
  for (const segment of segments) {
    const size = segmentSize(segment);
    if (remaining < size) return segment.first + remaining;
    remaining -= size;
  }
  return undefined;
}

/** The position of a slot in candidate order, or undefined when it is not a candidate. */
export function ordinalOf(segments: readonly Segment[], slot: bigint): bigint | undefined {
  let before = 0n;
  for (const segment of segments) {
    if (segment.first <= slot && slot <= segment.last) return before + (slot - segment.first);
    before += segmentSize(segment);
  }
  return undefined;
}

/**
 * Removes excluded runs from every segment, keeping candidate order (a segment splits into its
 * ascending remainders).
 */
export function subtractSegments(segments: readonly Segment[], excluded: readonly Segment[]): Segment[] {
  const cuts = [...excluded].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  const result: Segment[] = [];
  for (const segment of segments) {
    let cursor = segment.first;
    for (const cut of cuts) {
      if (cut.last < cursor || cut.first > segment.last) continue;
      if (cut.first > cursor) result.push({ first: cursor, last: cut.first - 1n });
      cursor = cut.last + 1n;
      if (cursor > segment.last) break;
    }
    if (cursor <= segment.last) result.push({ first: cursor, last: segment.last });
  }
  return result;
}

/** Keeps the part of every segment that lies inside `within`, in candidate order. */
export function intersectSegments(segments: readonly Segment[], within: Segment): Segment[] {
  const result: Segment[] = [];
  for (const segment of segments) {
    const first = segment.first > within.first ? segment.first : within.first;
    const last = segment.last < within.last ? segment.last : within.last;
    if (first <= last) result.push({ first, last });
  }
  return result;
}

/**
 * Candidates from a position on, as runs to walk: the rest of the segment that holds `ordinal`, then
 * every later segment whole.
 */
export function* runsFrom(segments: readonly Segment[], ordinal: bigint): Generator<Segment> {
  let remaining = ordinal < 0n ? 0n : ordinal;
  for (const segment of segments) {
    const size = segmentSize(segment);
    if (remaining >= size) {
      remaining -= size;
      continue;
    }
    yield { first: segment.first + remaining, last: segment.last };
    remaining = 0n;
  }
}

/**
 * The position of the first candidate of the span that holds the candidate at `ordinal` (spans are
 * aligned runs of `span` slots, as the summaries are), within that candidate's segment; undefined past
 * the end. A search that starts there reads the span whole.
 */
export function spanStartOrdinal(
  segments: readonly Segment[],
  ordinal: bigint,
  span: bigint,
): bigint | undefined {
  let before = 0n;
  for (const segment of segments) {
    const size = segmentSize(segment);
    if (ordinal < before + size) {
      const slot = segment.first + (ordinal - before);
      const spanFirst = slot - (slot % span);
      const first = spanFirst > segment.first ? spanFirst : segment.first;
      return ordinal - (slot - first);
    }
    before += size;
  }
  return undefined;
}
