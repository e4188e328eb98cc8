/** The query parameters of a pool's preview (api.md, "Routes"), for the OpenAPI document. */
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
