/**
 * What the constructs other stacks use write into their templates: `AllotClaim` (`Custom::AllotClaim`),
 * `AllotIpAddresses` (a VPC whose CIDR is a claim, split into subnets as CDK splits an AWS IPAM
 * allocation), and on the service's side the claim-resource function's token and who may use it.
 * Bundling is skipped (bundles.test.ts bundles for real).
 */
import { App, RemovalPolicy, Stack, type CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type { IConstruct } from 'constructs';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { AllotClaim, AllotIpAddresses, AllotService, type AllotServiceProps } from '../../lib/cloud/index.ts';
import { REQUEST_RULES } from '../../lib/cloud/requests.ts';

const TOKEN = 'arn:aws:lambda:eu-west-1:111111111111:function:AllotStack-AllotClaimResourceFunction';

function stack() {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Networking');
}

const idOf = (construct: IConstruct) =>
  Stack.of(construct).getLogicalId((construct.node.defaultChild ?? construct) as CfnElement);

describe('AllotClaim', () => {
  it('is a Custom::AllotClaim with the claim spec as its properties, answered within five minutes', () => {
    const s = stack();
    const claim = new AllotClaim(s, 'Asn', {
      serviceToken: TOKEN,
      namespace: 'net',
      poolRef: { kind: 'IndexPool', name: 'asns' },
      within: '64512..65534',
      labels: { team: 'net' },
    });
    const resource = Template.fromStack(s).toJSON().Resources[idOf(claim.resource)];
    expect(resource).toEqual({
      Type: 'Custom::AllotClaim',
      Properties: {
        ServiceToken: TOKEN,
        ServiceTimeout: '300',
        Namespace: 'net',
        Spec: { poolRef: { kind: 'IndexPool', name: 'asns' }, within: '64512..65534' },
        Labels: { team: 'net' },
      },
      UpdateReplacePolicy: 'Delete',
      DeletionPolicy: 'Delete',
    });
    expect(claim.namespace).toBe('net');
  });

  it('names the claim only when given claimName (else the provider derives it), and defaults the namespace', () => {
    const s = stack();
    const named = new AllotClaim(s, 'Named', {
      serviceToken: TOKEN,
      poolRef: { kind: 'IPAddressPool', name: 'gw' },
      claimName: 'edge-gw',
      value: '10.0.0.1',
      reserved: ['10.0.0.2'],
      owner: { kind: 'Stack', name: 'Networking' },
    });
    const unnamed = new AllotClaim(s, 'Unnamed', {
      serviceToken: TOKEN,
      poolRef: { kind: 'IndexPool', name: 'vlans' },
    });
    const resources = Template.fromStack(s).toJSON().Resources;
    expect(resources[idOf(named.resource)].Properties).toMatchObject({
      Namespace: 'default',
      Name: 'edge-gw',
      Spec: { value: '10.0.0.1', reserved: ['10.0.0.2'], owner: { kind: 'Stack', name: 'Networking' } },
    });
    expect(resources[idOf(unnamed.resource)].Properties).not.toHaveProperty('Name');
    expect(resources[idOf(unnamed.resource)].Properties).not.toHaveProperty('Labels');
  });

  it('reads its value, allocation and name from the response Data (Fn::GetAtt)', () => {
    const s = stack();
    const claim = new AllotClaim(s, 'Asn', {
      serviceToken: TOKEN,
      poolRef: { kind: 'IndexPool', name: 'asns' },
    });
    const id = idOf(claim.resource);
    expect(s.resolve(claim.value)).toEqual({ 'Fn::GetAtt': [id, 'Value'] });
    expect(s.resolve(claim.allocationName)).toEqual({ 'Fn::GetAtt': [id, 'AllocationName'] });
    expect(s.resolve(claim.claimName)).toEqual({ 'Fn::GetAtt': [id, 'Name'] });
  });

  it('keeps the claim when the resource leaves the stack, with RETAIN', () => {
    const s = stack();
    new AllotClaim(s, 'Kept', {
      serviceToken: TOKEN,
      poolRef: { kind: 'IndexPool', name: 'asns' },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Template.fromStack(s).hasResource('Custom::AllotClaim', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it.each([
    [{ claimName: 'Not_A_Name' }, /claimName "Not_A_Name" must consist of lowercase/],
    [{ namespace: '-x' }, /namespace "-x"/],
    [{ removalPolicy: RemovalPolicy.SNAPSHOT }, /removalPolicy snapshot is not supported/],
  ])('refuses %o at synth, naming the construct', (extra, message) => {
    const s = stack();
    expect(
      () =>
        new AllotClaim(s, 'Bad', {
          serviceToken: TOKEN,
          poolRef: { kind: 'IndexPool', name: 'asns' },
          ...extra,
        }),
    ).toThrow(message);
  });
});

describe('AllotIpAddresses', () => {
  const subnets = (template: Template) =>
    Object.values(template.findResources('AWS::EC2::Subnet')).map((subnet) => subnet.Properties.CidrBlock);

  it('gives the VPC the CIDR of a claim on the pool, made under the VPC', () => {
    const s = stack();
    const ipAddresses = AllotIpAddresses.fromPool({
      serviceToken: TOKEN,
      namespace: 'net',
      pool: 'vpc-cidrs',
      prefixLength: 20,
      defaultSubnetIpv4NetmaskLength: 24,
    });
    const vpc = new ec2.Vpc(s, 'Vpc', { ipAddresses, maxAzs: 2 });
    const claim = ipAddresses.claimOf(vpc)!;
    expect(claim.node.path).toBe('Networking/Vpc/AllotCidr');
    const template = Template.fromStack(s);
    template.hasResourceProperties('AWS::EC2::VPC', {
      CidrBlock: { 'Fn::GetAtt': [idOf(claim.resource), 'Value'] },
    });
    template.hasResourceProperties('Custom::AllotClaim', {
      Namespace: 'net',
      Spec: { poolRef: { kind: 'IPPrefixPool', name: 'vpc-cidrs' }, prefixLength: 20 },
    });
  });

  it.each([
    ['the default netmask', undefined],
    [
      'mixed netmasks',
      [
        { name: 'Public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 26 },
        { name: 'Private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
        { name: 'Data', subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      ],
    ],
  ])(
    'splits the subnets with Fn::Cidr exactly as CDK does for an AWS IPAM allocation (%s)',
    (_, subnetConfiguration) => {
      const layout = (ipAddresses: ec2.IIpAddresses) => {
        const s = stack();
        new ec2.Vpc(s, 'Vpc', { ipAddresses, maxAzs: 3, subnetConfiguration });
        return subnets(Template.fromStack(s));
      };
      const allot = layout(
        AllotIpAddresses.fromPool({
          serviceToken: TOKEN,
          pool: 'p',
          prefixLength: 18,
          defaultSubnetIpv4NetmaskLength: 24,
        }),
      );
      const ipam = layout(
        ec2.IpAddresses.awsIpamAllocation({
          ipv4IpamPoolId: 'ipam-pool-1',
          ipv4NetmaskLength: 18,
          defaultSubnetIpv4NetmaskLength: 24,
        }),
      );
      expect(allot.length).toBeGreaterThan(0);
      expect(JSON.stringify(allot)).toContain('Fn::Cidr');
      expect(allot).toEqual(ipam);
    },
  );

  it.each([
    ['the default layout (a public and a private subnet per zone)', 20, 2, undefined],
    ['three zones of a /16', 16, 3, undefined],
    [
      'some subnets with a netmask, the rest sharing what is left',
      20,
      3,
      [
        { name: 'Public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 26 },
        { name: 'Private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
        { name: 'Data', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
    ],
  ])(
    'splits the subnets as ec2.IpAddresses.cidr does, without defaultSubnetIpv4NetmaskLength (%s)',
    (_, prefixLength, maxAzs, subnetConfiguration) => {
      const cidr = `10.${prefixLength}.0.0/${prefixLength}`;
      const layout = (ipAddresses: ec2.IIpAddresses) => {
        const s = stack();
        new ec2.Vpc(s, 'Vpc', { ipAddresses, maxAzs, subnetConfiguration });
        // Each subnet's CidrBlock, with the VPC's CIDR (the claim's value at deploy time) as `cidr`.
        return subnets(Template.fromStack(s)).map((block) => evaluateCidr(block, cidr));
      };
      const allot = layout(AllotIpAddresses.fromPool({ serviceToken: TOKEN, pool: 'p', prefixLength }));
      const concrete = layout(ec2.IpAddresses.cidr(cidr));
      expect(allot.length).toBeGreaterThan(maxAzs);
      expect(allot).toEqual(concrete);
    },
  );

  it('refuses subnets that do not fit, as CDK does', () => {
    const noRoom = AllotIpAddresses.fromPool({ serviceToken: TOKEN, pool: 'p', prefixLength: 28 });
    expect(() => new ec2.Vpc(stack(), 'Vpc', { ipAddresses: noRoom, maxAzs: 2 })).toThrow(
      /subnets are \/16 to \/28/,
    );
    const tooSmall = AllotIpAddresses.fromPool({
      serviceToken: TOKEN,
      pool: 'p',
      prefixLength: 24,
      defaultSubnetIpv4NetmaskLength: 24,
    });
    expect(() => new ec2.Vpc(stack(), 'Vpc', { ipAddresses: tooSmall, maxAzs: 2 })).toThrow(/not big enough/);
  });

  it('makes one claim per VPC when one instance serves two', () => {
    const s = stack();
    const ipAddresses = AllotIpAddresses.fromPool({
      serviceToken: TOKEN,
      pool: 'p',
      prefixLength: 20,
      defaultSubnetIpv4NetmaskLength: 24,
    });
    const a = new ec2.Vpc(s, 'A', { ipAddresses, maxAzs: 1 });
    const b = new ec2.Vpc(s, 'B', { ipAddresses, maxAzs: 1 });
    const template = Template.fromStack(s);
    template.resourceCountIs('Custom::AllotClaim', 2);
    for (const vpc of [a, b])
      expect(template.toJSON().Resources[idOf(vpc)].Properties.CidrBlock).toEqual({
        'Fn::GetAtt': [idOf(ipAddresses.claimOf(vpc)!.resource), 'Value'],
      });
  });
});

/**
 * A subnet's CidrBlock as CloudFormation works it out: `Fn::Select` of `Fn::Cidr` of the VPC's CidrBlock
 * (`Fn::GetAtt`, here `vpcCidr`), or a literal.
 */
function evaluateCidr(expression: unknown, vpcCidr: string): string {
  const value = (node: unknown): unknown => {
    if (typeof node === 'string' || typeof node === 'number') return node;
    const [fn, args] = Object.entries(node as Record<string, unknown[]>)[0]!;
    if (fn === 'Fn::GetAtt') return vpcCidr;
    if (fn === 'Fn::Select') return (value(args[1]) as string[])[Number(value(args[0]))];
    if (fn === 'Fn::Cidr') {
      const [block, count, bits] = args.map(value) as [string, number, number];
      const [address, length] = ipaddr.parseCIDR(block);
      const start =
        (Number(BigInt(`0x${Buffer.from(address.toByteArray()).toString('hex')}`)) >>> (32 - length)) <<
        (32 - length);
      return Array.from({ length: Number(count) }, (_, i) => {
        const bytes = (start + i * 2 ** Number(bits)) >>> 0;
        return `${ipaddr.fromByteArray([bytes >>> 24, (bytes >>> 16) & 255, (bytes >>> 8) & 255, bytes & 255]).toString()}/${32 - Number(bits)}`;
      });
    }
    throw new Error(`unexpected ${fn}`);
  };
  return value(expression) as string;
}

describe('AllotService, for other stacks', () => {
  function service(props: AllotServiceProps = {}) {
    const s = stack();
    const allot = new AllotService(s, 'Allot', props);
    return { s, allot, template: Template.fromStack(s) };
  }

  it('hands out the claim-resource function’s ARN as the claim service token', () => {
    const { s, allot } = service();
    expect(s.resolve(allot.claimServiceToken)).toEqual({
      'Fn::GetAtt': [idOf(allot.claimResourceFunction), 'Arn'],
    });
  });

  it('lets no other account invoke it unless consumers names them', () => {
    const { allot, template } = service();
    const arn = { 'Fn::GetAtt': [idOf(allot.claimResourceFunction), 'Arn'] };
    expect(
      Object.values(template.findResources('AWS::Lambda::Permission', { Properties: { FunctionName: arn } })),
    ).toEqual([]);
  });

  it('lets the accounts and the organization consumers names invoke it, and nothing else', () => {
    const { allot, template } = service({
      consumers: { accounts: ['222222222222', '333333333333'], organizationId: 'o-a1b2c3d4e5' },
    });
    const arn = { 'Fn::GetAtt': [idOf(allot.claimResourceFunction), 'Arn'] };
    const permissions = Object.values(
      template.findResources('AWS::Lambda::Permission', { Properties: { FunctionName: arn } }),
    ).map((permission) => permission.Properties);
    expect(permissions).toEqual(
      expect.arrayContaining([
        { Action: 'lambda:InvokeFunction', FunctionName: arn, Principal: '222222222222' },
        { Action: 'lambda:InvokeFunction', FunctionName: arn, Principal: '333333333333' },
        {
          Action: 'lambda:InvokeFunction',
          FunctionName: arn,
          Principal: '*',
          PrincipalOrgID: 'o-a1b2c3d4e5',
        },
      ]),
    );
    expect(permissions).toHaveLength(3);
  });

  it.each([
    [{ accounts: ['12345'] }, /not a 12-digit account id/],
    [{ organizationId: 'my-org' }, /not an organization id/],
  ])('refuses consumers %o', (consumers, message) => {
    expect(() => service({ consumers })).toThrow(message);
  });

  it('passes its token to a claim in another stack of the app as a cross-stack reference', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const platform = new Stack(app, 'Platform');
    const allot = new AllotService(platform, 'Allot');
    const team = new Stack(app, 'Team');
    new AllotClaim(team, 'Vlan', {
      serviceToken: allot.claimServiceToken,
      poolRef: { kind: 'IndexPool', name: 'vlans' },
    });
    Template.fromStack(team).hasResourceProperties('Custom::AllotClaim', {
      ServiceToken: { 'Fn::ImportValue': Match.stringLikeRegexp('^Platform:') },
    });
  });

  it('builds its request rules from lib/cloud/requests.ts, pattern for pattern', () => {
    const { allot, template } = service();
    for (const [rule, construct] of [
      [REQUEST_RULES[0]!, allot.claimRequestRule],
      [REQUEST_RULES[1]!, allot.releaseRequestRule],
    ] as const) {
      const resource = template.toJSON().Resources[idOf(construct)];
      expect(resource.Properties.EventPattern).toEqual(rule.pattern);
      expect(resource.Properties.Targets[0].Arn).toEqual({
        'Fn::GetAtt': [idOf(allot.functions[rule.target]), 'Arn'],
      });
    }
  });
});
