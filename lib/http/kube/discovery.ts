/**
 * The Kubernetes face of the API (api.md, "Routes", the Kubernetes paths): the group, version and
 * resources kubectl discovers, as the legacy discovery documents (`/api`, `/apis`, the group version's
 * `APIResourceList`). kubectl asks for the aggregated form (apidiscovery.k8s.io/v2) first and falls back to
 * these when the answer is plain JSON. Short names are ironcore's (api/pool/v1alpha1/*_types.go
 * kubebuilder markers). Plain data and pure functions.
 */
import { API_VERSION, RESOURCES, kindOfResource, type Resource } from '../../domain/kinds.ts';
import { KUBE_GROUP, KUBE_VERSION } from '../routes.ts';

interface KubeResource {
  readonly singular: string;
  readonly shortNames: readonly string[];
}

/** ironcore's markers: `+kubebuilder:resource:path=…,singular=…,shortName=…`. Claims have no short name. */
const KUBE_RESOURCES: Record<Resource, KubeResource> = {
  indexpools: { singular: 'indexpool', shortNames: ['idxpool'] },
  ipaddresspools: { singular: 'ipaddresspool', shortNames: ['ippool'] },
  ipprefixpools: { singular: 'ipprefixpool', shortNames: ['pfxpool'] },
  indices: { singular: 'index', shortNames: ['idx'] },
  ipaddresses: { singular: 'ipaddress', shortNames: ['ipa'] },
  ipprefixes: { singular: 'ipprefix', shortNames: ['pfx'] },
  claims: { singular: 'claim', shortNames: [] },
};

/** What each resource serves, in discovery's verbs (no deletecollection). */
export const KUBE_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] as const;

const groupVersion = { groupVersion: API_VERSION, version: KUBE_VERSION };

export function apiVersionsDocument() {
  // No core group: Allot serves none of its resources (pods, namespaces…), only this group.
  return { kind: 'APIVersions', versions: [], serverAddressByClientCIDRs: [] };
}

export function apiGroupDocument() {
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: KUBE_GROUP,
    versions: [groupVersion],
    preferredVersion: groupVersion,
  };
}

export function apiGroupListDocument() {
  const { kind: _kind, apiVersion: _apiVersion, ...group } = apiGroupDocument();
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [group] };
}

export function apiResourceListDocument() {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: API_VERSION,
    resources: RESOURCES.map((resource) => {
      const { singular, shortNames } = KUBE_RESOURCES[resource];
      return {
        name: resource,
        singularName: singular,
        namespaced: true,
        kind: kindOfResource(resource),
        verbs: [...KUBE_VERBS],
        ...(shortNames.length > 0 ? { shortNames: [...shortNames] } : {}),
      };
    }),
  };
}
