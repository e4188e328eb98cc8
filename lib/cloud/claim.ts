/**
 * `AllotClaim`: a claim as a CloudFormation resource of another stack (`Custom::AllotClaim`,
 * docs/stacks.md). Its provider is the service's claim-resource function (lib/service/requests/claim-resource.ts
 * decides what each request does); this construct only writes the resource, with the claim spec as
 * its properties and the claim's value, allocation and name as its attributes.
 */
import { CustomResource, Duration, RemovalPolicy, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { CLAIM_RESOURCE_TYPE } from '../domain/objects/claim-resource.ts';
import { nameProblem } from '../domain/names.ts';

/** The pool a claim draws from, in the claim's namespace. */
export interface AllotPoolRef {
  readonly kind: 'IndexPool' | 'IPAddressPool' | 'IPPrefixPool';
  readonly name: string;
  /** @default pool.networking.metal.ironcore.dev/v1alpha1 */
  readonly apiVersion?: string;
}

/** A claim's `spec.owner`, copied to its allocation object. */
export interface AllotOwnerRef {
  readonly kind: string;
  readonly name: string;
  readonly uid?: string;
}

export interface AllotClaimProps {
  /** `AllotService.claimServiceToken` (the `ClaimServiceToken` output of the stack that deploys Allot). */
  readonly serviceToken: string;
  /** @default 'default' */
  readonly namespace?: string;
  readonly poolRef: AllotPoolRef;
  /** This exact value instead of the next free one. */
  readonly value?: string | number;
  /** A range `a..b` (IndexPool) or a CIDR (IP pools) the value must lie in. */
  readonly within?: string;
  /** Addresses the claim must not get (IP pools). */
  readonly reserved?: string[];
  /** The length of the prefix to allocate (IPPrefixPool). */
  readonly prefixLength?: number;
  readonly owner?: AllotOwnerRef;
  /** A lease: the claim ends this long after it was made, unless renewed (api.md, "Claim"). */
  readonly leaseSeconds?: number;
  /** The claim's labels; a change of labels alone updates the claim in place. */
  readonly labels?: Record<string, string>;
  /**
   * The claim's name. Named, a spec change cannot replace the claim (the name is taken by the old one
   * until CloudFormation deletes it): the update fails, as CloudFormation's own named resources do.
   *
   * @default derived from the stack and the resource's logical id (so from the construct path) and the
   * spec: stable across deploys, a new one when the spec changes
   */
  readonly claimName?: string;
  /**
   * `DESTROY`: deleting the resource (or replacing it) releases the claim, and the pool's reclaim policy
   * applies. `RETAIN`: the claim stays, held, when the resource leaves the stack.
   *
   * @default RemovalPolicy.DESTROY
   */
  readonly removalPolicy?: RemovalPolicy;
}

/** How long CloudFormation waits for an answer: the provider answers in seconds, also when it fails. */
export const CLAIM_SERVICE_TIMEOUT = Duration.minutes(5);

const SPEC_FIELDS = ['value', 'within', 'reserved', 'prefixLength', 'owner', 'leaseSeconds'] as const;

function check(scope: Construct, props: AllotClaimProps): void {
  const problems: string[] = [];
  const named = (field: string, value: string | undefined) => {
    if (value === undefined || Token.isUnresolved(value)) return;
    const problem = nameProblem(value);
    if (problem) problems.push(`${field} "${value}" ${problem}`);
  };
  named('namespace', props.namespace);
  named('claimName', props.claimName);
  named('poolRef.name', props.poolRef.name);
  const policy = props.removalPolicy ?? RemovalPolicy.DESTROY;
  if (policy !== RemovalPolicy.DESTROY && policy !== RemovalPolicy.RETAIN)
    problems.push(`removalPolicy ${policy} is not supported; use DESTROY or RETAIN`);
  if (problems.length > 0) throw new Error(`AllotClaim ${scope.node.path}: ${problems.join('; ')}`);
}

/**
 * A claim on an Allot pool, made when the resource is created and released when it is deleted.
 *
 * @example
 * const asn = new AllotClaim(stack, 'TransitGatewayAsn', {
 *   serviceToken: 'arn:aws:lambda:eu-west-1:111111111111:function:AllotStack-AllotClaimResourceFunction…',
 *   poolRef: { kind: 'IndexPool', name: 'private-asns' },
 * });
 * new ec2.CfnTransitGateway(stack, 'Tgw', { amazonSideAsn: Token.asNumber(asn.value) });
 */
export class AllotClaim extends Construct {
  /** The `Custom::AllotClaim` resource. */
  public readonly resource: CustomResource;
  /** The held value, canonical, as a string (`"64512"`, `"10.0.0.0/16"`). */
  public readonly value: string;
  /** The name of the allocation object that holds the value. */
  public readonly allocationName: string;
  /** The claim's name (given, or derived at deploy time). */
  public readonly claimName: string;
  public readonly namespace: string;

  constructor(scope: Construct, id: string, props: AllotClaimProps) {
    super(scope, id);
    check(this, props);
    this.namespace = props.namespace ?? 'default';
    const spec: Record<string, unknown> = { poolRef: { ...props.poolRef } };
    for (const field of SPEC_FIELDS) if (props[field] !== undefined) spec[field] = props[field];
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: props.serviceToken,
      resourceType: CLAIM_RESOURCE_TYPE,
      serviceTimeout: CLAIM_SERVICE_TIMEOUT,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.DESTROY,
      properties: {
        Namespace: this.namespace,
        ...(props.claimName !== undefined ? { Name: props.claimName } : {}),
        Spec: spec,
        ...(props.labels !== undefined ? { Labels: props.labels } : {}),
      },
    });
    this.value = this.resource.getAttString('Value');
    this.allocationName = this.resource.getAttString('AllocationName');
    this.claimName = this.resource.getAttString('Name');
  }
}
