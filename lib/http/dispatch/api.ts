/**
 * The api function's operations (dispatch.ts): pools and allocation objects, every read and list, the
 * pools' occupancy and preview, the OpenAPI and Kubernetes discovery documents.
 */
import { patchOperation } from '../../service/operations/patch.ts';
import { readObject, type Operation } from '../../service/operations/common.ts';
import { listCollection, listEveryNamespace } from '../../service/operations/lists.ts';
import { watchCollection } from '../../service/operations/watch.ts';
import { createPool, deletePool, replacePool } from '../../service/operations/pools.ts';
import { poolOccupancy } from '../../service/operations/occupancy.ts';
import {
  createAllocation,
  deleteAllocation,
  readAllocation,
  replaceAllocation,
} from '../../service/operations/allocations.ts';
import { previewPool } from '../../service/operations/preview.ts';
import { claimHistory, poolHistory } from '../../service/operations/history.ts';
import { listSharedPools } from '../../service/operations/shared-pools.ts';
import type { Resource } from '../../domain/kinds.ts';
import { allocationOfResource, poolOfResource, withResource, type OperationTable } from './dispatch.ts';
import { buildOpenApi } from '../openapi/openapi.ts';
import {
  apiGroupDocument,
  apiGroupListDocument,
  apiResourceListDocument,
  apiVersionsDocument,
} from '../kube/discovery.ts';
import { kubeGroupOpenApi, kubeOpenApiRoot } from '../kube/openapi.ts';
import { versionDocument } from '../kube/version.ts';

const document =
  (build: () => unknown): Operation =>
  async () => ({ statusCode: 200, body: build() });

function read(resource: Resource | undefined): Operation {
  const allocation = allocationOfResource(resource);
  if (allocation) return (request, ctx) => readAllocation(allocation, request, ctx);
  return (request, ctx) => readObject(resource!, request, ctx);
}

function replace(resource: Resource | undefined): Operation {
  const allocation = allocationOfResource(resource);
  if (allocation)
    return (request, ctx) => replaceAllocation(allocation, withResource(request, resource), ctx);
  const pool = poolOfResource(resource)!;
  return (request, ctx) => replacePool(pool, withResource(request, resource), ctx);
}

export const API_OPERATIONS: OperationTable = {
  healthz: () => document(() => ({ status: 'ok' })),
  openapi: () => document(buildOpenApi),
  list: (resource) => (request, ctx) => listCollection(resource!, request, ctx),
  listEveryNamespace: (resource) => (request, ctx) => listEveryNamespace(resource!, request, ctx),
  watch: (resource) => async (request, ctx) => {
    await watchCollection(resource!, request, ctx, request.watch!);
    return { statusCode: 200, body: undefined };
  },
  read,
  create: (resource) => {
    const allocation = allocationOfResource(resource);
    if (allocation)
      return (request, ctx) => createAllocation(allocation, withResource(request, resource), ctx);
    const pool = poolOfResource(resource)!;
    return (request, ctx) => createPool(pool, withResource(request, resource), ctx);
  },
  replace,
  delete: (resource) => {
    const allocation = allocationOfResource(resource);
    if (allocation) return (request, ctx) => deleteAllocation(allocation, request, ctx);
    const pool = poolOfResource(resource)!;
    return (request, ctx) => deletePool(pool, request, ctx);
  },
  occupancy: (resource) => {
    const pool = poolOfResource(resource)!;
    return (request, ctx) => poolOccupancy(pool, request, ctx);
  },
  preview: (resource) => {
    const pool = poolOfResource(resource)!;
    return (request, ctx) => previewPool(pool, request, ctx);
  },
  patch: (resource) => patchOperation(resource!, read(resource), replace(resource)),
  version: () => document(versionDocument),
  kubeApiVersions: () => document(apiVersionsDocument),
  kubeGroups: () => document(apiGroupListDocument),
  kubeGroup: () => document(apiGroupDocument),
  kubeResources: () => document(apiResourceListDocument),
  kubeOpenApi: () => document(kubeOpenApiRoot),
  kubeOpenApiGroup: () => document(() => kubeGroupOpenApi().document),
  sharedPools: () => listSharedPools,
  history: (resource) => {
    if (resource === 'claims') return claimHistory;
    const pool = poolOfResource(resource)!;
    return (request, ctx) => poolHistory(pool, request, ctx);
  },
};
