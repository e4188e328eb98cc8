/**
 * The HTTP handler chain every API function shares: one middy chain, built once, around the function's
 * own dispatch (lib/http/dispatch.ts). Operations return their success reply; errors become the
 * contract's Status body here and nowhere else.
 */
import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import {
  BadRequestError,
  MethodNotAllowedError,
  NotFoundError,
  RequestEntityTooLargeError,
  UnsupportedMediaTypeError,
  toAllotError,
} from '../lib/domain/errors.ts';
import type { Dispatch } from '../lib/http/dispatch.ts';
import type { OperationRequest, Reply } from '../lib/service/operations/common.ts';
import { ALL_ROUTES, matchRoute } from '../lib/http/routes.ts';
import {
  APPLY_PATCH,
  bodyTypeProblem,
  checkKubeQuery,
  kubeReply,
  readAsList,
  selectedName,
} from '../lib/http/kube-http.ts';

import { lazyContext } from './context.ts';
import { logger } from './observability.ts';
import { type ClaimContext } from '../lib/service/context.ts';

export const MAX_BODY_BYTES = 64 * 1024;

/** `parsed`: the request; `contentType`: the body's, bare and lowercased ('' without a body). */
type Event = APIGatewayProxyEventV2 & { parsed?: OperationRequest; contentType?: string };

/** Rejects bodies over 64 KiB before anything parses them (413). */
const bodySizeLimitBefore = (request: middy.Request<Event>) => {
  const { body, isBase64Encoded } = request.event;
  if (!body) return;
  const bytes = isBase64Encoded ? Math.floor((body.length * 3) / 4) : Buffer.byteLength(body, 'utf8');
  if (bytes > MAX_BODY_BYTES)
    throw new RequestEntityTooLargeError(`the body is over ${MAX_BODY_BYTES} bytes`);
};

/**
 * JSON bodies only: another content type is 415, malformed JSON is 400 (middy's own parser says 415).
 * A server-side apply body (YAML) is left for the route to refuse with a message that says so.
 */
const jsonBodyBefore = (request: middy.Request<Event>) => {
  const { event } = request;
  const raw = event.body
    ? event.isBase64Encoded
      ? Buffer.from(event.body, 'base64').toString('utf8')
      : event.body
    : '';
  const query: Record<string, string | undefined> = {};
  for (const [key, value] of new URLSearchParams(event.rawQueryString ?? '')) query[key] = value;
  let body: unknown;
  event.contentType = '';
  if (raw.length > 0) {
    const type = (headerOf(event, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    event.contentType = type;
    if (type === APPLY_PATCH) {
      // not JSON: refused once the route is known
    } else if (type !== '' && type !== 'application/json' && !type.endsWith('+json')) {
      throw new UnsupportedMediaTypeError(
        `content type ${clip(type)} is not supported; send application/json`,
      );
    } else {
      try {
        body = JSON.parse(raw);
      } catch {
        throw new BadRequestError('the body is not valid JSON');
      }
    }
  }
  event.parsed = { params: {}, query, body };
};

function headerOf(event: Event, name: string): string | undefined {
  for (const [key, value] of Object.entries(event.headers ?? {}))
    if (key.toLowerCase() === name) return value;
  return undefined;
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** What a request is about, for its log lines: namespace, the object's name, the pool a claim names. */
function logKeysOf(event: Event, request: OperationRequest, isClaim: boolean): Record<string, string> {
  const keys: Record<string, string> = {};
  const requestId = event.requestContext?.requestId;
  if (requestId) keys.requestId = requestId;
  const { namespace, name } = request.params;
  if (namespace) keys.namespace = namespace;
  const body = request.body as { metadata?: { name?: unknown }; spec?: { poolRef?: { name?: unknown } } };
  const objectName = name ?? body?.metadata?.name;
  if (typeof objectName === 'string') keys[isClaim ? 'claim' : 'name'] = objectName;
  const pool = body?.spec?.poolRef?.name;
  if (typeof pool === 'string') keys.pool = pool;
  return keys;
}

function json(reply: Reply): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: reply.statusCode,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(reply.body),
  };
}

/** Errors as Status bodies; anything unexpected is a 500 that says nothing of internals, and is logged. */
const statusErrorsOnError = (request: middy.Request<Event, APIGatewayProxyStructuredResultV2>) => {
  const error = toAllotError(request.error);
  if (error.code >= 500) logger.error('request failed', { error: request.error as Error });
  request.response = json({ statusCode: error.code, body: error.toStatus() });
};

/**
 * Builds the handler around a dispatch: each function's own (its routes' operations), or every function's
 * (functions/http.ts). Tests and the local server pass their own table and clock, the claim and release
 * functions the context they share with their direct invocations.
 */
export function createHttpChain(dispatch: Dispatch, context?: Partial<ClaimContext> | (() => ClaimContext)) {
  const contextOf = typeof context === 'function' ? context : lazyContext(context);

  const route = async (event: Event): Promise<APIGatewayProxyStructuredResultV2> => {
    const method = event.requestContext?.http?.method ?? 'GET';
    const path = event.rawPath ?? '/';
    const { match, allowed } = matchRoute(method, path, ALL_ROUTES);
    if (!match) {
      if (allowed.length > 0) {
        throw new MethodNotAllowedError(
          `${method} is not served on ${clip(path)}; use ${allowed.join(', ')}`,
        );
      }
      throw new NotFoundError(`no route for ${clip(path)}`);
    }
    const served = dispatch(match.route);
    if (!served) {
      // API Gateway sends each route to its own function; one reaching another (through `$default`) is
      // a path API Gateway matched to no route, answered as such.
      logger.warn('request for another function', {
        route: match.route.path,
        function: match.route.function,
      });
      throw new NotFoundError(`no route for ${clip(path)}`);
    }
    const problem = bodyTypeProblem(match.route, event.contentType ?? '');
    if (problem) throw new UnsupportedMediaTypeError(problem);
    const request = { ...event.parsed!, params: match.params };
    if (match.route.kube) checkKubeQuery(match.route, request.query);
    logger.appendKeys(logKeysOf(event, request, match.route.resource === 'claims'));
    const { operation, kube } = match.route;
    const selected = kube && operation === 'list' ? selectedName(request.query) : undefined;
    const reply =
      selected === undefined
        ? await served(request, contextOf())
        : await readAsList(() =>
            dispatch(match.route, 'read')!(
              { ...request, params: { ...request.params, name: selected } },
              contextOf(),
            ),
          );
    if (!kube) return json(reply);
    return json(
      kubeReply(match.route, reply, {
        accept: headerOf(event, 'accept'),
        query: request.query,
        now: new Date(),
      }),
    );
  };

  return middy<Event, APIGatewayProxyStructuredResultV2, Error, Context>(route)
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use({ before: bodySizeLimitBefore })
    .use({ before: jsonBodyBefore })
    .use({ onError: statusErrorsOnError });
}
