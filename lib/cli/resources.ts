/** The resource words the CLI takes (`pools`, `indexpool`, `IndexPool`, …) and the `--pool` flag. */
import { POOL_KINDS, RESOURCES, kindOfResource, type Resource } from '../domain/kinds.ts';
import { CliError } from './http.ts';

export const POOL_RESOURCES = POOL_KINDS.map((info) => info.resource);
export const ALLOCATION_RESOURCES = POOL_KINDS.map((info) => info.allocationResource);

/** `pools`, `indexpool`, `IndexPool`, `index`, … → the resources a name stands for. */
export function resourcesOf(word: string): Resource[] {
  const w = word.toLowerCase();
  if (w === 'pools' || w === 'pool') return [...POOL_RESOURCES];
  if (w === 'allocations' || w === 'allocation') return [...ALLOCATION_RESOURCES];
  for (const resource of RESOURCES) {
    const kind = kindOfResource(resource).toLowerCase();
    if (w === resource || w === kind || `${w}s` === resource) return [resource];
  }
  if (w === 'indexes') return ['indices'];
  throw new CliError(
    `unknown resource "${word}"; use one of pools, ${POOL_RESOURCES.join(', ')}, claims, allocations, ${ALLOCATION_RESOURCES.join(', ')}`,
    [],
    2,
  );
}

/** `--pool <kind>/<name>`, or `<namespace>/<kind>/<name>` for a pool of another namespace shared with this one. */
export function poolFlag(text: string | undefined): { kind: string; name: string; namespace?: string } {
  if (!text) throw new CliError('claim needs --pool <kind>/<name>, e.g. --pool indexpool/asn-pool', [], 2);
  const parts = text.split('/');
  const [kindText, poolName, ...more] = parts.length === 3 ? parts.slice(1) : parts;
  if (!kindText || !poolName || more.length || (parts.length === 3 && !parts[0]))
    throw new CliError(`--pool must be <kind>/<name> or <namespace>/<kind>/<name> (got ${text})`, [], 2);
  const [resource, ...others] = resourcesOf(kindText);
  if (!resource || others.length || !POOL_RESOURCES.includes(resource as never))
    throw new CliError(
      `--pool kind must be indexpool, ipaddresspool or ipprefixpool (got ${kindText})`,
      [],
      2,
    );
  return {
    kind: kindOfResource(resource),
    name: poolName,
    ...(parts.length === 3 && { namespace: parts[0] }),
  };
}
