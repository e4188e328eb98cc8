import { afterAll, beforeAll, describe, it, expect } from 'vitest';
import { client, startTestAllot } from '../helpers/allot.ts';
import type { LocalAllot } from '../../lib/local/server.ts';
import { POOL_KINDS, RESOURCES, kindOfResource, type ObjectKind } from '../../lib/domain/kinds.ts';
import { nameProblem } from '../../lib/domain/names.ts';
import {
  buildOpenApi,
  ERROR_EXAMPLES,
  REQUEST_EXAMPLES,
  RESPONSE_EXAMPLES,
} from '../../lib/http/openapi/openapi.ts';
import { ROUTES, type Route } from '../../lib/http/routes.ts';
import {
  NAME_PATTERN,
  SCHEMAS,
  SPEC_SCHEMAS,
  schemaProblems,
  specFields,
} from '../../lib/domain/objects/schemas.ts';

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
  it('is an OpenAPI 3.1 document with a schema and a list schema per kind, and Status', () => {
    expect(doc.openapi).toBe('3.1.0');
    for (const resource of RESOURCES) {
      const kind = kindOfResource(resource);
      expect(doc.components.schemas).toHaveProperty(kind);
      expect(doc.components.schemas).toHaveProperty(`${kind}List`);
    }
    expect(doc.components.schemas).toHaveProperty('Status');
  });

  it('resolves every $ref it holds', () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/(\w+)\/(\w[\w-]*)"/g)];
    expect(refs.length).toBeGreaterThan(50);
    const components = doc.components as unknown as Record<string, Record<string, unknown>>;
    for (const [, section, name] of refs)
      expect(components[section!], `${section}/${name}`).toHaveProperty(name!);
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
    'documents a body for $name exactly when it writes an object (a POST or PUT), and an error response',
    ({ route }) => {
      const operation = operationOf(route);
      expect(operation.requestBody !== undefined).toBe(
        route.resource !== undefined && (route.method === 'POST' || route.method === 'PUT'),
      );
      expect(operation.responses).toHaveProperty('default');
    },
  );

  it('answers 201 on POST, and 200 or 201 on PUT (200 on the repair sweep and a renewal, which create nothing)', () => {
    for (const route of ROUTES) {
      const codes = Object.keys(operationOf(route).responses).filter((code) => code.startsWith('2'));
      if (route.operation === 'repair' || route.operation === 'renewClaim') expect(codes).toEqual(['200']);
      else if (route.method === 'POST') expect(codes).toEqual(['201']);
      else if (route.method === 'PUT') expect(codes.sort()).toEqual(['200', '201']);
      else expect(codes).toEqual(['200']);
    }
  });

  it('documents paging, selectors and watch on every list, and pool on allocation lists only', () => {
    for (const route of ROUTES.filter((r) => r.operation === 'list')) {
      const query = operationOf(route)
        .parameters.filter((p) => p.in === 'query')
        .map((p) => p.name);
      const allocation = ['indices', 'ipaddresses', 'ipprefixes'].includes(route.resource!);
      const common = [
        'limit',
        'continue',
        'labelSelector',
        'fieldSelector',
        'watch',
        'resourceVersion',
        'timeoutSeconds',
        'allowWatchBookmarks',
      ];
      expect(query).toEqual(allocation ? [...common, 'pool'] : common);
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

const kinds = Object.keys(REQUEST_EXAMPLES) as ObjectKind[];

describe('the examples', () => {
  it.each(kinds.flatMap((kind) => Object.keys(REQUEST_EXAMPLES[kind]).map((name) => ({ kind, name }))))(
    'request $name validates against the $kind schema',
    ({ kind, name }) => {
      expect(schemaProblems(SCHEMAS[kind], REQUEST_EXAMPLES[kind][name]!.value)).toEqual([]);
    },
  );

  it.each(kinds)('the %s response validates against its schema', (kind) => {
    expect(schemaProblems(SCHEMAS[kind], RESPONSE_EXAMPLES[kind].value)).toEqual([]);
  });

  it.each(Object.keys(ERROR_EXAMPLES))('the %s error validates against the Status schema', (reason) => {
    expect(ERROR_EXAMPLES[reason]!.value.reason).toBe(reason);
    expect(schemaProblems(SCHEMAS.Status, ERROR_EXAMPLES[reason]!.value)).toEqual([]);
  });

  it('are caught by the schema check when they break it (the check can fail)', () => {
    const pool = REQUEST_EXAMPLES.IndexPool['asn-pool']!.value as { spec: object };
    expect(
      schemaProblems(SCHEMAS.IndexPool, { ...pool, spec: { ...pool.spec, reclaimPolicy: 'Keep' } }),
    ).toEqual([{ field: 'spec.reclaimPolicy', message: 'must be one of Recycle, Retain' }]);
    expect(schemaProblems(SCHEMAS.Claim, { metadata: { name: 'Bad_Name' }, spec: {} })).toEqual([
      { field: 'spec.poolRef', message: 'is required' },
    ]);
    expect(schemaProblems(SCHEMAS.Name, 'Bad_Name')).toHaveLength(1);
  });

  it('writes the name rule as names.ts checks it', () => {
    for (const name of [
      'a',
      'asn-pool',
      'a.b-c',
      '0',
      'a'.repeat(63),
      'A',
      '-a',
      'a-',
      'a_b',
      '',
      'a'.repeat(64),
    ]) {
      const bySchema = schemaProblems(SCHEMAS.Name, name).length === 0;
      expect(bySchema, name).toBe(nameProblem(name) === undefined);
      expect(new RegExp(NAME_PATTERN).test(name) && name.length <= 63, name).toBe(bySchema);
    }
  });
});

describe('the examples and schemas against the server', () => {
  let allot: LocalAllot;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    allot = await startTestAllot();
    api = client(allot.url, 'openapi-examples');
  });
  afterAll(() => allot.close());

  it('serves this document at /v1/openapi.json', async () => {
    const answer = await api.get('/v1/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(JSON.parse(JSON.stringify(doc)));
  });

  it('accepts every request example, sent in order (201)', async () => {
    const order: ObjectKind[] = [
      ...POOL_KINDS.map((p) => p.kind),
      ...POOL_KINDS.map((p) => p.allocationKind),
      'Claim',
    ];
    for (const kind of order) {
      const resource = RESOURCES.find((r) => kindOfResource(r) === kind)!;
      for (const [name, example] of Object.entries(REQUEST_EXAMPLES[kind])) {
        const answer = await api.post(resource, example.value);
        expect(answer.status, `${kind} ${name}: ${JSON.stringify(answer.body)}`).toBe(201);
      }
    }
  });

  it.each(RESOURCES.map((resource) => ({ resource, kind: kindOfResource(resource) })))(
    'answers $kind objects that validate against the schema',
    async ({ resource, kind }) => {
      const list = await api.get(resource);
      expect(list.body.items.length).toBeGreaterThan(0);
      expect(schemaProblems(SCHEMAS[`${kind}List` as keyof typeof SCHEMAS], list.body)).toEqual([]);
    },
  );

  it.each(RESOURCES.map((resource) => ({ resource, kind: kindOfResource(resource) })))(
    'refuses a $kind spec without each field its schema requires, and only those',
    async ({ resource, kind }) => {
      const answer = await api.post(resource, { metadata: { name: 'empty' }, spec: {} });
      expect(answer.status).toBe(422);
      const fields = answer.body.details.causes.map((c: { field: string }) => c.field).sort();
      type OneOf = { oneOf?: { required: string[] }[] };
      const schema = SCHEMAS[SPEC_SCHEMAS[kind]] as { required: string[]; allOf?: OneOf[] } & OneOf;
      // One of several fields (prefixes or prefixesFrom; one length or a range): the first is asked for.
      const choices = [schema, ...(schema.allOf ?? [])].flatMap((part) => part.oneOf?.[0]?.required ?? []);
      const required = [...schema.required, ...choices];
      expect(fields).toEqual(required.map((field) => `spec.${field}`).sort());
    },
  );

  it('gives each error example the message the server answers with', async () => {
    const base = '/v1/namespaces/default';
    const bad = await client(allot.url, 'default');
    await bad.post('indexpools', REQUEST_EXAMPLES.IndexPool['asn-pool']!.value);
    await bad.post('claims', REQUEST_EXAMPLES.Claim['leaf1-asn']!.value);
    const answers = {
      BadRequest: await bad.get('indexpools?limit=0'),
      NotFound: await bad.get('claims/leaf9-asn'),
      MethodNotAllowed: await bad.call('PATCH', `${base}/claims/leaf1-asn`, {}),
      AlreadyExists: await bad.post('indexpools', REQUEST_EXAMPLES.IndexPool['asn-pool']!.value),
      PoolInUse: await bad.delete('indexpools/asn-pool'),
      RequestEntityTooLarge: await bad.post('indexpools', 'x'.repeat(65537)),
      UnsupportedMediaType: await bad.post('indexpools', 'x', { 'content-type': 'text/plain' }),
      Invalid: await bad.post('indexpools', {
        metadata: { name: 'bad' },
        spec: { ranges: ['100..200', '150..250'] },
      }),
    };
    for (const [reason, answer] of Object.entries(answers)) {
      expect(answer.body, reason).toEqual(ERROR_EXAMPLES[reason]!.value);
    }
  });

  it.each(RESOURCES.map((resource) => ({ resource, kind: kindOfResource(resource) })))(
    'refuses a $kind spec field the schema does not define, and no field it defines is refused as unknown',
    async ({ resource, kind }) => {
      const spec = Object.fromEntries(specFields(kind).map((field) => [field, null]));
      const answer = await api.post(resource, { metadata: { name: 'x' }, spec: { ...spec, colour: 'red' } });
      expect(answer.status).toBe(422);
      const unknown = answer.body.details.causes.filter(
        (c: { message: string }) => c.message === 'is not a field of this kind',
      );
      expect(unknown.map((c: { field: string }) => c.field)).toEqual(['spec.colour']);
    },
  );
});
