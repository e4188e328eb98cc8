/**
 * The records the stream function needs, as Lambda event-filter patterns. The CDK construct passes these
 * to the event source mapping's FilterCriteria; the local stream emulation applies the same patterns with
 * `matchesFilter`. Plain data.
 *
 * - pools, allocation objects, name holds and quarantines: every insert and change (counts, hints,
 *   binding, waiting claims; a hold whose request died is repaired);
 * - pools, allocation objects, claims, name holds and quarantines: every removal (reclaim policy, counts,
 *   cascade; a quarantine's end frees its value);
 * - claims that still need a value (a handler died while allocating, or the claim waits);
 * - claims that just got a value (for the `Claim Allocated` event, lib/domain/events.ts): the old image is
 *   matched too, so a later change to an allocated claim (labels) does not wake the function.
 */
export type FilterPattern = Record<string, unknown>;

export const STREAM_FILTER_PATTERNS: readonly FilterPattern[] = [
  { dynamodb: { NewImage: { t: { S: ['pool', 'alloc', 'hold', 'quarantine'] } } } },
  {
    eventName: ['REMOVE'],
    dynamodb: { OldImage: { t: { S: ['pool', 'alloc', 'claim', 'hold', 'quarantine'] } } },
  },
  { dynamodb: { NewImage: { t: { S: ['claim'] }, phase: { S: ['Allocating', 'Waiting'] } } } },
  {
    dynamodb: {
      NewImage: { t: { S: ['claim'] }, phase: { S: ['Allocated'] } },
      OldImage: { phase: { S: ['Allocating', 'Waiting'] } },
    },
  },
];

/**
 * The records the history function needs (lib/service/history/changes.ts), for its own event source mapping:
 * every change of a pool, a claim or an allocation object, whatever it was before or became; and of a
 * quarantine (a freed value held back), a holding of its own (service/history/holdings.ts).
 */
export const HISTORY_FILTER_PATTERNS: readonly FilterPattern[] = [
  { dynamodb: { NewImage: { t: { S: ['pool', 'claim', 'alloc', 'quarantine'] } } } },
  { dynamodb: { OldImage: { t: { S: ['pool', 'claim', 'alloc', 'quarantine'] } } } },
];

/**
 * Whether a record matches a pattern, for the subset of the event-pattern syntax that Lambda's filters
 * and EventBridge's rules share and that Allot uses (here and in `requests.ts`): nested objects, and
 * arrays of allowed literal values or `{ "anything-but": value | [values] }`.
 */
export function matchesPattern(record: unknown, pattern: FilterPattern): boolean {
  return Object.entries(pattern).every(([field, expected]) => {
    const actual = (record as Record<string, unknown> | undefined)?.[field];
    if (Array.isArray(expected)) return expected.some((allowed) => matchesValue(actual, allowed));
    if (typeof expected === 'object' && expected !== null) {
      return matchesPattern(actual, expected as FilterPattern);
    }
    return false;
  });
}

function matchesValue(actual: unknown, allowed: unknown): boolean {
  if (typeof allowed === 'object' && allowed !== null && 'anything-but' in allowed) {
    // EventBridge: anything-but matches a present value that is none of those named.
    const refused = (allowed as Record<string, unknown>)['anything-but'];
    const values = Array.isArray(refused) ? refused : [refused];
    return actual !== undefined && actual !== null && !values.includes(actual);
  }
  return actual === allowed;
}

export function matchesFilter(record: unknown, patterns: readonly FilterPattern[] = STREAM_FILTER_PATTERNS) {
  return patterns.some((pattern) => matchesPattern(record, pattern));
}
