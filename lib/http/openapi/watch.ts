/** Parts of the OpenAPI document for issue 26: a list's selectors, its resourceVersion and watch. */

/** A list's query parameters beside `limit` and `continue` (api.md, "Routes"). */
export const LIST_QUERY_PARAMETERS: readonly unknown[] = [
  {
    name: 'labelSelector',
    in: 'query',
    schema: { type: 'string' },
    description: 'Kubernetes’ label selector: =, ==, !=, in (…), notin (…), key, !key, >, <, comma-separated',
  },
  {
    name: 'fieldSelector',
    in: 'query',
    schema: { type: 'string' },
    description:
      'field=value, field==value or field!=value, comma-separated, on metadata.name, metadata.namespace, and spec.poolRef.name (claims and allocation objects) and status.phase (claims: Allocated, Waiting, PoolRefInvalid)',
  },
  {
    name: 'watch',
    in: 'query',
    schema: { type: 'boolean', default: false },
    description:
      'the changes after resourceVersion instead of a list: one JSON line each, {"type": ADDED | MODIFIED | DELETED | BOOKMARK | ERROR, "object": …}; streamed by the local server, a long poll through a deployed API (it ends after its first events or within 25 s: watch again from the last resourceVersion)',
  },
  {
    name: 'resourceVersion',
    in: 'query',
    schema: { type: 'string' },
    description:
      'with watch: a list’s metadata.resourceVersion or an event object’s; absent or 0: the objects as they are first (ADDED), then their changes; older than the history keeps (15 minutes): 410 Expired',
  },
  { name: 'timeoutSeconds', in: 'query', schema: { type: 'integer', minimum: 0 }, description: 'with watch' },
  {
    name: 'allowWatchBookmarks',
    in: 'query',
    schema: { type: 'boolean', default: false },
    description:
      'with watch: BOOKMARK events carry the resourceVersion reached past events the selectors leave out',
  },
];

/** The example of 410 Expired: a watch from a resourceVersion the history no longer holds. */
export const EXPIRED_EXAMPLE = {
  summary: 'a watch from a resourceVersion older than the history keeps',
  value: {
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code: 410,
    reason: 'Expired',
    message: 'too old resource version: 7999 (12000)',
  },
};
