/**
 * The OpenAPI 3.1 document of the API, generated from the route table so that it lists exactly the
 * routes served. Object schemas are kept brief here; api.md is the full contract.
 */
import { API_VERSION, kindOfResource } from './kinds.ts';
import { ROUTES, type Route } from './routes.ts';

const STATUS_SCHEMA = {
  type: 'object',
  required: ['kind', 'apiVersion', 'status', 'code', 'reason', 'message'],
  properties: {
    kind: { const: 'Status' },
    apiVersion: { const: 'v1' },
    status: { const: 'Failure' },
    code: { type: 'integer' },
    reason: {
      enum: [
        'BadRequest',
        'NotFound',
        'MethodNotAllowed',
        'AlreadyExists',
        'PoolInUse',
        'RequestEntityTooLarge',
        'UnsupportedMediaType',
        'Invalid',
        'InternalError',
      ],
    },
    message: { type: 'string' },
    details: {
      type: 'object',
      properties: {
        kind: { type: 'string' },
        name: { type: 'string' },
        causes: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
  },
};

const OBJECT_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: API_VERSION },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: { type: 'object' },
    status: { type: 'object' },
  },
};

const SUCCESS: Record<string, number> = {
  healthz: 200,
  openapi: 200,
  list: 200,
  read: 200,
  create: 201,
  createClaim: 201,
  replace: 200,
  replaceClaim: 200,
  delete: 200,
  deleteClaim: 200,
};

function operation(route: Route) {
  const parameters: unknown[] = [];
  for (const name of route.path.match(/\{(\w+)\}/g) ?? []) {
    parameters.push({ name: name.slice(1, -1), in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.operation === 'list') {
    parameters.push(
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
      { name: 'continue', in: 'query', schema: { type: 'string' } },
    );
    if (route.resource && ['indices', 'ipaddresses', 'ipprefixes'].includes(route.resource)) {
      parameters.push({ name: 'pool', in: 'query', schema: { type: 'string' } });
    }
  }
  if (route.operation === 'delete' && route.resource?.endsWith('pools')) {
    parameters.push({ name: 'cascade', in: 'query', schema: { type: 'boolean', default: false } });
  }
  const kind = route.resource ? kindOfResource(route.resource) : undefined;
  const success = SUCCESS[route.operation] ?? 200;
  const responses: Record<string, unknown> = {
    [success]: {
      description: kind ? `${kind} ${route.operation}` : route.operation,
      content: {
        'application/json': { schema: route.resource ? { $ref: '#/components/schemas/Object' } : {} },
      },
    },
    default: {
      description: 'an error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Status' } } },
    },
  };
  if (route.operation === 'replace' || route.operation === 'replaceClaim') {
    responses['201'] = {
      description: 'created',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Object' } } },
    };
  }
  return {
    operationId: `${route.operation.replace(/Claim$/, '')}${kind ?? ''}`,
    summary: kind ? `${route.operation} ${kind}` : route.operation,
    parameters,
    ...(route.method === 'POST' || route.method === 'PUT'
      ? {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Object' } } },
          },
        }
      : {}),
    responses,
  };
}

export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Allot', version: '1', description: 'Allocation of numbered resources: see api.md.' },
    paths,
    components: { schemas: { Status: STATUS_SCHEMA, Object: OBJECT_SCHEMA } },
  };
}
