/**
 * `allot kubeconfig`: a kubeconfig for kubectl against Allot, a context for the local server and one for
 * `allot proxy` (a deployed API is IAM-only; the proxy signs). No credentials: neither needs any.
 */
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** The local server's URL (http). */
  local: string;
  /** The signing proxy's URL, `http://127.0.0.1:<port>`. */
  proxy: string;
  namespace: string;
  /** The context kubectl uses by default. */
  current: 'allot-local' | 'allot-proxy';
}

export function kubeconfig(options: KubeconfigOptions): string {
  const entry = (name: string, server: string) => ({
    cluster: { name, cluster: { server } },
    context: { name, context: { cluster: name, user: 'allot', namespace: options.namespace } },
  });
  const entries = [entry('allot-local', options.local), entry('allot-proxy', options.proxy)];
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: entries.map((e) => e.cluster),
    contexts: entries.map((e) => e.context),
    users: [{ name: 'allot', user: {} }],
    'current-context': options.current,
    preferences: {},
  }).trimEnd();
}
