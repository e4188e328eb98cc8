/**
 * From a route of the route table (routes.ts) to the service operation that serves it. Each function
 * that serves routes has its own table of operations (dispatch-<function>.ts), so its bundle holds the
 * operations of its own routes and no other's; all.ts puts the tables together for the local
 * server and the tests, each route still served by its own function's table.
 */
import { poolInfoByAllocationResource, poolInfoByResource, type Resource } from '../../domain/kinds.ts';
import type { Operation, OperationRequest } from '../../service/operations/common.ts';
import type { ApiFunctionName, OperationName, Route } from '../routes.ts';

/** Builds an operation for a route's resource. */
export type OperationFactory = (resource: Resource | undefined) => Operation;

/** A function's operations, by the route table's operation name. */
export type OperationTable = Partial<Record<OperationName, OperationFactory>>;

/**
 * The operation a handler runs for a matched route (`operation`: another operation of the same function,
 * such as the read a Kubernetes list by name makes), or undefined when the route is not this handler's.
 */
export type Dispatch = (route: Route, operation?: OperationName) => Operation | undefined;

/** The dispatch of one function: its own routes, from its own table. */
export function dispatchOf(name: ApiFunctionName, table: OperationTable): Dispatch {
  return (route, operation = route.operation) =>
    route.function === name ? operationOf(table, operation, route.resource) : undefined;
}

/** The operation of a table; a route whose operation the table lacks is a defect, not a request's fault. */
export function operationOf(
  table: OperationTable,
  operation: OperationName,
  resource: Resource | undefined,
): Operation {
  const factory = table[operation];
  if (!factory) throw new Error(`no operation ${operation}`);
  return factory(resource);
}

// ---------------------------------------------------------------- what the tables share

/** The pool kind a pool resource's routes serve. */
export function poolOfResource(resource: Resource | undefined) {
  return resource ? poolInfoByResource(resource) : undefined;
}

/** The pool kind whose allocation objects an allocation resource's routes serve. */
export function allocationOfResource(resource: Resource | undefined) {
  return resource ? poolInfoByAllocationResource(resource) : undefined;
}

/** A create or replace learns the resource path it was made through (a pool's kind, the claim's). */
export function withResource(request: OperationRequest, resource: Resource | undefined): OperationRequest {
  return { ...request, params: { ...request.params, resource: resource ?? '' } };
}
