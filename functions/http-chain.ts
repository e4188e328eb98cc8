/**
 * The HTTP handler chain every API function shares: one middy chain, built once, around the function's
 * own dispatch (lib/http/dispatch/dispatch.ts). Operations return their success reply; errors become the
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
import type { Dispatch } from '../lib/http/dispatch/dispatch.ts';
import type { Operation, OperationRequest, Reply } from '../lib/service/operations/common.ts';
import { ALL_ROUTES, matchRoute, type Route } from '../lib/http/routes.ts';
import { APPLY_PATCH, bodyTypeProblem, checkKubeQuery, shapedReply } from '../lib/http/kube/replies.ts';
import { includeObjectOf, toTable, wantsTable } from '../lib/http/kube/table.ts';
import { isWatch, type WatchOptions } from '../lib/service/operations/watch.ts';

import { lazyContext } from './context.ts';
import { logger } from './observability.ts';
import { type ClaimContext } from '../lib/service/context.ts';

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Where a watch streams its lines as it finds them (the local server); without one, a watch is a long
 * poll whose lines are the answer's body (API Gateway cannot stream a Lambda's answer).
 */
export type WatchSink = Pick<WatchOptions, 'write' | 'signal' | 'open'> &
  Partial<Pick<WatchOptions, 'endAfterEvents' | 'maxMs'>>;

/**
 * `parsed`: the request; `contentType`: the body's, bare and lowercased ('' without a body); `watchSink`:
 * set by the local server for a watch.
 */
type Event = APIGatewayProxyEventV2 & {
  parsed?: OperationRequest;
  contentType?: string;
  watchSink?: WatchSink;
};

/** How long a long poll lasts at most: it ends before API Gateway's HTTP API cuts it (30 s, not raisable). */
export const LONG_POLL_MS = 25_000;
/** How long a streamed watch lasts without timeoutSeconds (Kubernetes' default is 30 to 60 minutes). */
export const STREAM_WATCH_MS = 30 * 60_000;

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

  /** A list with `watch=true`: streamed into the sink, or answered as a long poll. */
  const watch = async (
    served: Operation,
    matched: Route,
    request: OperationRequest,
    event: Event,
    context: Context | undefined,
  ): Promise<APIGatewayProxyStructuredResultV2> => {
    const sink = event.watchSink;
    const lines: string[] = [];
    // kubectl get -w asks for Tables: each event's object is then a Table of its one row.
    let present: WatchOptions['present'];
    if (matched.kube && matched.resource && wantsTable(headerOf(event, 'accept'))) {
      const include = includeObjectOf(request.query.includeObject);
      if (include === undefined) throw new BadRequestError('includeObject must be None, Metadata or Object');
      const resource = matched.resource;
      present = (object) =>
        toTable(resource, [object], {
          now: new Date(),
          include,
          metadata: { resourceVersion: (object.metadata as { resourceVersion: string }).resourceVersion },
        });
    }
    const remaining = context?.getRemainingTimeInMillis?.() ?? LONG_POLL_MS + 3_000;
    const options: WatchOptions = sink
      ? { endAfterEvents: false, maxMs: STREAM_WATCH_MS, pollMs: 200, present, ...sink }
      : {
          write: (line) => lines.push(line),
          endAfterEvents: true,
          maxMs: Math.max(0, Math.min(LONG_POLL_MS, remaining - 3_000)),
          pollMs: 1_000,
          // Lambda's answer through API Gateway is at most 6 MB: a long backlog comes in several.
          maxBytes: 4_000_000,
          present,
        };
    await served({ ...request, watch: options }, contextOf());
    return {
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: lines.map((line) => `${line}\n`).join(''),
    };
  };

  const route = async (event: Event, context?: Context): Promise<APIGatewayProxyStructuredResultV2> => {
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
    const { operation } = match.route;
    if (operation === 'listEveryNamespace' && isWatch(request.query))
      throw new BadRequestError('a watch is served per namespace; watch one namespace (without -A)');
    if (operation === 'list' && isWatch(request.query))
      return watch(dispatch(match.route, 'watch')!, match.route, request, event, context);
    const reply = await served(request, contextOf());
    return json(
      shapedReply(match.route, reply, {
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
