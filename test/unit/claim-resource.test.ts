/**
 * The names and ids of `Custom::AllotClaim` (lib/service/requests/claim-resource.ts): a derived claim name is
 * always a valid claim name, the same for the same stack, resource and spec, and another for any other.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameProblem } from '../../lib/domain/names.ts';
import { derivedClaimName, parsePhysicalId } from '../../lib/service/requests/claim-resource.ts';

// CloudFormation: a stack name is 1..128 of [A-Za-z0-9-] starting with a letter; a logical id is alphanumeric.
const stackName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,127}$/);
const logicalId = fc.stringMatching(/^[A-Za-z0-9]{1,255}$/);
const stackIdOf = (name: string, guid = '5b918d10-cd98-11ea-90d5-0a9cd3354c10') =>
  `arn:aws:cloudformation:eu-west-1:111111111111:stack/${name}/${guid}`;
const spec = fc.record({ poolRef: fc.record({ kind: fc.constant('IndexPool'), name: fc.string() }) });

describe('a derived claim name', () => {
  it('is a valid claim name of at most 60 characters, whatever the stack and logical id', () => {
    fc.assert(
      fc.property(stackName, logicalId, spec, (stack, logical, claimSpec) => {
        const name = derivedClaimName(stackIdOf(stack), logical, claimSpec);
        expect(nameProblem(name)).toBeUndefined();
        expect(name.length).toBeLessThanOrEqual(60);
      }),
    );
  });

  it('is the same for the same inputs, whatever the order of the spec’s keys', () => {
    const a = derivedClaimName(stackIdOf('Net'), 'Vpc', {
      poolRef: { kind: 'IPPrefixPool', name: 'p' },
      prefixLength: 20,
    });
    const b = derivedClaimName(stackIdOf('Net'), 'Vpc', {
      prefixLength: 20,
      poolRef: { name: 'p', kind: 'IPPrefixPool' },
    });
    expect(a).toBe(b);
    expect(a).toMatch(/^net-vpc-[0-9a-f]{10}$/);
  });

  it('differs for another spec, resource, stack of the same name (another account, or made again)', () => {
    const base = { poolRef: { kind: 'IndexPool', name: 'asns' } };
    const names = [
      derivedClaimName(stackIdOf('Net'), 'Asn', base),
      derivedClaimName(stackIdOf('Net'), 'Asn', { ...base, within: '1..9' }),
      derivedClaimName(stackIdOf('Net'), 'Asn2', base),
      derivedClaimName(stackIdOf('Net').replace('111111111111', '222222222222'), 'Asn', base),
      derivedClaimName(stackIdOf('Net', '00000000-0000-0000-0000-000000000000'), 'Asn', base),
    ];
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('a physical id', () => {
  it('is <namespace>/<name>; anything else (one CloudFormation made up) names no claim', () => {
    expect(parsePhysicalId('default/net-vpc-0123456789')).toEqual({
      namespace: 'default',
      name: 'net-vpc-0123456789',
    });
    for (const other of [
      'Networking-Vpc-1XK2Q9ZJ3ABCD',
      'allot:not-created:abc',
      'a/b/c',
      '/x',
      'x/',
      '',
      undefined,
    ])
      expect(parsePhysicalId(other)).toBeUndefined();
  });
});
