/** Parts of the OpenAPI document for issue 15: a pool's preview and carved pools. */

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
