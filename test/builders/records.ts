/** Hand-built items as Allot stores them, for tests that call the engine or the table directly. */
import type { ClaimRecord } from '../../lib/domain/objects/records.ts';
import { API_VERSION } from '../helpers/allot.ts';

/** A claim as the claim handler writes it before it decides (Allocating), in namespace `default`. */
export function allocatingClaim(name: string, poolName: string, uid = `uid-${name}`): ClaimRecord {
  return {
    t: 'claim',
    metadata: {
      name,
      namespace: 'default',
      uid,
      generation: 1,
      creationTimestamp: new Date().toISOString(),
      labels: {},
      annotations: {},
    },
    spec: { poolRef: { apiVersion: API_VERSION, kind: 'IndexPool', name: poolName } },
    status: { conditions: [] },
    phase: 'Allocating',
    rv: 1,
  };
}
