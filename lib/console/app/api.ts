/** The console's one way to the API: same-origin JSON calls, answers and Status errors alike as values. */
import {
  POOL_KINDS as DOMAIN_POOL_KINDS,
  type PoolKindInfo as DomainPoolKindInfo,
} from '../../domain/kinds.ts';

export interface Answer<T = any> {
  status: number;
  body: T;
}

/** A Kubernetes-shaped Status error body (api.md, "Errors"). */
export interface Status {
  kind: 'Status';
  code: number;
  reason: string;
  message: string;
  details?: { kind?: string; name?: string; causes?: { field?: string; message: string }[] };
}

export function isStatus(body: unknown): body is Status {
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'Status';
}

export async function call<T = any>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    return { status: 0, body: failure(0, 'Unreachable', `cannot reach the API: ${String(error)}`) as T };
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as T };
  } catch {
    return { status: response.status, body: failure(response.status, 'NotJSON', text.slice(0, 200)) as T };
  }
}

function failure(code: number, reason: string, message: string): Status {
  return { kind: 'Status', code, reason, message };
}

export { API_VERSION } from '../../domain/kinds.ts';

/** The contract's kinds (lib/domain/kinds.ts), with the words the page shows for each. */
export interface PoolKindInfo extends DomainPoolKindInfo {
  label: string;
}

const LABELS: Record<DomainPoolKindInfo['kind'], string> = {
  IndexPool: 'Index',
  IPAddressPool: 'IP address',
  IPPrefixPool: 'IP prefix',
};

export const POOL_KINDS: readonly PoolKindInfo[] = DOMAIN_POOL_KINDS.map((info) => ({
  ...info,
  label: LABELS[info.kind],
}));

export const byResource = (resource: string) =>
  POOL_KINDS.find((info) => info.resource === resource || info.allocationResource === resource);
export const byKind = (kind: string) =>
  POOL_KINDS.find((info) => info.kind === kind || info.allocationKind === kind);

/** The resource path of any kind a manifest may carry. */
export function resourceOfKind(kind: unknown): string | undefined {
  if (kind === 'Claim') return 'claims';
  const info = typeof kind === 'string' ? byKind(kind) : undefined;
  if (!info) return undefined;
  return info.kind === kind ? info.resource : info.allocationResource;
}

export const nsPath = (namespace: string, resource: string, name?: string) =>
  `/v1/namespaces/${encodeURIComponent(namespace)}/${resource}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
