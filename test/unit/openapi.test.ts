import { describe, it, expect } from 'vitest';
import { buildOpenApi } from '../../lib/openapi.ts';
import { ROUTES, type Route } from '../../lib/routes.ts';

interface Operation {
  operationId: string;
  parameters: Array<{ name: string; in: string; required?: boolean }>;
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

const doc = buildOpenApi() as {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};

const operationOf = (route: Route): Operation => doc.paths[route.path]![route.method.toLowerCase()]!;
const label = (route: Route) => `${route.method} ${route.path}`;

describe('buildOpenApi', () => {
  it('is an OpenAPI 3.1 document with the Status and Object schemas', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['Object', 'Status']);
  });

  it('lists exactly the routes served', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(ROUTES.map(label).sort());
  });

  it('gives every operation its own operationId', () => {
    const ids = ROUTES.map((route) => operationOf(route).operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(ROUTES.map((route) => ({ route, name: label(route) })))(
    'declares the path parameters of $name',
    ({ route }) => {
      const declared = operationOf(route)
        .parameters.filter((p) => p.in === 'path')
        .map((p) => p.name);
      const inPath = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(declared).toEqual(inPath);
      for (const p of operationOf(route).parameters.filter((q) => q.in === 'path'))
        expect(p.required).toBe(true);
    },
  );

  it.each(ROUTES.map((route) => ({ route, name: label(route) })))(
    'documents a body for $name exactly when it is a POST or PUT, and an error response',
    ({ route }) => {
      const operation = operationOf(route);
      expect(operation.requestBody !== undefined).toBe(route.method === 'POST' || route.method === 'PUT');
      expect(operation.responses).toHaveProperty('default');
    },
  );

  it('answers 201 on POST, and 200 or 201 on PUT', () => {
    for (const route of ROUTES) {
      const codes = Object.keys(operationOf(route).responses).filter((code) => code !== 'default');
      if (route.method === 'POST') expect(codes).toEqual(['201']);
      else if (route.method === 'PUT') expect(codes.sort()).toEqual(['200', '201']);
      else expect(codes).toEqual(['200']);
    }
  });

  it('documents limit and continue on every list, and pool on allocation lists only', () => {
    for (const route of ROUTES.filter((r) => r.operation === 'list')) {
      const query = operationOf(route)
        .parameters.filter((p) => p.in === 'query')
        .map((p) => p.name);
      const allocation = ['indices', 'ipaddresses', 'ipprefixes'].includes(route.resource!);
      expect(query).toEqual(allocation ? ['limit', 'continue', 'pool'] : ['limit', 'continue']);
    }
  });

  it('documents cascade on pool deletes only', () => {
    for (const route of ROUTES.filter((r) => r.method === 'DELETE')) {
      const query = operationOf(route)
        .parameters.filter((p) => p.in === 'query')
        .map((p) => p.name);
      expect(query).toEqual(route.resource!.endsWith('pools') ? ['cascade'] : []);
    }
  });
});
