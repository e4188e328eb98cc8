/** Parts of the OpenAPI document: the history of a value (`GET …/history`, api.md "The history of a value"). */

const TIME = { type: 'string', format: 'date-time' };

/** The query parameters of a pool's history (a claim's takes the window and the page only). */
export function historyParameters(claims: boolean): unknown[] {
  const window = [
    { name: 'at', in: 'query', schema: TIME, description: 'the holdings that lasted at that instant' },
    {
      name: 'since',
      in: 'query',
      schema: TIME,
      description: 'the holdings that overlap the window from then',
    },
    {
      name: 'until',
      in: 'query',
      schema: TIME,
      description: 'the holdings that overlap the window until then',
    },
    { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
    { name: 'continue', in: 'query', schema: { type: 'string' }, description: 'from the previous page' },
  ];
  if (claims) return window;
  return [
    { name: 'value', in: 'query', schema: { type: 'string' }, description: 'one value, in any valid form' },
    {
      name: 'within',
      in: 'query',
      schema: { type: 'string' },
      description:
        'a range a..b (IndexPool) or a CIDR: every holding of a value inside it (IPPrefixPool: of a prefix overlapping it), by value, each value newest first; not with value',
    },
    { name: 'claim', in: 'query', schema: { type: 'string' }, description: 'a claim’s name' },
    {
      name: 'poolNamespace',
      in: 'query',
      schema: { type: 'string' },
      description:
        'the pool’s namespace, when it is another than the path’s (a pool shared with it): the holdings of the path namespace’s claims only',
    },
    ...window,
  ];
}

const HOLDING = {
  type: 'object',
  required: ['value', 'pool', 'namespace', 'allocation', 'from'],
  properties: {
    value: { type: 'string' },
    pool: { type: 'object', properties: { kind: { type: 'string' }, name: { type: 'string' } } },
    namespace: { type: 'string', description: 'the pool’s' },
    allocation: { type: 'object', properties: { name: { type: 'string' }, uid: { type: 'string' } } },
    claim: {
      type: 'object',
      properties: { namespace: { type: 'string' }, name: { type: 'string' }, uid: { type: 'string' } },
    },
    owner: { type: 'object' },
    from: TIME,
    until: TIME,
    ended: { enum: ['Released', 'Expired', 'Bound', 'Deleted', 'PoolDeleted', 'QuarantineOver'] },
  },
};

export const HISTORY_RESPONSE = {
  description:
    'who held the values, and when, newest first (with within: by value, each newest first; until and ended absent while a holding lasts)',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['kind', 'items'],
        properties: {
          kind: { const: 'HoldingList' },
          apiVersion: { const: 'v1' },
          items: { type: 'array', items: HOLDING },
          metadata: { type: 'object', properties: { continue: { type: 'string' } } },
        },
      },
    },
  },
};
