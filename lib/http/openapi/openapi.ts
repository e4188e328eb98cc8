/**
 * The OpenAPI 3.1 document of the API: its paths come from the route table (so it lists exactly the
 * routes served) and its schemas from schemas.ts (the ones request checks use). Examples are the seed
 * documents' manifests and those of docs/api.md; a test sends each request example to the server.
 */
import { HISTORY_RESPONSE, historyParameters } from './history.ts';
import {
  API_VERSION,
  kindOfResource,
  poolInfoByAllocationResource,
  type ObjectKind,
} from '../../domain/kinds.ts';
import { ROUTES, type Route, type V1OperationName } from '../routes.ts';
import { ERRORS, SUCCESS } from './statuses.ts';
import { OCCUPANCY_PARAMETERS, OCCUPANCY_RESPONSE, OCCUPANCY_SCHEMAS } from './occupancy.ts';
import { CLAIM_IN_USE_EXAMPLE, PREVIEW_PARAMETERS } from './extras.ts';
import { EXPIRED_EXAMPLE, LIST_QUERY_PARAMETERS } from './watch.ts';
import { SCHEMAS, type Schema } from '../../domain/objects/schemas.ts';
import { REPAIR_DRY_RUN, REPAIR_REPORT_SCHEMA, REPAIR_RESPONSE } from './repair.ts';
import { SHARED_POOLS_RESPONSE } from './extras.ts';

type Example = { summary: string; value: Record<string, unknown> };

const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, ...extra });
const object = (kind: ObjectKind, metadata: Record<string, unknown>, spec: Record<string, unknown>) => ({
  apiVersion: API_VERSION,
  kind,
  metadata,
  spec,
});
const outMeta = (name: string, uid: string, extra: Record<string, unknown> = {}) => ({
  name,
  namespace: 'default',
  uid,
  generation: 1,
  creationTimestamp: '2026-11-29T11:01:50Z',
  labels: {},
  annotations: {},
  ...extra,
});
const at = '2026-11-29T11:01:50Z';

/**
 * Request examples by kind, in an order that works when sent one after another (pools first): the
 * seed documents' manifests unchanged, then those of docs/api.md.
 */
export const REQUEST_EXAMPLES: Record<ObjectKind, Record<string, Example>> = {
  IndexPool: {
    'asn-pool': {
      summary: 'the seed document’s private-use ASNs (RFC 6996)',
      value: object('IndexPool', meta('asn-pool'), { ranges: ['64512..65534', '4200000000..4294967294'] }),
    },
    vlans: {
      summary: 'VLAN IDs that stay with their claim’s name (Retain)',
      value: object('IndexPool', meta('vlans'), { ranges: ['100..199', 4000], reclaimPolicy: 'Retain' }),
    },
  },
  IPAddressPool: {
    'public-zone-a': {
      summary: 'public addresses: gateway, excludes, network and broadcast are never handed out',
      value: object('IPAddressPool', meta('public-zone-a'), {
        prefixes: ['203.0.113.0/24'],
        gateway: '203.0.113.1',
        exclude: ['203.0.113.2', '203.0.113.3'],
        excludeNetworkAndBroadcast: true,
      }),
    },
    'vpc-main': {
      summary: 'a VPC’s private range',
      value: object('IPAddressPool', meta('vpc-main'), {
        prefixes: ['10.42.0.0/16'],
        excludeNetworkAndBroadcast: true,
      }),
    },
  },
  IPPrefixPool: {
    'v6-subnets': {
      summary: 'an IPv6 /48 handed out as /64s',
      value: object('IPPrefixPool', meta('v6-subnets'), {
        prefixes: ['2001:db8::/48'],
        allocationPrefixLength: 64,
      }),
    },
  },
  Index: {
    'asn-pool-65001': {
      summary: 'the seed document’s pre-provisioned ASN, waiting for claim leaf2-asn',
      value: object(
        'Index',
        meta('asn-pool-65001', {
          annotations: { 'pool.networking.metal.ironcore.dev/allow-binding': 'true' },
        }),
        {
          poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: 'asn-pool' },
          index: 65001,
          claimRef: { name: 'leaf2-asn' },
        },
      ),
    },
  },
  IPAddress: {
    'vpc-main-10-42-1-7': {
      summary: 'an address kept for a VM before it exists',
      value: object('IPAddress', meta('vpc-main-10-42-1-7'), {
        poolRef: { kind: 'IPAddressPool', name: 'vpc-main' },
        address: '10.42.1.7',
        owner: { kind: 'VirtualMachine', name: 'web-01/0' },
      }),
    },
  },
  IPPrefix: {
    'v6-subnets-2001-0db8-0000-0009-0000-0000-0000-0000-64': {
      summary: 'a /64 set aside: its name is the pool and the prefix, in full',
      value: object('IPPrefix', meta('v6-subnets-2001-0db8-0000-0009-0000-0000-0000-0000-64'), {
        poolRef: { kind: 'IPPrefixPool', name: 'v6-subnets' },
        prefix: '2001:db8:0:9::/64',
      }),
    },
  },
  Claim: {
    'leaf1-asn': {
      summary: 'the seed document’s claim: the next free ASN',
      value: object('Claim', meta('leaf1-asn'), { poolRef: { kind: 'IndexPool', name: 'asn-pool' } }),
    },
    'web-01-nic0': {
      summary: 'an address inside a subnet, not its gateway',
      value: object('Claim', meta('web-01-nic0'), {
        poolRef: { kind: 'IPAddressPool', name: 'vpc-main' },
        within: '10.42.1.0/24',
        reserved: ['10.42.1.1'],
        owner: { kind: 'VirtualMachine', name: 'web-01/0' },
      }),
    },
    'rack7-subnet': {
      summary: 'the next free /64',
      value: object('Claim', meta('rack7-subnet'), { poolRef: { kind: 'IPPrefixPool', name: 'v6-subnets' } }),
    },
    'tor9-vlan': {
      summary: 'an exact value',
      value: object('Claim', meta('tor9-vlan'), {
        poolRef: { kind: 'IndexPool', name: 'vlans' },
        value: 4000,
      }),
    },
  },
};

/** One answer per kind, as the server writes it (docs/api.md, "Try it with curl"). */
export const RESPONSE_EXAMPLES: Record<ObjectKind, Example> = {
  IndexPool: {
    summary: 'a pool with one allocation',
    value: {
      ...object('IndexPool', outMeta('asn-pool', 'b6f3c0a2-8f3e-4c61-9d51-6f1f1f3a2b10'), {
        ranges: ['64512..65534', '4200000000..4294967294'],
        reclaimPolicy: 'Recycle',
      }),
      status: {
        allocated: 1,
        total: '94968318',
        free: '94968317',
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'HasCapacity',
            message: '94968317 of 94968318 candidates are free',
            lastTransitionTime: at,
          },
        ],
      },
    },
  },
  IPAddressPool: {
    summary: 'PiVirt’s public pool: 251 candidates',
    value: {
      ...object('IPAddressPool', outMeta('public-zone-a', '0c1d6d9e-4d8b-4f55-a2f4-3b8f0a1c9e21'), {
        prefixes: ['203.0.113.0/24'],
        gateway: '203.0.113.1',
        exclude: ['203.0.113.2', '203.0.113.3'],
        excludeNetworkAndBroadcast: true,
        reclaimPolicy: 'Recycle',
      }),
      status: {
        allocated: 0,
        total: '251',
        free: '251',
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'HasCapacity',
            message: '251 of 251 candidates are free',
            lastTransitionTime: at,
          },
        ],
      },
    },
  },
  IPPrefixPool: {
    summary: '65536 /64s',
    value: {
      ...object('IPPrefixPool', outMeta('v6-subnets', '5b7e2f10-1c3d-4e5f-8a9b-0c1d2e3f4a5b'), {
        prefixes: ['2001:db8::/48'],
        allocationPrefixLength: 64,
        reclaimPolicy: 'Recycle',
      }),
      status: {
        allocated: 0,
        total: '65536',
        free: '65536',
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'HasCapacity',
            message: '65536 of 65536 candidates are free',
            lastTransitionTime: at,
          },
        ],
      },
    },
  },
  Claim: {
    summary: 'a claim answers with its value already allocated',
    value: {
      ...object('Claim', outMeta('leaf1-asn', '4800789a-eb6d-4ab7-ade2-e938ff843b6c'), {
        poolRef: { kind: 'IndexPool', name: 'asn-pool' },
      }),
      status: {
        value: '64512',
        allocationRef: { apiVersion: API_VERSION, kind: 'Index', name: 'asn-pool-64512' },
        conditions: [
          {
            type: 'Allocated',
            status: 'True',
            reason: 'Allocated',
            message: 'holds 64512 of IndexPool asn-pool',
            lastTransitionTime: at,
          },
        ],
      },
    },
  },
  Index: {
    summary: 'the allocation object of leaf1-asn',
    value: {
      ...object('Index', outMeta('asn-pool-64512', '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d'), {
        poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: 'asn-pool' },
        index: 64512,
        claimRef: { name: 'leaf1-asn', uid: '4800789a-eb6d-4ab7-ade2-e938ff843b6c' },
      }),
      status: {
        conditions: [
          {
            type: 'Valid',
            status: 'True',
            reason: 'ValueInRange',
            message: '64512 is a candidate of asn-pool',
            lastTransitionTime: at,
          },
        ],
      },
    },
  },
  IPAddress: {
    summary: 'an address held by a claim',
    value: {
      ...object('IPAddress', outMeta('vpc-main-10-42-1-2', '1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9'), {
        poolRef: { apiVersion: API_VERSION, kind: 'IPAddressPool', name: 'vpc-main' },
        address: '10.42.1.2',
        claimRef: { name: 'web-01-nic0', uid: '6c5d4e3f-2a1b-4c0d-9e8f-7a6b5c4d3e2f' },
        owner: { kind: 'VirtualMachine', name: 'web-01/0' },
      }),
      status: {
        conditions: [
          {
            type: 'Valid',
            status: 'True',
            reason: 'ValueInRange',
            message: '10.42.1.2 is a candidate of vpc-main',
            lastTransitionTime: at,
          },
        ],
      },
    },
  },
  IPPrefix: {
    summary: 'a /64 held by a claim',
    value: {
      ...object(
        'IPPrefix',
        outMeta(
          'v6-subnets-2001-0db8-0000-0000-0000-0000-0000-0000-64',
          '2a3b4c5d-6e7f-4801-9a2b-3c4d5e6f7a8b',
        ),
        {
          poolRef: { apiVersion: API_VERSION, kind: 'IPPrefixPool', name: 'v6-subnets' },
          prefix: '2001:db8::/64',
          claimRef: { name: 'rack7-subnet', uid: '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d0e' },
        },
      ),
      status: {
        conditions: [
          {
            type: 'Valid',
            status: 'True',
            reason: 'ValueInRange',
            message: '2001:db8::/64 is a candidate of v6-subnets',
            lastTransitionTime: at,
          },
        ],
      },
    },
  },
};

const status = (code: number, reason: string, message: string, details?: Record<string, unknown>) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
  ...(details ? { details } : {}),
});

/** One example per error the API answers with (api.md, "Errors"). */
export const ERROR_EXAMPLES: Record<string, Example> = {
  BadRequest: {
    summary: 'a body that is not JSON, or a malformed query parameter',
    value: status(400, 'BadRequest', 'limit must be an integer from 1 to 1000'),
  },
  NotFound: {
    summary: 'no such object, namespace path or route',
    value: status(404, 'NotFound', 'Claim "leaf9-asn" not found', { kind: 'Claim', name: 'leaf9-asn' }),
  },
  MethodNotAllowed: {
    summary: 'a method not served on the path',
    value: status(
      405,
      'MethodNotAllowed',
      'PATCH is not served on /v1/namespaces/default/claims/leaf1-asn; use GET, PUT, DELETE',
    ),
  },
  AlreadyExists: {
    summary: 'POST of a name that exists, or a second allocation object for a value',
    value: status(409, 'AlreadyExists', 'IndexPool "asn-pool" already exists', {
      kind: 'IndexPool',
      name: 'asn-pool',
    }),
  },
  PoolInUse: {
    summary: 'DELETE of a pool with allocations, without ?cascade=true',
    value: status(
      409,
      'PoolInUse',
      'IndexPool "asn-pool" still has allocation objects; release its claims, or delete with ?cascade=true',
      {
        kind: 'IndexPool',
        name: 'asn-pool',
      },
    ),
  },
  ClaimInUse: CLAIM_IN_USE_EXAMPLE,
  Conflict: {
    summary: 'renew of a claim without a lease',
    value: status(409, 'Conflict', 'Claim "leaf1-asn" has no lease (spec.leaseSeconds) to renew', {
      kind: 'Claim',
      name: 'leaf1-asn',
    }),
  },
  Expired: EXPIRED_EXAMPLE,
  RequestEntityTooLarge: {
    summary: 'a body over 64 KiB',
    value: status(413, 'RequestEntityTooLarge', 'the body is over 65536 bytes'),
  },
  NotAcceptable: {
    summary: 'a GET whose Accept header lists only a Table, of a route that has none (a preview, a map)',
    value: status(
      406,
      'NotAcceptable',
      'GET …/preview answers application/json, not a Table; add application/json to the Accept header',
    ),
  },
  UnsupportedMediaType: {
    summary: 'a body that is not application/json',
    value: status(
      415,
      'UnsupportedMediaType',
      'content type text/plain is not supported; send application/json',
    ),
  },
  Invalid: {
    summary: 'a field fails validation; details.causes names each failing field',
    value: status(422, 'Invalid', 'spec.ranges[1] (150..250) overlaps with spec.ranges[0] (100..200)', {
      kind: 'IndexPool',
      name: 'bad',
      causes: [
        {
          field: 'spec.ranges[1]',
          message: 'spec.ranges[1] (150..250) overlaps with spec.ranges[0] (100..200)',
        },
      ],
    }),
  },
  InternalError: {
    summary: 'never for bad input; the message does not leak internals',
    value: status(500, 'InternalError', 'internal error: the request was not completed; it is safe to retry'),
  },
};

const schemaRef = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const exampleRef = (name: string) => ({ $ref: `#/components/examples/${name}` });
const json = (schema: unknown, examples?: Record<string, unknown>) => ({
  'application/json': { schema, ...(examples ? { examples } : {}) },
});

function errorResponses(route: Route): Record<string, unknown> {
  const reasons = [...ERRORS[route.operation as V1OperationName]];
  if (route.operation === 'delete' && route.resource?.endsWith('pools'))
    reasons.push('BadRequest', 'PoolInUse');
  if (route.resource) reasons.push('MethodNotAllowed');
  const byCode = new Map<number, string[]>();
  for (const reason of reasons) {
    const code = ERROR_EXAMPLES[reason]!.value.code as number;
    byCode.set(code, [...(byCode.get(code) ?? []), reason]);
  }
  const responses: Record<string, unknown> = {};
  for (const [code, list] of [...byCode].sort(([a], [b]) => a - b)) {
    responses[code] = {
      description: list.join(' or '),
      content: json(schemaRef('Status'), Object.fromEntries(list.map((r) => [r, exampleRef(`Status${r}`)]))),
    };
  }
  responses.default = {
    description: 'InternalError',
    content: json(schemaRef('Status'), { InternalError: exampleRef('StatusInternalError') }),
  };
  return responses;
}

function successResponse(route: Route, kind: ObjectKind | undefined): unknown {
  if (route.operation === 'healthz')
    return { description: 'the API is up', content: json(schemaRef('Health')) };
  if (route.operation === 'openapi')
    return { description: 'this document', content: json({ type: 'object', description: 'OpenAPI 3.1' }) };
  if (route.operation === 'occupancy') return OCCUPANCY_RESPONSE;
  if (route.operation === 'repair') return REPAIR_RESPONSE;
  if (route.operation === 'sharedPools') return SHARED_POOLS_RESPONSE;
  if (route.operation === 'history') return HISTORY_RESPONSE;
  if (route.operation === 'preview')
    return {
      description: `the values, in order, that claims on the ${kind} made now by one caller would get; nothing is written or held`,
      content: json(schemaRef('Preview')),
    };
  if (route.operation === 'list')
    return {
      description: isAllocation(route.resource!)
        ? `${kind} objects of the namespace, by pool, then value`
        : `${kind}s of the namespace, in name order`,
      content: json(schemaRef(`${kind}List`)),
    };
  const descriptions: Partial<Record<Route['operation'], string>> = {
    read: `the ${kind}`,
    create: `the ${kind} created`,
    createClaim:
      'the claim created, already allocated (or waiting, with the reason in its Allocated condition)',
    replace: `the ${kind} replaced`,
    replaceClaim: 'the claim replaced (or unchanged, for the same spec)',
    delete: `the last state of the ${kind}`,
    deleteClaim: 'the last state of the claim; the pool’s reclaimPolicy is then applied within seconds',
    renewClaim: 'the claim, its lease started again from now (status.leaseExpiresAt)',
  };
  return {
    description: descriptions[route.operation],
    content: json(schemaRef(kind!), { [kind!]: exampleRef(`${kind}Response`) }),
  };
}

const isAllocation = (resource: string) => poolInfoByAllocationResource(resource) !== undefined;

function parameters(route: Route): unknown[] {
  const list: unknown[] = [];
  for (const [, name] of route.path.matchAll(/\{(\w+)\}/g)) {
    list.push({
      name,
      in: 'path',
      required: true,
      schema: schemaRef(
        name === 'name' && route.resource && isAllocation(route.resource) ? 'AllocationName' : 'Name',
      ),
    });
  }
  if (route.operation === 'list') {
    list.push(
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
      { name: 'continue', in: 'query', schema: { type: 'string' }, description: 'from the previous page' },
      ...LIST_QUERY_PARAMETERS,
    );
    if (route.resource && isAllocation(route.resource)) {
      list.push({ name: 'pool', in: 'query', schema: schemaRef('Name'), description: 'only this pool’s' });
    }
  }
  if (route.operation === 'occupancy') list.push(...OCCUPANCY_PARAMETERS);
  if (route.operation === 'repair') list.push(REPAIR_DRY_RUN);
  if (route.operation === 'preview') list.push(...PREVIEW_PARAMETERS);
  if (route.operation === 'history') list.push(...historyParameters(route.resource === 'claims'));
  if (route.operation === 'delete' && route.resource?.endsWith('pools')) {
    list.push({
      name: 'cascade',
      in: 'query',
      schema: { type: 'boolean', default: false },
      description: 'also delete the pool’s allocation objects and the claims bound to them',
    });
  }
  return list;
}

function operation(route: Route) {
  const kind = route.resource ? kindOfResource(route.resource) : undefined;
  const success = SUCCESS[route.operation as V1OperationName];
  const responses: Record<string, unknown> = { [success]: successResponse(route, kind) };
  if (route.operation === 'replace' || route.operation === 'replaceClaim') {
    responses['201'] = {
      description: `the ${kind} created`,
      content: json(schemaRef(kind!), { [kind!]: exampleRef(`${kind}Response`) }),
    };
  }
  Object.assign(responses, errorResponses(route));
  const verb = route.operation.replace(/Claim$/, '');
  const body =
    kind && (route.method === 'POST' || route.method === 'PUT')
      ? {
          requestBody: {
            required: true,
            content: json(
              schemaRef(kind!),
              Object.fromEntries(
                Object.keys(REQUEST_EXAMPLES[kind!]).map((name) => [name, exampleRef(name)]),
              ),
            ),
          },
        }
      : {};
  return {
    operationId: `${verb}${kind ?? ''}`,
    summary: kind ? `${verb} ${kind}` : route.operation,
    tags: kind ? [kind] : ['service'],
    parameters: parameters(route),
    ...body,
    responses,
  };
}

function examples(): Record<string, Example> {
  const all: Record<string, Example> = {};
  for (const byName of Object.values(REQUEST_EXAMPLES)) Object.assign(all, byName);
  for (const [kind, example] of Object.entries(RESPONSE_EXAMPLES)) all[`${kind}Response`] = example;
  for (const [reason, example] of Object.entries(ERROR_EXAMPLES)) all[`Status${reason}`] = example;
  return all;
}

export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Allot',
      version: '1',
      description: [
        'Hands out numbered resources (integers, IP addresses, IP prefixes) from pools, in the Kubernetes shape',
        'of ironcore’s numbered resource allocation. A claim allocates before it answers. Releasing a claim',
        '(DELETE) applies the pool’s reclaimPolicy within seconds. Where the contract is silent: names of',
        'allocation objects may be up to 253 characters; pools and claims list in name order, allocation objects by pool, then value; unknown spec fields are',
        'refused (422) rather than dropped; a deployed API requires SigV4 (service execute-api).',
      ].join(' '),
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'npm start' }],
    security: [{ sigv4: [] }],
    paths,
    components: {
      schemas: { ...SCHEMAS, ...OCCUPANCY_SCHEMAS, RepairReport: REPAIR_REPORT_SCHEMA },
      examples: examples(),
      securitySchemes: {
        sigv4: {
          type: 'apiKey',
          name: 'Authorization',
          in: 'header',
          description: 'AWS Signature Version 4, service execute-api (the local server needs none)',
        },
      },
    },
  };
}
