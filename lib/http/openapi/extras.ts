/** Parts of the OpenAPI document: a pool's preview, carved pools, and the pools shared with a namespace. */

/** The query parameters of a pool's preview (api.md, "Routes"). */
export const PREVIEW_PARAMETERS: readonly unknown[] = [
  { name: 'count', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 1 } },
  {
    name: 'prefixLength',
    in: 'query',
    schema: { type: 'integer', minimum: 1, maximum: 128 },
    description: 'IPPrefixPool: as a claim’s spec.prefixLength',
  },
  { name: 'within', in: 'query', schema: { type: 'string' }, description: 'as a claim’s spec.within' },
  {
    name: 'reserved',
    in: 'query',
    schema: { type: 'string' },
    description: 'IPAddressPool: as a claim’s spec.reserved, comma-separated',
  },
];

/** The example of 409 ClaimInUse: a DELETE of a claim whose value a pool's prefixesFrom names. */
export const CLAIM_IN_USE_EXAMPLE = {
  summary: 'DELETE of a claim whose value is a pool’s prefixesFrom',
  value: {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code: 409,
    reason: 'ClaimInUse',
    message: 'Claim "vpc-a" is the prefixesFrom of IPPrefixPool "vpc-a-subnets"; delete that pool first',
    details: { kind: 'Claim', name: 'vpc-a' },
  },
};

/** The pools of other namespaces shared with the path's (`GET …/sharedpools`). */
export const SHARED_POOLS_RESPONSE = {
  description:
    'the pools of other namespaces shared with this one (their spec.sharedWith), each with this namespace’s usage and limit in status.share; nothing of other namespaces’ claims',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['kind', 'items'],
        properties: {
          kind: { const: 'SharedPoolList' },
          apiVersion: { const: 'v1' },
          items: {
            type: 'array',
            items: {
              type: 'object',
              required: ['kind', 'metadata', 'spec', 'status'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { enum: ['IndexPool', 'IPAddressPool', 'IPPrefixPool'] },
                metadata: { $ref: '#/components/schemas/ObjectMeta' },
                spec: { type: 'object', description: 'the pool’s spec, without sharedWith' },
                status: {
                  type: 'object',
                  description: 'total, free and conditions as the pool’s; share: this namespace’s holdings',
                  properties: {
                    share: {
                      type: 'object',
                      required: ['namespace', 'allocated'],
                      properties: {
                        namespace: { type: 'string' },
                        allocated: { type: 'integer' },
                        maxAllocations: { type: 'integer' },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};
