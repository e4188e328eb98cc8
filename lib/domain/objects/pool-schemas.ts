/**
 * The schemas of pools' specs and status (api.md, "Pools"), part of SCHEMAS (schemas.ts). Plain data, pure.
 */
import {
  decimal,
  prefixList,
  ref,
  QUARANTINE_SECONDS_MAX,
  RANGES_MAX,
  SHARED_HOLDERS_MAX,
  SHARED_WITH_MAX,
  type Schema,
} from './schema-parts.ts';

export const POOL_SCHEMAS = {
  ReclaimPolicy: {
    enum: ['Recycle', 'Retain'] as const,
    default: 'Recycle' as const,
    description: 'what releasing a claim does to its allocation object; immutable',
  },
  QuarantineSeconds: {
    type: 'integer',
    minimum: 0,
    maximum: QUARANTINE_SECONDS_MAX,
    default: 0,
    description:
      'Recycle pools: a freed value is held back this long before it is handed out again (not on pools of a range of prefix lengths); applies to values freed after a change',
  },
  SharedWith: {
    type: 'array',
    maxItems: SHARED_WITH_MAX,
    description:
      'the namespaces whose claims may name this pool (poolRef.namespace); an entry naming a namespace wins over "*"',
    items: {
      type: 'object',
      required: ['namespace'],
      additionalProperties: false,
      properties: {
        namespace: { type: 'string', description: 'a Name, or "*" for every namespace' },
        maxAllocations: {
          type: 'integer',
          minimum: 0,
          maximum: SHARED_HOLDERS_MAX,
          description: `the most values that namespace's claims hold at once (at most ${SHARED_HOLDERS_MAX}, the default)`,
        },
      },
    },
  },
  IndexPoolSpec: {
    type: 'object',
    required: ['ranges'],
    additionalProperties: false,
    properties: {
      ranges: {
        type: 'array',
        minItems: 1,
        maxItems: RANGES_MAX,
        description:
          'candidates in spec order; 0 ≤ a ≤ b < 2^63−1; no two ranges overlap (a shared bound is an overlap)',
        items: {
          oneOf: [
            { type: 'string', pattern: '^[0-9]+(\\.\\.[0-9]+)?$', description: '"a..b" (inclusive) or "a"' },
            { type: 'integer', minimum: 0 },
          ],
        },
      },
      reclaimPolicy: ref('ReclaimPolicy'),
      quarantineSeconds: ref('QuarantineSeconds'),
      sharedWith: ref('SharedWith'),
    },
  },
  IPAddressPoolSpec: {
    type: 'object',
    required: [],
    oneOf: [{ required: ['prefixes'] }, { required: ['prefixesFrom'] }],
    additionalProperties: false,
    properties: {
      prefixes: prefixList('one IP family, no overlaps; candidates are every address, in spec order'),
      prefixesFrom: ref('PrefixesFrom'),
      exclude: {
        type: 'array',
        maxItems: RANGES_MAX,
        items: { type: 'string', description: 'an address or a CIDR' },
        description: 'never handed out',
      },
      gateway: { type: 'string', format: 'ip', description: 'an address never handed out' },
      excludeNetworkAndBroadcast: {
        type: 'boolean',
        default: false,
        description:
          "leave out each prefix's first and last address (IPv4 up to /30; IPv6: the first only, up to /126)",
      },
      reclaimPolicy: ref('ReclaimPolicy'),
      quarantineSeconds: ref('QuarantineSeconds'),
      sharedWith: ref('SharedWith'),
    },
  },
  IPPrefixPoolSpec: {
    type: 'object',
    required: [],
    allOf: [
      { oneOf: [{ required: ['prefixes'] }, { required: ['prefixesFrom'] }] },
      { oneOf: [{ required: ['allocationPrefixLength'] }, { required: ['allocationPrefixLengths'] }] },
    ],
    additionalProperties: false,
    properties: {
      prefixes: prefixList('one IP family, no overlaps'),
      prefixesFrom: ref('PrefixesFrom'),
      allocationPrefixLength: {
        type: 'integer',
        minimum: 1,
        maximum: 128,
        description:
          'one length for every allocation; longer than every prefix; at most 32 (IPv4) or 128 (IPv6); immutable',
      },
      allocationPrefixLengths: {
        type: 'object',
        required: ['min', 'max', 'default'],
        additionalProperties: false,
        description:
          'any length from min to max (default when a claim names none); each longer than every prefix, min ≤ default ≤ max; immutable. total and free count prefixes of the max length',
        properties: {
          min: { type: 'integer', minimum: 1, maximum: 128 },
          max: { type: 'integer', minimum: 1, maximum: 128 },
          default: { type: 'integer', minimum: 1, maximum: 128 },
        },
      },
      reclaimPolicy: ref('ReclaimPolicy'),
      quarantineSeconds: ref('QuarantineSeconds'),
      sharedWith: ref('SharedWith'),
    },
  },
  PoolStatus: {
    type: 'object',
    required: ['allocated', 'total', 'free', 'conditions'],
    properties: {
      allocated: { type: 'integer', description: 'allocation objects that reference the pool' },
      total: decimal('the number of candidates, as a decimal string (a /64 holds 18446744073709551616)'),
      free: decimal('candidates not held'),
      quarantined: decimal(
        'values freed less than spec.quarantineSeconds ago: held back, neither allocated nor free',
      ),
      conditions: { type: 'array', items: ref('Condition'), description: 'Available' },
      prefixes: {
        type: 'array',
        items: { type: 'string' },
        description:
          'a pool carved from a claim (prefixesFrom): its prefixes, the claim’s value; empty until it holds one',
      },
      sharing: {
        type: 'array',
        description: 'a shared pool (spec.sharedWith), on a read of the pool: each namespace’s holdings',
        items: {
          type: 'object',
          required: ['namespace', 'allocated'],
          properties: {
            namespace: { type: 'string' },
            allocated: {
              type: 'integer',
              description: 'values that namespace’s claims hold (or are taking)',
            },
            maxAllocations: { type: 'integer' },
          },
        },
      },
    },
  },
  PrefixesFrom: {
    type: 'object',
    required: ['claimRef'],
    additionalProperties: false,
    description:
      'instead of prefixes: the value of a Claim on an IPPrefixPool of this namespace (status.prefixes shows it; until the claim holds one the pool has no candidates, Available=False/ClaimPending); immutable',
    properties: {
      claimRef: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: { name: ref('Name') },
      },
    },
  },
} satisfies Record<string, Schema>;
