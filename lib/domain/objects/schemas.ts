/**
 * The schemas of every object, as JSON Schema (2020-12, the dialect of OpenAPI 3.1): the one source
 * of truth for the request checks in validation.ts (field lists, required fields, enums, limits) and for
 * the OpenAPI document (openapi.ts). What a schema cannot say (a range's bounds, overlaps, address
 * families) is checked by ranges.ts and ip.ts and described here in words. Plain data, pure.
 */
import { API_VERSION, type ObjectKind } from '../kinds.ts';

import { POOL_SCHEMAS } from './pool-schemas.ts';
import {
  ref,
  refString,
  timestamp,
  STATUS_REASONS,
  NAME_MAX,
  NAME_PATTERN,
  MAP_MAX_ENTRIES,
  MAP_KEY_MAX,
  MAP_VALUE_MAX,
  LAST_APPLIED_ANNOTATION,
  LAST_APPLIED_MAX,
  REF_STRING_MAX,
  RESERVED_MAX,
  WITHIN_MAX,
  LEASE_SECONDS_MIN,
  LEASE_SECONDS_MAX,
  type Schema,
} from './schema-parts.ts';

export * from './schema-parts.ts';

function objectSchema(kind: ObjectKind, spec: string, status: string, description: string): Schema {
  return {
    type: 'object',
    description,
    required: ['metadata', 'spec'],
    properties: {
      apiVersion: { const: API_VERSION, description: 'optional on input; always present on output' },
      kind: { const: kind, description: 'optional on input; must match the path when given' },
      metadata: ref('ObjectMeta'),
      spec: ref(spec),
      status: { ...ref(status), readOnly: true, description: 'set by the server; ignored on input' },
    },
  };
}

function listSchema(kind: ObjectKind): Schema {
  return {
    type: 'object',
    required: ['items', 'metadata'],
    properties: {
      items: { type: 'array', items: ref(kind) },
      metadata: {
        type: 'object',
        properties: {
          continue: {
            type: 'string',
            description: 'pass as ?continue= for the next page; absent on the last',
          },
        },
      },
    },
  };
}

/** Every schema, by component name. */
export const SCHEMAS = {
  ...POOL_SCHEMAS,
  Name: {
    type: 'string',
    minLength: 1,
    maxLength: NAME_MAX,
    pattern: NAME_PATTERN,
    description: 'lowercase letters, digits, "-" and ".", starting and ending with a letter or digit',
  },
  AllocationName: {
    type: 'string',
    minLength: 1,
    maxLength: 253,
    pattern: NAME_PATTERN,
    description: 'as Name, up to 253 characters; the server names what it creates <pool>-<value>',
  },
  StringMap: {
    type: 'object',
    maxProperties: MAP_MAX_ENTRIES,
    propertyNames: { minLength: 1, maxLength: MAP_KEY_MAX },
    additionalProperties: { type: 'string', maxLength: MAP_VALUE_MAX },
  },
  Annotations: {
    type: 'object',
    maxProperties: MAP_MAX_ENTRIES,
    propertyNames: { minLength: 1, maxLength: MAP_KEY_MAX },
    properties: {
      [LAST_APPLIED_ANNOTATION]: {
        type: 'string',
        maxLength: LAST_APPLIED_MAX,
        description: 'kubectl apply’s copy of the manifest it applied; kept like any annotation',
      },
    },
    additionalProperties: { type: 'string', maxLength: MAP_VALUE_MAX },
  },
  ObjectMeta: {
    type: 'object',
    description: 'name is required on POST; uid, generation and creationTimestamp are set by the server',
    properties: {
      name: { type: 'string', maxLength: 253, description: 'a Name (allocation objects: an AllocationName)' },
      namespace: { ...ref('Name'), description: 'must match the path when given' },
      uid: { type: 'string', readOnly: true },
      generation: { type: 'integer', readOnly: true },
      creationTimestamp: timestamp,
      labels: ref('StringMap'),
      annotations: ref('Annotations'),
    },
  },
  Condition: {
    type: 'object',
    required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
    properties: {
      type: { type: 'string', enum: ['Available', 'Allocated', 'Valid'] },
      status: { enum: ['True', 'False', 'Unknown'] },
      reason: { type: 'string' },
      message: { type: 'string' },
      lastTransitionTime: timestamp,
    },
  },
  PoolRef: {
    type: 'object',
    required: ['kind', 'name'],
    additionalProperties: false,
    properties: {
      kind: { type: 'string', enum: ['IndexPool', 'IPAddressPool', 'IPPrefixPool'] },
      name: ref('Name'),
      apiVersion: { type: 'string', const: API_VERSION },
    },
  },
  ClaimPoolRef: {
    type: 'object',
    required: ['kind', 'name'],
    additionalProperties: false,
    properties: {
      kind: { type: 'string', enum: ['IndexPool', 'IPAddressPool', 'IPPrefixPool'] },
      name: ref('Name'),
      apiVersion: { type: 'string', const: API_VERSION },
      namespace: {
        ...ref('Name'),
        description:
          'a pool of another namespace that shares itself with this one (spec.sharedWith); absent: this namespace',
      },
    },
  },
  ClaimRef: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: {
      name: ref('Name'),
      uid: { type: 'string', maxLength: REF_STRING_MAX, description: '"" or absent: not bound yet' },
      namespace: {
        ...ref('Name'),
        description: 'a claim of another namespace (a shared pool); absent: this one',
      },
    },
  },
  OwnerRef: {
    type: 'object',
    required: ['kind', 'name'],
    additionalProperties: false,
    description: 'who uses the value; copied from the claim to its allocation object',
    properties: { kind: refString, name: refString, uid: refString, apiVersion: refString },
  },
  ClaimSpec: {
    type: 'object',
    required: ['poolRef'],
    additionalProperties: false,
    properties: {
      poolRef: { ...ref('ClaimPoolRef'), description: 'immutable' },
      value: {
        oneOf: [{ type: 'string' }, { type: 'integer' }],
        description: 'ask for this exact value instead of the next free one',
      },
      within: {
        type: 'string',
        maxLength: WITHIN_MAX,
        description: 'a range "a..b" (IndexPool) or a CIDR (IP pools) the value must lie in',
      },
      reserved: {
        type: 'array',
        maxItems: RESERVED_MAX,
        items: { type: 'string' },
        description: 'IPAddressPool only: addresses this claim must not get',
      },
      prefixLength: {
        type: 'integer',
        minimum: 1,
        maximum: 128,
        description:
          "IPPrefixPool only: the length to allocate, within the pool's allocationPrefixLengths (or its allocationPrefixLength); immutable while a value is held",
      },
      owner: ref('OwnerRef'),
      leaseSeconds: {
        type: 'integer',
        minimum: LEASE_SECONDS_MIN,
        maximum: LEASE_SECONDS_MAX,
        description:
          'the claim is a lease: it ends this many seconds after it was made or last renewed (POST …/renew), unless renewed',
      },
    },
  },
  ClaimStatus: {
    type: 'object',
    required: ['conditions'],
    properties: {
      value: { type: 'string', description: 'the held value, canonical; absent while none is held' },
      leaseExpiresAt: {
        type: 'string',
        format: 'date-time',
        description: 'leases only: when the lease ends (RFC 3339, UTC)',
      },
      allocationRef: {
        type: 'object',
        required: ['apiVersion', 'kind', 'name'],
        properties: {
          apiVersion: { const: API_VERSION },
          kind: { enum: ['Index', 'IPAddress', 'IPPrefix'] },
          name: ref('AllocationName'),
          namespace: {
            ...ref('Name'),
            description: 'a shared pool’s: the object is in the pool’s namespace',
          },
        },
      },
      conditions: {
        type: 'array',
        items: ref('Condition'),
        description:
          'Allocated: True/Allocated, False/PoolNotFound, False/PoolExhausted, False/ValueTaken, False/ValueQuarantined, False/QuotaExceeded, False/PoolRefInvalid',
      },
    },
  },
  IndexSpec: allocationSpec('IndexPool', 'index', { type: 'integer', minimum: 0 }),
  IPAddressSpec: allocationSpec('IPAddressPool', 'address', { type: 'string', format: 'ip' }),
  IPPrefixSpec: allocationSpec('IPPrefixPool', 'prefix', { type: 'string', format: 'cidr' }),
  AllocationStatus: {
    type: 'object',
    required: ['conditions'],
    properties: {
      conditions: {
        type: 'array',
        items: ref('Condition'),
        description: 'Valid: True/ValueInRange, False/ValueOutOfRange, False/PoolNotFound',
      },
    },
  },
  IndexPool: objectSchema('IndexPool', 'IndexPoolSpec', 'PoolStatus', 'integers: ASNs, VLAN IDs, VNIs, …'),
  IPAddressPool: objectSchema('IPAddressPool', 'IPAddressPoolSpec', 'PoolStatus', 'single IP addresses'),
  IPPrefixPool: objectSchema('IPPrefixPool', 'IPPrefixPoolSpec', 'PoolStatus', 'IP prefixes of one length'),
  Claim: objectSchema(
    'Claim',
    'ClaimSpec',
    'ClaimStatus',
    'asks a pool for a value; allocates before it answers',
  ),
  Index: objectSchema('Index', 'IndexSpec', 'AllocationStatus', 'an integer held in an IndexPool'),
  IPAddress: objectSchema(
    'IPAddress',
    'IPAddressSpec',
    'AllocationStatus',
    'an address held in an IPAddressPool',
  ),
  IPPrefix: objectSchema('IPPrefix', 'IPPrefixSpec', 'AllocationStatus', 'a prefix held in an IPPrefixPool'),
  IndexPoolList: listSchema('IndexPool'),
  IPAddressPoolList: listSchema('IPAddressPool'),
  IPPrefixPoolList: listSchema('IPPrefixPool'),
  ClaimList: listSchema('Claim'),
  IndexList: listSchema('Index'),
  IPAddressList: listSchema('IPAddress'),
  IPPrefixList: listSchema('IPPrefix'),
  Status: {
    type: 'object',
    description: 'every error (api.md, "Errors")',
    required: ['kind', 'apiVersion', 'status', 'code', 'reason', 'message'],
    properties: {
      kind: { const: 'Status' },
      apiVersion: { const: 'v1' },
      status: { const: 'Failure' },
      code: { type: 'integer', minimum: 400, maximum: 599 },
      reason: { enum: STATUS_REASONS },
      message: { type: 'string' },
      details: {
        type: 'object',
        properties: {
          kind: { type: 'string' },
          name: { type: 'string' },
          causes: {
            type: 'array',
            items: {
              type: 'object',
              required: ['field', 'message'],
              properties: { field: { type: 'string' }, message: { type: 'string' } },
            },
          },
        },
      },
    },
  },
  Health: {
    type: 'object',
    required: ['status'],
    properties: { status: { const: 'ok' } },
  },
  Preview: {
    type: 'object',
    required: ['kind', 'values'],
    properties: {
      kind: { const: 'Preview' },
      values: {
        type: 'array',
        maxItems: 100,
        items: { type: 'string' },
        description:
          'the values, in order, that claims made now by one caller would get; nothing is held (fewer when fewer are free)',
      },
    },
  },
} satisfies Record<string, Schema>;

export type SchemaName = keyof typeof SCHEMAS;

function allocationSpec(poolKind: string, valueField: string, value: Schema): Schema {
  return {
    type: 'object',
    required: ['poolRef', valueField],
    additionalProperties: false,
    properties: {
      poolRef: { ...ref('PoolRef'), description: `immutable; kind ${poolKind}` },
      [valueField]: { ...value, description: 'the value; immutable; stored canonically' },
      claimRef: ref('ClaimRef'),
      owner: ref('OwnerRef'),
    },
  };
}

/** The spec schema of each kind. */
export const SPEC_SCHEMAS: Record<ObjectKind, SchemaName> = {
  IndexPool: 'IndexPoolSpec',
  IPAddressPool: 'IPAddressPoolSpec',
  IPPrefixPool: 'IPPrefixPoolSpec',
  Claim: 'ClaimSpec',
  Index: 'IndexSpec',
  IPAddress: 'IPAddressSpec',
  IPPrefix: 'IPPrefixSpec',
};

/** The fields a schema defines: what request checks accept, everything else is refused. */
export function fieldsOf(name: SchemaName): readonly string[] {
  return Object.keys((SCHEMAS[name] as Schema).properties ?? {});
}

/** The fields a kind's spec defines. */
export function specFields(kind: ObjectKind): readonly string[] {
  return fieldsOf(SPEC_SCHEMAS[kind]);
}

function resolve(schema: Schema): Schema {
  if (schema.$ref === undefined) return schema;
  const target = SCHEMAS[schema.$ref.replace('#/components/schemas/', '') as SchemaName] as Schema;
  if (!target) throw new Error(`unknown schema ${schema.$ref}`);
  const { $ref: _ref, ...rest } = schema;
  return { ...resolve(target), ...rest };
}

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Where `value` breaks `schema`, as `{ field, message }` (the JSON Schema keywords this file uses; formats
 * are left to ranges.ts and ip.ts). Used to check the document's examples against their schemas.
 */
export function schemaProblems(
  schema: Schema,
  value: unknown,
  field = '',
): { field: string; message: string }[] {
  const s = resolve(schema);
  const at = field || '(root)';
  const problems: { field: string; message: string }[] = [];
  const fail = (message: string) => problems.push({ field: at, message });
  if (s.oneOf) {
    const matching = s.oneOf.filter((option) => schemaProblems(option, value, field).length === 0);
    if (matching.length !== 1) fail(`must match exactly one of ${s.oneOf.length} forms`);
  }
  if (s.const !== undefined && value !== s.const) fail(`must be ${JSON.stringify(s.const)}`);
  if (s.enum && !s.enum.includes(value as string)) fail(`must be one of ${s.enum.join(', ')}`);
  if (s.type !== undefined && typeOf(value) !== s.type) {
    fail(`must be of type ${s.type}`);
    return problems;
  }
  if (typeof value === 'string') {
    if (s.minLength !== undefined && value.length < s.minLength) fail(`is shorter than ${s.minLength}`);
    if (s.maxLength !== undefined && value.length > s.maxLength) fail(`is longer than ${s.maxLength}`);
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(value)) fail(`must match ${s.pattern}`);
  }
  if (typeof value === 'number') {
    if (s.minimum !== undefined && value < s.minimum) fail(`must be at least ${s.minimum}`);
    if (s.maximum !== undefined && value > s.maximum) fail(`must be at most ${s.maximum}`);
  }
  if (Array.isArray(value)) {
    if (s.minItems !== undefined && value.length < s.minItems) fail(`needs at least ${s.minItems} items`);
    if (s.maxItems !== undefined && value.length > s.maxItems) fail(`allows at most ${s.maxItems} items`);
    if (s.items)
      value.forEach((item, i) => problems.push(...schemaProblems(s.items!, item, `${field}[${i}]`)));
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const entries = Object.entries(value);
    const child = (key: string) => (field ? `${field}.${key}` : key);
    if (s.maxProperties !== undefined && entries.length > s.maxProperties)
      fail(`allows at most ${s.maxProperties} entries`);
    for (const key of s.required ?? [])
      if (!(key in value)) problems.push({ field: child(key), message: 'is required' });
    for (const [key, entry] of entries) {
      if (s.propertyNames) problems.push(...schemaProblems(s.propertyNames, key, `${child(key)} (key)`));
      const property = s.properties?.[key];
      if (property) problems.push(...schemaProblems(property, entry, child(key)));
      else if (s.additionalProperties === false)
        problems.push({ field: child(key), message: 'is not a field' });
      else if (typeof s.additionalProperties === 'object')
        problems.push(...schemaProblems(s.additionalProperties, entry, child(key)));
    }
  }
  return problems;
}
