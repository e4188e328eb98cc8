/**
 * `AllotIpAddresses`: a VPC's IPv4 CIDR from an Allot IPPrefixPool, as `ec2.IpAddresses.awsIpamAllocation`
 * takes it from an AWS IPAM pool. The CIDR is an `AllotClaim`'s value, known at deploy time only, so the
 * subnets are split from the VPC's `CidrBlock` with `Fn::Cidr`, exactly as CDK's `AwsIpam` does
 * (aws-cdk-lib/aws-ec2/lib/ip-addresses.js: `calculateCidrSplits` over the netmask, then
 * `cidrSplitToCfnExpression`, which CDK exports).
 */
import { Lazy, Reference, RemovalPolicy, Tokenization } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { AllotClaim } from './claim.ts';

export interface AllotIpAddressesProps {
  /** `AllotService.claimServiceToken`. */
  readonly serviceToken: string;
  /** @default 'default' */
  readonly namespace?: string;
  /** The IPPrefixPool the VPC's CIDR is claimed from. */
  readonly pool: string;
  /** The VPC CIDR's prefix length (within the pool's allocation prefix lengths). */
  readonly prefixLength: number;
  /**
   * The netmask of subnets whose configuration gives no `cidrMask`, as `AwsIpamProps` has it.
   *
   * @default none: every subnet configuration must give its `cidrMask`
   */
  readonly defaultSubnetIpv4NetmaskLength?: number;
  /** Labels of the claim. */
  readonly labels?: Record<string, string>;
  /** What deleting the VPC does to its claim (`AllotClaimProps.removalPolicy`). @default DESTROY */
  readonly removalPolicy?: RemovalPolicy;
}

/** What CDK's `calculateCidrSplits` (aws-ec2/lib/cidr-splits.js, not exported) computes, per subnet. */
interface CidrSplit {
  readonly count: number;
  readonly netmask: number;
  readonly index: number;
}

/**
 * CDK's `calculateCidrSplits`: each subnet, in order, at the next offset aligned to its size, within the
 * VPC's `rootNetmask`; the same arithmetic, so a VPC's subnets are laid out as under AWS IPAM.
 */
export function calculateCidrSplits(rootNetmask: number, netmasks: readonly number[]): CidrSplit[] {
  const splits: CidrSplit[] = [];
  let offset = 0;
  for (const netmask of netmasks) {
    const size = 2 ** (32 - netmask);
    offset = Math.ceil(offset / size) * size;
    splits.push({ count: 2 ** (netmask - rootNetmask), netmask, index: offset / size });
    offset += size;
  }
  if (offset > 2 ** (32 - rootNetmask))
    throw new Error(
      `IP space of size /${rootNetmask} not big enough to allocate subnets of sizes ${netmasks.map((mask) => `/${mask}`)}`,
    );
  return splits;
}

/**
 * An `ec2.IIpAddresses` whose VPC CIDR is claimed from an Allot IPPrefixPool.
 *
 * @example
 * new ec2.Vpc(stack, 'Vpc', {
 *   ipAddresses: AllotIpAddresses.fromPool({
 *     serviceToken: allot.claimServiceToken,
 *     pool: 'vpc-cidrs',
 *     prefixLength: 20,
 *     defaultSubnetIpv4NetmaskLength: 24,
 *   }),
 * });
 */
export class AllotIpAddresses implements ec2.IIpAddresses {
  static fromPool(props: AllotIpAddressesProps): AllotIpAddresses {
    return new AllotIpAddresses(props);
  }

  /**
   * Each VPC's claim, by the CIDR token its resource was given (one instance may serve several VPCs);
   * without a claim until the VPC asks for its subnets.
   */
  private readonly slots = new Map<string, { claim?: AllotClaim }>();

  private constructor(private readonly props: AllotIpAddressesProps) {}

  /** The claim made for a VPC (`<vpc>/AllotCidr`), once the VPC is constructed. */
  claimOf(vpc: ec2.IVpc): AllotClaim | undefined {
    return [...this.slots.values()].find(({ claim }) => claim?.node.scope === vpc)?.claim;
  }

  allocateVpcCidr(): ec2.VpcIpamOptions {
    // The VPC asks for its CIDR before it exists, and IIpAddresses gets no scope: the claim is made when
    // the VPC asks for its subnets (passing its own CIDR attribute, whose target is its resource, which
    // holds this token), and the token resolves to that claim's value.
    const slot: { claim?: AllotClaim } = {};
    const cidrBlock = Lazy.string({
      produce: () => {
        if (!slot.claim)
          throw new Error('AllotIpAddresses: the VPC asked for no subnets, so no claim was made');
        return slot.claim.value;
      },
    });
    this.slots.set(cidrBlock, slot);
    return { cidrBlock };
  }

  allocateSubnetsCidr(input: ec2.AllocateCidrRequest): ec2.SubnetIpamOptions {
    const vpcResource = this.vpcResourceOf(input.vpcCidr);
    const slot = vpcResource.cidrBlock === undefined ? undefined : this.slots.get(vpcResource.cidrBlock);
    if (!slot) throw new Error('AllotIpAddresses: this VPC did not get its CIDR from this AllotIpAddresses');
    slot.claim = new AllotClaim(vpcResource.node.scope!, 'AllotCidr', {
      serviceToken: this.props.serviceToken,
      namespace: this.props.namespace,
      poolRef: { kind: 'IPPrefixPool', name: this.props.pool },
      prefixLength: this.props.prefixLength,
      labels: this.props.labels,
      removalPolicy: this.props.removalPolicy,
    });
    const netmasks = input.requestedSubnets.map(({ configuration }) => {
      const mask = configuration.cidrMask ?? this.props.defaultSubnetIpv4NetmaskLength;
      if (mask === undefined)
        throw new Error(
          'AllotIpAddresses: a subnet configuration gives no cidrMask; set defaultSubnetIpv4NetmaskLength',
        );
      return mask;
    });
    return {
      allocatedSubnets: calculateCidrSplits(this.props.prefixLength, netmasks).map((split) => ({
        cidr: ec2.cidrSplitToCfnExpression(input.vpcCidr, split),
      })),
    };
  }

  /** The `AWS::EC2::VPC` whose `CidrBlock` attribute `vpcCidr` is (the VPC passes its own). */
  private vpcResourceOf(vpcCidr: string): ec2.CfnVPC {
    const token = Tokenization.reverseString(vpcCidr).firstToken;
    if (!token || !Reference.isReference(token) || !(token.target instanceof ec2.CfnVPC))
      throw new Error('AllotIpAddresses: the VPC CIDR is not a VPC resource attribute; use it in an ec2.Vpc');
    return token.target;
  }
}
