/**
 * What the Kubernetes paths add to an answer of the shared operations (api.md, the Kubernetes paths):
 * lists carry `kind: <Kind>List`, `apiVersion` and a `resourceVersion`; a GET whose `Accept` asks for a
 * Table answers one; a PATCH takes a merge patch only, and says what to send instead of what it refuses;
 * what is not served (server-side dry runs) is refused, never half done.
 */
import { BadRequestError, NotAcceptableError } from '../../domain/errors.ts';
import { API_VERSION, kindOfResource } from '../../domain/kinds.ts';
import type { Reply } from '../../service/operations/common.ts';
import { includeObjectOf, toTable, wantsTable } from './table.ts';
import type { Route } from '../routes.ts';

export const MERGE_PATCH = 'application/merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

/** Why a body's content type does not fit the route (415), if it does not. `type` is lowercased, bare. */
export function bodyTypeProblem(route: Route, type: string): string | undefined {
  if (route.method === 'PATCH') {
    if (type === MERGE_PATCH || type === '') return undefined;
    if (type === APPLY_PATCH)
      return `server-side apply (${APPLY_PATCH}) is not served; use client-side kubectl apply (without --server-side)`;
    if (type === 'application/json-patch+json')
      return `JSON patch is not served; send a merge patch (${MERGE_PATCH}, kubectl patch --type=merge)`;
    if (type === 'application/strategic-merge-patch+json')
      return `strategic merge patch is not served; send a merge patch (${MERGE_PATCH}, kubectl patch --type=merge)`;
    return `content type ${clip(type)} is not supported on PATCH; send ${MERGE_PATCH}`;
  }
  if (type === '' || type === 'application/json' || type.endsWith('+json')) return undefined;
  return `content type ${clip(type)} is not supported; send application/json`;
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/**
 * Refuses what a Kubernetes request may ask and Allot does not serve (400), rather than doing something
 * else: a server-side dry run (`kubectl diff`, `--dry-run=server`) would write for real.
 */
export function checkKubeQuery(_route: Route, query: Record<string, string | undefined>): void {
  if (query.dryRun)
    throw new BadRequestError(
      'server-side dry run is not served (nothing was written); use --dry-run=client',
    );
}

/**
 * The reply in the shape the request asks for, on both path families (api.md, "Routes"): a `Table` when
 * the `Accept` header asks for one and the route answers objects that have columns (a read, a list);
 * the plain JSON when the route has none and the header also takes JSON (kubectl's does); else 406, as
 * Kubernetes answers. A Kubernetes path's list carries its `kind`, `apiVersion` and `resourceVersion`.
 */
export function shapedReply(
  route: Route,
  reply: Reply,
  request: { accept?: string; query: Record<string, string | undefined>; now: Date },
): Reply {
  if (reply.statusCode >= 300) return reply;
  const isList = route.operation === 'list' || route.operation === 'listEveryNamespace';
  const body = reply.body as Record<string, any>;
  const metadata: Record<string, unknown> = isList ? { ...body.metadata } : {};
  if (route.method === 'GET' && wantsTable(request.accept)) {
    if (route.resource && (isList || route.operation === 'read')) {
      const include = includeObjectOf(request.query.includeObject);
      if (include === undefined) throw new BadRequestError('includeObject must be None, Metadata or Object');
      const objects = isList ? body.items : [body];
      return {
        statusCode: 200,
        body: toTable(route.resource, objects, { now: request.now, include, metadata }),
      };
    }
    if (!acceptsJson(request.accept))
      throw new NotAcceptableError(
        `GET ${clip(route.path)} answers application/json, not a Table; add application/json to the Accept header`,
      );
  }
  if (!route.kube || !route.resource || !isList) return reply;
  const kind = kindOfResource(route.resource);
  return {
    statusCode: reply.statusCode,
    body: { kind: `${kind}List`, apiVersion: API_VERSION, metadata, items: body.items },
  };
}

/** Whether an `Accept` header takes plain JSON: `application/json` (no `as=`), `application/*`, or any type. */
export function acceptsJson(accept: string | undefined): boolean {
  if (!accept?.trim()) return true;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    if (type !== 'application/json' && type !== 'application/*' && type !== '*/*') return false;
    const names = params.map((param) => param.split('=', 1)[0]!.trim());
    const quality = params.find((param) => param.startsWith('q='));
    return !names.includes('as') && !(quality && Number(quality.slice(2)) === 0);
  });
}
