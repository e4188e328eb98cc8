/**
 * Each function dispatches its own routes only (lib/http/dispatch/dispatch.ts): its table holds the operations of
 * the routes the route table gives it, no more, so its bundle holds no other function's operations; a
 * route of another function that reaches it anyway is answered as a path with no route.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { createHttpChain } from '../../functions/http-chain.ts';
import { logger } from '../../functions/observability.ts';
import { dispatchOf } from '../../lib/http/dispatch/dispatch.ts';
import { DISPATCH_ALL, FUNCTION_OPERATIONS } from '../../lib/http/dispatch/all.ts';
import { ALL_ROUTES, API_FUNCTIONS, type ApiFunctionName } from '../../lib/http/routes.ts';
import { Table } from '../../lib/store/table.ts';
import { httpEvent } from '../helpers/events.ts';

/** The operations of a function's routes, and `watch` where it serves lists (a list with watch=true). */
const operationsOf = (name: ApiFunctionName) => {
  const operations = new Set<string>(
    ALL_ROUTES.filter((route) => route.function === name).map((route) => route.operation),
  );
  if (operations.has('list')) operations.add('watch');
  return [...operations].sort();
};

describe('the dispatch of each function', () => {
  it.each(API_FUNCTIONS.map((name) => ({ name })))(
    'the $name function has the operations of its routes and no others',
    ({ name }) => {
      expect(Object.keys(FUNCTION_OPERATIONS[name]).sort()).toEqual(operationsOf(name));
    },
  );

  it('serves every route of the table, each from its own function', () => {
    for (const route of ALL_ROUTES) {
      expect(DISPATCH_ALL(route)).toBeTypeOf('function');
      for (const name of API_FUNCTIONS) {
        const served = dispatchOf(name, FUNCTION_OPERATIONS[name])(route);
        if (name === route.function) expect(served).toBeTypeOf('function');
        else expect(served).toBeUndefined();
      }
    }
  });
});

describe('a function reached by a route of another', () => {
  // Never called: neither request below reads the table.
  const table = new Table({
    tableName: 'unused',
    client: new DynamoDBClient({ region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  });
  const handlerOf = (name: ApiFunctionName) =>
    createHttpChain(dispatchOf(name, FUNCTION_OPERATIONS[name]), { table });
  const call = async (name: ApiFunctionName, method: string, path: string, body?: unknown) =>
    (await handlerOf(name)(
      httpEvent(method, path, body),
      {} as Context,
    )) as APIGatewayProxyStructuredResultV2;

  it('answers 404, as API Gateway would for a path it matched to no route, and logs a warning', async () => {
    const warned = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const answer = await call('api', 'POST', '/v1/namespaces/default/claims', { metadata: { name: 'c' } });
    expect(answer.statusCode).toBe(404);
    expect(JSON.parse(answer.body!)).toMatchObject({
      kind: 'Status',
      code: 404,
      reason: 'NotFound',
      message: 'no route for /v1/namespaces/default/claims',
    });
    expect(warned).toHaveBeenCalledWith('request for another function', {
      route: '/v1/namespaces/{namespace}/claims',
      function: 'claim',
    });
    warned.mockRestore();
  });

  it('serves its own routes', async () => {
    expect((await call('api', 'GET', '/v1/healthz')).statusCode).toBe(200);
    const warned = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    expect((await call('claim', 'GET', '/v1/healthz')).statusCode).toBe(404);
    warned.mockRestore();
  });

  it('still answers 405 for a method no function serves on the path', async () => {
    const answer = await call('release', 'PATCH', '/v1/namespaces/default/claims/c');
    expect(answer.statusCode).toBe(405);
  });
});
