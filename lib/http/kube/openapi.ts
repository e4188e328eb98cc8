/**
 * The OpenAPI v3 documents kubectl reads (`/openapi/v3`, then the group version's document it points to):
 * what `kubectl apply` needs to validate (it finds that the server checks fields itself, `fieldValidation`,
 * and that PATCH takes merge patches only) and what `kubectl explain` shows. The schemas are the ones the
 * request checks and `/v1/openapi.json` use (schemas.ts), written as OpenAPI 3.0, each kind's carrying
 * `x-kubernetes-group-version-kind`. Pure.
 */
import { createHash } from 'node:crypto';
import { kindOfResource, type ObjectKind } from '../../domain/kinds.ts';
import { SCHEMAS } from '../../domain/objects/schemas.ts';
import { KUBE_GROUP, KUBE_PREFIX, KUBE_ROUTES, KUBE_VERSION, type Route } from '../routes.ts';

const KINDS: readonly ObjectKind[] = [
  'IndexPool',
  'IPAddressPool',
  'IPPrefixPool',
  'Claim',
  'Index',
  'IPAddress',
  'IPPrefix',
];

const gvk = (kind: string) => ({ group: KUBE_GROUP, version: KUBE_VERSION, kind });

/**
 * JSON Schema 2020-12 (OpenAPI 3.1) → OpenAPI 3.0: `const` becomes a one-value enum, a `$ref` with
 * siblings an `allOf`, and "a string or an integer" Kubernetes' int-or-string (what `kubectl explain` names).
 */
function toOpenApi30(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApi30);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'const') out.enum = [value];
    else if (key === 'properties' || key === 'components')
      out[key] = Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, toOpenApi30(v)]));
    else out[key] = toOpenApi30(value);
  }
  if (typeof out.$ref === 'string' && Object.keys(out).length > 1) {
    const { $ref, ...rest } = out;
    return { ...rest, allOf: [{ $ref }] };
  }
  const forms = Array.isArray(out.oneOf) ? (out.oneOf as { type?: string }[]).map((form) => form.type) : [];
  if (forms.length === 2 && forms.includes('string') && forms.includes('integer')) {
    const { oneOf, ...rest } = out;
    return { ...rest, anyOf: oneOf, 'x-kubernetes-int-or-string': true };
  }
  return out;
}

function schemas(): Record<string, unknown> {
  const all: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(SCHEMAS)) all[name] = toOpenApi30(schema);
  for (const kind of KINDS) {
    all[kind] = { ...(all[kind] as object), 'x-kubernetes-group-version-kind': [gvk(kind)] };
    const list = all[`${kind}List`] as { properties: Record<string, unknown> };
    all[`${kind}List`] = {
      ...list,
      properties: {
        apiVersion: { type: 'string', enum: [`${KUBE_GROUP}/${KUBE_VERSION}`] },
        kind: { type: 'string', enum: [`${kind}List`] },
        ...list.properties,
      },
      'x-kubernetes-group-version-kind': [gvk(`${kind}List`)],
    };
  }
  return all;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

const ACTIONS: Record<string, string> = {
  GET: 'get',
  POST: 'post',
  PUT: 'put',
  PATCH: 'patch',
  DELETE: 'delete',
};

function operation(route: Route): Record<string, unknown> {
  const kind = kindOfResource(route.resource!);
  const isList = route.operation === 'list';
  const parameters: unknown[] = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  if (['POST', 'PUT', 'PATCH'].includes(route.method)) {
    parameters.push({
      name: 'fieldValidation',
      in: 'query',
      description: 'accepted; Allot always refuses unknown spec fields (422), as Strict does',
      schema: { type: 'string' },
    });
  }
  if (isList) {
    parameters.push(
      { name: 'limit', in: 'query', schema: { type: 'integer' } },
      { name: 'continue', in: 'query', schema: { type: 'string' } },
    );
  }
  const body =
    route.method === 'POST' || route.method === 'PUT'
      ? { requestBody: { required: true, content: json(ref(kind)) } }
      : route.method === 'PATCH'
        ? // Merge patch only: kubectl sends strategic merge patches where a server lists them.
          {
            requestBody: {
              required: true,
              content: { 'application/merge-patch+json': { schema: { type: 'object' } } },
            },
          }
        : {};
  return {
    operationId: `${route.operation}${kind}`,
    'x-kubernetes-action': isList ? 'list' : ACTIONS[route.method],
    'x-kubernetes-group-version-kind': gvk(kind),
    parameters,
    ...body,
    responses: {
      [route.method === 'POST' ? '201' : '200']: {
        description: 'OK',
        content: json(ref(isList ? `${kind}List` : kind)),
      },
      default: { description: 'a Status', content: json(ref('Status')) },
    },
  };
}

let cached: { document: Record<string, unknown>; hash: string } | undefined;

/** The group version's document, and a hash of it for the root's URL (kubectl caches by that URL). */
export function kubeGroupOpenApi(): { document: Record<string, unknown>; hash: string } {
  if (cached) return cached;
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of KUBE_ROUTES) {
    if (!route.resource || !route.path.startsWith(`${KUBE_PREFIX}/`)) continue;
    paths[route.path] ??= {};
    paths[route.path]![route.method.toLowerCase()] = operation(route);
  }
  const document = {
    openapi: '3.0.0',
    info: { title: 'Allot', version: KUBE_VERSION },
    paths,
    components: { schemas: schemas() },
  };
  const hash = createHash('sha512').update(JSON.stringify(document)).digest('hex').slice(0, 64).toUpperCase();
  cached = { document, hash };
  return cached;
}

/** `/openapi/v3`: where each group version's document is. */
export function kubeOpenApiRoot() {
  return {
    paths: {
      [`${KUBE_PREFIX.slice(1)}`]: {
        serverRelativeURL: `/openapi/v3${KUBE_PREFIX}?hash=${kubeGroupOpenApi().hash}`,
      },
    },
  };
}
