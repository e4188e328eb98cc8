/**
 * What the Kubernetes paths add to an answer of the shared operations (api.md, the Kubernetes paths):
 * lists carry `kind: <Kind>List`, `apiVersion` and a `resourceVersion`; a GET whose `Accept` asks for a
 * Table answers one; a PATCH takes a merge patch only, and says what to send instead of what it refuses;
 * what is not served (dry runs, watches, selectors but `metadata.name`) is refused, never half done.
 */
import { BadRequestError, NotFoundError } from '../domain/errors.ts';
import { API_VERSION, kindOfResource } from '../domain/kinds.ts';
import type { Reply } from '../service/operations/common.ts';
import { includeObjectOf, toTable, wantsTable } from './kube-table.ts';
import type { Route } from './routes.ts';

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
 * else: a server-side dry run (`kubectl diff`, `--dry-run=server`) would write for real, a list with a
 * selector would answer every object as if filtered, and there is no watch.
 */
export function checkKubeQuery(route: Route, query: Record<string, string | undefined>): void {
  if (query.dryRun)
    throw new BadRequestError(
      'server-side dry run is not served (nothing was written); use --dry-run=client',
    );
  if (route.operation !== 'list') return;
  if (query.watch !== undefined && query.watch !== 'false' && query.watch !== '0')
    throw new BadRequestError('watch is not served; list again instead');
  if (query.labelSelector) throw new BadRequestError('labelSelector is not served; list without it');
  selectedName(query);
}

/**
 * The one field selector served, `metadata.name=<name>` (what `kubectl wait` lists by): the name it
 * selects. Any other selector is refused (400).
 */
export function selectedName(query: Record<string, string | undefined>): string | undefined {
  const selector = query.fieldSelector;
  if (!selector) return undefined;
  const name = /^metadata\.name==?([^,=!]+)$/.exec(selector)?.[1];
  if (name === undefined)
    throw new BadRequestError('fieldSelector is not served, but for metadata.name=<name>');
  return name;
}

/** A list selected by name: the one object, read, or none. */
export async function readAsList(read: () => Promise<Reply>): Promise<Reply> {
  try {
    return { statusCode: 200, body: { items: [(await read()).body], metadata: {} } };
  } catch (error) {
    if (error instanceof NotFoundError) return { statusCode: 200, body: { items: [], metadata: {} } };
    throw error;
  }
}

/** A list's resourceVersion: a point in time, opaque; Allot serves no watch to resume from it. */
const listResourceVersion = (now: Date) => String(now.getTime());

/** The reply for a Kubernetes path: the operation's own, in the shape kubectl reads. */
export function kubeReply(
  route: Route,
  reply: Reply,
  request: { accept?: string; query: Record<string, string | undefined>; now: Date },
): Reply {
  if (!route.resource || reply.statusCode >= 300) return reply;
  const kind = kindOfResource(route.resource);
  const isList = route.operation === 'list';
  const body = reply.body as Record<string, any>;
  const metadata: Record<string, unknown> = isList
    ? { ...body.metadata, resourceVersion: listResourceVersion(request.now) }
    : {};
  if (route.method === 'GET' && wantsTable(request.accept)) {
    const include = includeObjectOf(request.query.includeObject);
    if (include === undefined) throw new BadRequestError('includeObject must be None, Metadata or Object');
    const objects = isList ? body.items : [body];
    return {
      statusCode: 200,
      body: toTable(route.resource, objects, { now: request.now, include, metadata }),
    };
  }
  if (!isList) return reply;
  return {
    statusCode: reply.statusCode,
    body: { kind: `${kind}List`, apiVersion: API_VERSION, metadata, items: body.items },
  };
}
