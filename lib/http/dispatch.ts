/**
 * From a route of the route table (routes.ts) to the service operation that serves it, bound to the
 * route's resource.
 */
import { poolInfoByAllocationResource, poolInfoByResource, type Resource } from '../domain/kinds.ts';

import { buildOpenApi } from './openapi.ts';
import {
  apiGroupDocument,
  apiGroupListDocument,
  apiResourceListDocument,
  apiVersionsDocument,
} from './kube.ts';
import { kubeGroupOpenApi, kubeOpenApiRoot } from './kube-openapi.ts';
import { patchOperation } from '../service/operations/patch.ts';
import {
  type OperationRequest,
  type Operation,
  readObject,
  listObjects,
} from '../service/operations/common.ts';
import { createPool, replacePool, deletePool } from '../service/operations/pools.ts';
import { createClaim, replaceClaim, deleteClaim } from '../service/operations/claims.ts';
import { poolOccupancy } from '../service/operations/occupancy.ts';
import {
  createAllocation,
  replaceAllocation,
  readAllocation,
  deleteAllocation,
  listAllocations,
} from '../service/operations/allocations.ts';
import { repairNamespace } from '../service/operations/repair.ts';
import { previewPool } from '../service/operations/preview.ts';
export function operationFor(operation: string, resource: Resource | undefined): Operation {
  const pool = resource ? poolInfoByResource(resource) : undefined;
  const allocation = resource ? poolInfoByAllocationResource(resource) : undefined;
  const withResource = (request: OperationRequest): OperationRequest => ({
    ...request,
    params: { ...request.params, resource: resource ?? '' },
  });
  switch (operation) {
    case 'healthz':
      return async () => ({ statusCode: 200, body: { status: 'ok' } });
    case 'openapi':
      return async () => ({ statusCode: 200, body: buildOpenApi() });
    case 'list':
      if (allocation) return (request, ctx) => listAllocations(allocation, request, ctx);
      return (request, ctx) => listObjects(resource!, request, ctx);
    case 'read':
      if (allocation) return (request, ctx) => readAllocation(allocation, request, ctx);
      return (request, ctx) => readObject(resource!, request, ctx);
    case 'create':
      if (allocation) return (request, ctx) => createAllocation(allocation, withResource(request), ctx);
      return (request, ctx) => createPool(pool!, withResource(request), ctx);
    case 'replace':
      if (allocation) return (request, ctx) => replaceAllocation(allocation, withResource(request), ctx);
      return (request, ctx) => replacePool(pool!, withResource(request), ctx);
    case 'delete':
      if (allocation) return (request, ctx) => deleteAllocation(allocation, request, ctx);
      return (request, ctx) => deletePool(pool!, request, ctx);
    case 'createClaim':
      return (request, ctx) => createClaim(withResource(request), ctx);
    case 'replaceClaim':
      return (request, ctx) => replaceClaim(withResource(request), ctx);
    case 'deleteClaim':
      return (request, ctx) => deleteClaim(request, ctx);
    case 'occupancy':
      return (request, ctx) => poolOccupancy(pool!, request, ctx);
    case 'patch':
      return patchOperation(resource!, operationFor('read', resource), operationFor('replace', resource));
    case 'patchClaim':
      return patchOperation(
        resource!,
        operationFor('read', resource),
        operationFor('replaceClaim', resource),
      );
    case 'kubeApiVersions':
      return async () => ({ statusCode: 200, body: apiVersionsDocument() });
    case 'kubeGroups':
      return async () => ({ statusCode: 200, body: apiGroupListDocument() });
    case 'kubeGroup':
      return async () => ({ statusCode: 200, body: apiGroupDocument() });
    case 'kubeResources':
      return async () => ({ statusCode: 200, body: apiResourceListDocument() });
    case 'kubeOpenApi':
      return async () => ({ statusCode: 200, body: kubeOpenApiRoot() });
    case 'kubeOpenApiGroup':
      return async () => ({ statusCode: 200, body: kubeGroupOpenApi().document });
    case 'repair':
      return (request, ctx) => repairNamespace(request, ctx);
    case 'preview':
      return (request, ctx) => previewPool(pool!, request, ctx);
    default:
      throw new Error(`no operation ${operation}`);
  }
}
