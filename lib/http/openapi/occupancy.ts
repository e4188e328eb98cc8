/** The OpenAPI pieces of the occupancy route (`GET …/{pool resource}/{name}/occupancy`): plain data. */
import { DEFAULT_BUCKETS, MAX_BUCKETS } from '../../domain/search/occupancy.ts';

const decimal = (description: string) => ({ type: 'string', pattern: '^[0-9]+$', description });

export const OCCUPANCY_SCHEMAS: Record<string, unknown> = {
  Occupancy: {
    type: 'object',
    description:
      'How much of a pool is held, bucket by bucket, counted from the group summaries the stream function keeps ' +
      '(as fresh as a claim’s own read of them); the cost grows with the buckets, not with the pool.',
    required: ['kind', 'apiVersion', 'pool', 'exact', 'bucketSize', 'buckets'],
    properties: {
      kind: { const: 'Occupancy' },
      apiVersion: { type: 'string' },
      pool: {
        type: 'object',
        properties: { kind: { type: 'string' }, name: { type: 'string' } },
      },
      within: { type: 'string', description: 'the span drawn, as a CIDR (IP pools) or a range "a..b"' },
      first: { type: 'string', description: 'the span’s first value' },
      last: { type: 'string', description: 'the span’s last value' },
      bucketSize: decimal(
        'values per bucket (a power of two for IP pools, so each bucket is a CIDR); "0" for a pool with no candidates',
      ),
      exact: { type: 'boolean', description: 'false when some bucket is estimated' },
      buckets: { type: 'array', items: { $ref: '#/components/schemas/OccupancyBucket' } },
    },
  },
  OccupancyBucket: {
    type: 'object',
    required: ['first', 'last', 'within', 'values', 'size', 'held'],
    properties: {
      first: { type: 'string' },
      last: { type: 'string' },
      within: {
        type: 'string',
        description: 'the bucket as a claim’s `within` takes it (and as this route’s `within` draws it)',
      },
      values: decimal('values in the bucket'),
      size: decimal('candidates in the bucket: excluded addresses and gaps between ranges are not'),
      held: decimal('values held by an allocation object, a name hold or a quarantine'),
      quarantined: decimal(
        'of held, the values freed less than the pool’s quarantineSeconds ago (absent when none)',
      ),
      approximate: {
        type: 'boolean',
        description:
          'held is estimated from the first and last few groups of 4096 values that ever held a value ' +
          '(only when the span has more such groups than there are buckets)',
      },
    },
  },
};

export const OCCUPANCY_PARAMETERS: readonly unknown[] = [
  {
    name: 'buckets',
    in: 'query',
    schema: { type: 'integer', minimum: 1, maximum: MAX_BUCKETS, default: DEFAULT_BUCKETS },
    description: 'at most this many buckets (IP pools: rounded down to a power of two)',
  },
  {
    name: 'within',
    in: 'query',
    schema: { type: 'string' },
    description: 'the span to draw: a CIDR (IP pools) or "a..b" (IndexPool); default: the whole pool',
  },
];

export const OCCUPANCY_RESPONSE = {
  description: 'held values per bucket of the pool’s span',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Occupancy' } } },
};
