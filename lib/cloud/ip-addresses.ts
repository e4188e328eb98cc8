/**
 * `AllotIpAddresses`: a VPC's IPv4 CIDR from an Allot IPPrefixPool, as `ec2.IpAddresses.awsIpamAllocation`
 * takes it from an AWS IPAM pool. The CIDR is an `AllotClaim`'s value, known at deploy time only, so the
 * subnets are split from the VPC's `CidrBlock` with `Fn::Cidr` (`cidrSplitToCfnExpression`, which CDK
 * exports), at offsets worked out here from the claim's prefix length:
 *
 * - with `defaultSubnetIpv4NetmaskLength`, exactly as CDK's `AwsIpam` does (aws-cdk-lib/aws-ec2/lib/
 *   ip-addresses.js: `calculateCidrSplits` over the netmask);
 * - without it, as `ec2.IpAddresses.cidr` does (its `NetworkBuilder`, aws-ec2/lib/network-util.js): the
 *   subnets that give a `cidrMask` first, then the rest share what is left equally. AWS's IPAM variant
 *   throws there, so swapping `IpAddresses.cidr('10.0.0.0/20')` for a claim of a /20 changes one line.
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
   * @default none: subnets without a `cidrMask` share the space the others leave, as under
   * `ec2.IpAddresses.cidr`
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

/** The netmasks `ec2.IpAddresses.cidr` allows a subnet (`NetworkBuilder.addSubnets`). */
const CIDR_SUBNET_NETMASKS = { min: 16, max: 28 };

/**
 * `ec2.IpAddresses.cidr`'s layout, relative to the VPC's start: each subnet that gives a netmask, in order,
 * at the next offset aligned to its size; then those that give none, in order, each the largest power of
 * two that fits the rest divided among them (`maskForRemainingSubnets`). Splits come back in the
 * subnets' order.
 */
export function splitLikeCidr(rootNetmask: number, netmasks: readonly (number | undefined)[]): CidrSplit[] {
  const space = 2 ** (32 - rootNetmask);
  let next = 0;
  const place = (netmask: number): CidrSplit => {
    if (netmask < CIDR_SUBNET_NETMASKS.min || netmask > CIDR_SUBNET_NETMASKS.max)
      throw new Error(
        `AllotIpAddresses: a subnet of /${netmask}: subnets are /${CIDR_SUBNET_NETMASKS.min} to /${CIDR_SUBNET_NETMASKS.max}, as ec2.IpAddresses.cidr has them`,
      );
    const size = 2 ** (32 - netmask);
    const offset = Math.ceil(next / size) * size;
    if (offset + size > space)
      throw new Error(
        `AllotIpAddresses: a subnet of /${netmask} exceeds the space left in the VPC's /${rootNetmask}`,
      );
    next = offset + size;
    return { count: 2 ** (netmask - rootNetmask), netmask, index: offset / size };
  };
  const given = netmasks.map((netmask) => (netmask === undefined ? undefined : place(netmask)));
  const without = netmasks.filter((netmask) => netmask === undefined).length;
  if (without === 0) return given as CidrSplit[];
  const shared = 32 - Math.floor(Math.log2(Math.floor((space - next) / without)));
  return given.map((split) => split ?? place(shared));
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
    const { prefixLength, defaultSubnetIpv4NetmaskLength: fallback } = this.props;
    const netmasks = input.requestedSubnets.map(({ configuration }) => configuration.cidrMask ?? fallback);
    const splits =
      fallback === undefined
        ? splitLikeCidr(prefixLength, netmasks)
        : calculateCidrSplits(prefixLength, netmasks as number[]);
    return {
      allocatedSubnets: splits.map((split) => ({ cidr: ec2.cidrSplitToCfnExpression(input.vpcCidr, split) })),
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
