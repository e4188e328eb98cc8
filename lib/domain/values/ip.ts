/**
 * IPAddressPool and IPPrefixPool: addresses, prefixes, their canonical forms and names, and the pools'
 * candidates (api.md, "Pools", "Allocation objects", "Claim").
 *
 * An address's slot is its number (32 or 128 bits); a prefix's slot is its sub-prefix number, the
 * network address shifted right by the host bits, so consecutive aligned sub-prefixes have consecutive
 * slots and a pool of 2^16 /64s is one segment, like a /16 of addresses.
 *
 * Parsing is written here rather than delegated to ipaddr.js on purpose: ipaddr.js accepts octal and
 * hex IPv4 octets (`010.0.0.1`, `0x1.2.3.4`), 5-digit IPv6 groups and zone ids, and reads `::1.2.3.4`
 * as `::ffff:1.2.3.4`; the contract rejects the first three and RFC 4291 says the last is `::102:304`.
 */
import type { Cause } from '../errors.ts';
import {
  countCandidates,
  intersectSegments,
  overlaps,
  subtractSegments,
  type Segment,
} from './candidates.ts';
import {
  parsed,
  problem,
  type CheckedPoolSpec,
  type Parsed,
  type ParsedValue,
  type PoolSpace,
  type ValueKind,
} from './values.ts';

export type Family = 4 | 6;

/** An address as its number. */
export interface Address {
  readonly family: Family;
  readonly bits: bigint;
}

/** A CIDR prefix, always masked: the host bits of `network` are zero. */
export interface Prefix {
  readonly family: Family;
  readonly network: bigint;
  readonly length: number;
}

/** A pool's prefixes may number at most this many, as an IndexPool's ranges. */
const MAX_PREFIXES = 1000;

export function familyBits(family: Family): number {
  return family === 4 ? 32 : 128;
}

// ---------------------------------------------------------------------------------------------------
// Reading addresses and prefixes

/** 0–255 without a leading zero: `010` is octal to inet_aton and decimal to others, so it is refused. */
const DECIMAL_OCTET = /^(0|[1-9][0-9]{0,2})$/;
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;
const PREFIX_LENGTH = /^(0|[1-9][0-9]{0,2})$/;

function parseIPv4(text: string): bigint | undefined {
  const octets = text.split('.');
  if (octets.length !== 4) return undefined;
  let bits = 0n;
  for (const octet of octets) {
    if (!DECIMAL_OCTET.test(octet) || Number(octet) > 255) return undefined;
    bits = (bits << 8n) | BigInt(octet);
  }
  return bits;
}

/** RFC 4291 §2.2: eight groups of 1–4 hex digits, at most one `::`, optionally ending in a dotted quad. */
function parseIPv6(text: string): bigint | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const compressed = halves.length === 2;
  // A dotted quad only ever ends the address: never just before `::`.
  const head = groupsOf(halves[0]!, !compressed);
  const tail = compressed ? groupsOf(halves[1]!, true) : [];
  if (head === undefined || tail === undefined) return undefined;
  const written = head.length + tail.length;
  // `::` stands for at least one zero group.
  if (compressed ? written > 7 : written !== 8) return undefined;
  const groups = [...head, ...new Array<number>(8 - written).fill(0), ...tail];
  return groups.reduce((bits, group) => (bits << 16n) | BigInt(group), 0n);
}

/** The 16-bit groups of one side of `::` (an empty side has none). */
function groupsOf(text: string, mayEndInIPv4: boolean): number[] | undefined {
  if (text === '') return [];
  const parts = text.split(':');
  const groups: number[] = [];
  for (const [i, part] of parts.entries()) {
    const ipv4 = mayEndInIPv4 && i === parts.length - 1 ? parseIPv4(part) : undefined;
    if (HEX_GROUP.test(part)) groups.push(parseInt(part, 16));
    else if (ipv4 !== undefined) groups.push(Number(ipv4 >> 16n), Number(ipv4 & 0xffffn));
    else return undefined;
  }
  return groups;
}

/** Reads an address as a user writes it: a strict IPv4 dotted quad or any RFC 4291 IPv6 spelling. */
export function parseAddress(input: unknown): Parsed<Address> {
  if (typeof input !== 'string') return problem('must be an IP address string');
  if (input.includes(':')) {
    if (input.includes('%')) return problem(`"${clip(input)}" has a zone id; write the address without it`);
    const bits = parseIPv6(input);
    return bits === undefined
      ? problem(`"${clip(input)}" is not an IPv6 address`)
      : parsed({ family: 6, bits });
  }
  if (/(^|\.)0[0-9]/.test(input)) {
    return problem(`"${clip(input)}" has an octet with a leading zero (octal or decimal is ambiguous)`);
  }
  const bits = parseIPv4(input);
  if (bits === undefined) {
    return problem(`"${clip(input)}" is not an IPv4 address (four decimal octets 0-255)`);
  }
  return parsed({ family: 4, bits });
}

/** Reads `address/length`; host bits are masked, so `10.0.0.5/24` is `10.0.0.0/24`. */
export function parsePrefix(input: unknown): Parsed<Prefix> {
  if (typeof input !== 'string') return problem('must be a CIDR string "address/length"');
  const parts = input.split('/');
  if (parts.length !== 2) return problem(`"${clip(input)}" is not a CIDR "address/length"`);
  const address = parseAddress(parts[0]);
  if (!address.ok) return address;
  const { family, bits } = address.value;
  const length = parts[1]!;
  if (!PREFIX_LENGTH.test(length) || Number(length) > familyBits(family)) {
    return problem(`"${clip(input)}" has a prefix length that is not a decimal 0..${familyBits(family)}`);
  }
  return parsed(maskedPrefix(family, bits, Number(length)));
}

function hostMask(family: Family, length: number): bigint {
  return (1n << BigInt(familyBits(family) - length)) - 1n;
}

export function maskedPrefix(family: Family, bits: bigint, length: number): Prefix {
  return { family, network: bits & ~hostMask(family, length), length };
}

/** The prefix's addresses, as slots. */
export function prefixRange(prefix: Prefix): Segment {
  return { first: prefix.network, last: prefix.network | hostMask(prefix.family, prefix.length) };
}

/** The prefix's aligned sub-prefixes of `subLength`, as sub-prefix numbers (slots of an IPPrefixPool). */
export function subPrefixRange(prefix: Prefix, subLength: number): Segment {
  const shift = BigInt(familyBits(prefix.family) - subLength);
  const range = prefixRange(prefix);
  return { first: range.first >> shift, last: range.last >> shift };
}

function clip(text: string): string {
  return text.length > 50 ? `${text.slice(0, 50)}…` : text;
}

// ---------------------------------------------------------------------------------------------------
// Writing addresses and prefixes

function ipv4Octets(bits: bigint): number[] {
  return [24n, 16n, 8n, 0n].map((shift) => Number((bits >> shift) & 0xffn));
}

function ipv6Groups(bits: bigint): number[] {
  return Array.from({ length: 8 }, (_, i) => Number((bits >> BigInt(112 - 16 * i)) & 0xffffn));
}

/**
 * RFC 5952 §4: lowercase hex, no leading zeros, the longest run of two or more zero groups as `::`
 * (the first on a tie). Every IPv6 address, IPv4-mapped ones included, is written in hex groups
 * (`::ffff:102:304`, not the §5 `::ffff:1.2.3.4`): one rule for all, so the canonical form never
 * depends on what an address means and reading it back always gives the same text.
 */
function formatIPv6(bits: bigint): string {
  const groups = ipv6Groups(bits);
  const hex = groups.map((group) => group.toString(16));
  const run = longestZeroRun(groups);
  if (run.length < 2) return hex.join(':');
  return `${hex.slice(0, run.start).join(':')}::${hex.slice(run.start + run.length).join(':')}`;
}

function longestZeroRun(groups: readonly number[]): { start: number; length: number } {
  let best = { start: 0, length: 0 };
  let start = 0;
  for (let i = 0; i <= groups.length; i++) {
    if (i < groups.length && groups[i] === 0) continue;
    // Strictly longer, so the first of equal runs wins.
    if (i - start > best.length) best = { start, length: i - start };
    start = i + 1;
  }
  return best;
}

export function formatAddress(address: Address): string {
  return address.family === 4 ? ipv4Octets(address.bits).join('.') : formatIPv6(address.bits);
}

export function formatPrefix(prefix: Prefix): string {
  return `${formatAddress({ family: prefix.family, bits: prefix.network })}/${prefix.length}`;
}

// ---------------------------------------------------------------------------------------------------
// Values and deterministic names

function addressValue(address: Address): ParsedValue {
  return { value: formatAddress(address), slot: address.bits, family: address.family };
}

export function prefixValue(prefix: Prefix): ParsedValue {
  const slot = prefix.network >> BigInt(familyBits(prefix.family) - prefix.length);
  return { value: formatPrefix(prefix), slot, family: prefix.family, length: prefix.length };
}

/** The sub-prefix of `length` numbered `slot`. */
export function prefixAt(family: Family, length: number, slot: bigint): Prefix {
  return { family, network: slot << BigInt(familyBits(family) - length), length };
}

function addressOf(value: ParsedValue): Address {
  if (value.family === undefined) throw new TypeError(`${value.value} is not an IP address value`);
  return { family: value.family, bits: value.slot };
}

function prefixOf(value: ParsedValue): Prefix {
  if (value.family === undefined || value.length === undefined) {
    throw new TypeError(`${value.value} is not an IP prefix value`);
  }
  return prefixAt(value.family, value.length, value.slot);
}

/** `10-42-1-7`, or the 8 IPv6 groups in full (`2001-0db8-0000-…`): fixed width, so names never clash. */
function nameTail(address: Address): string {
  if (address.family === 4) return ipv4Octets(address.bits).join('-');
  return ipv6Groups(address.bits)
    .map((group) => group.toString(16).padStart(4, '0'))
    .join('-');
}

const NAME_GROUP = /^[0-9a-f]{4}$/;

/**
 * Splits `<pool>-<address tail>` into its pool tokens and address, accepting only canonical tails.
 * The last token tells the family: an IPv6 group always has 4 hex digits, an IPv4 octet at most 3.
 */
function splitAddressName(tokens: readonly string[]): { pool: string; address: Address } | undefined {
  const family: Family = NAME_GROUP.test(tokens[tokens.length - 1] ?? '') ? 6 : 4;
  const count = family === 4 ? 4 : 8;
  const pool = tokens.slice(0, -count).join('-');
  const tail = tokens.slice(-count);
  if (pool === '' || tail.length !== count) return undefined;
  if (family === 6) {
    if (!tail.every((token) => NAME_GROUP.test(token))) return undefined;
    return { pool, address: { family, bits: BigInt(`0x${tail.join('')}`) } };
  }
  const bits = parseIPv4(tail.join('.'));
  return bits === undefined ? undefined : { pool, address: { family, bits } };
}

export const ipAddressValues: ValueKind = {
  allocationKind: 'IPAddress',
  parse(input) {
    const address = parseAddress(input);
    return address.ok ? parsed(addressValue(address.value)) : address;
  },
  allocationName: (pool, value) => `${pool}-${nameTail(addressOf(value))}`,
  parseAllocationName(name) {
    const split = splitAddressName(name.split('-'));
    return split && { pool: split.pool, value: addressValue(split.address) };
  },
  specValue: (value) => value.value,
};

export const ipPrefixValues: ValueKind = {
  allocationKind: 'IPPrefix',
  parse(input) {
    const prefix = parsePrefix(input);
    return prefix.ok ? parsed(prefixValue(prefix.value)) : prefix;
  },
  allocationName(pool, value) {
    const prefix = prefixOf(value);
    return `${pool}-${nameTail({ family: prefix.family, bits: prefix.network })}-${prefix.length}`;
  },
  parseAllocationName(name) {
    const tokens = name.split('-');
    const length = tokens.pop() ?? '';
    if (!PREFIX_LENGTH.test(length)) return undefined;
    const split = splitAddressName(tokens);
    if (!split || Number(length) > familyBits(split.address.family)) return undefined;
    const prefix = maskedPrefix(split.address.family, split.address.bits, Number(length));
    // Host bits set: not a name the server writes, so not this prefix's deterministic name.
    if (prefix.network !== split.address.bits) return undefined;
    return { pool: split.pool, value: prefixValue(prefix) };
  },
  specValue: (value) => value.value,
};

// ---------------------------------------------------------------------------------------------------
// Pool specs

/** Checks `spec.prefixes`: 1..1000 CIDRs, one family, none overlapping (nested or identical included). */
export function checkPrefixes(input: unknown, causes: Cause[]): Prefix[] | undefined {
  if (!Array.isArray(input) || input.length === 0) {
    causes.push({ field: 'spec.prefixes', message: 'must be a list of at least one CIDR prefix' });
    return undefined;
  }
  if (input.length > MAX_PREFIXES) {
    causes.push({ field: 'spec.prefixes', message: `must hold at most ${MAX_PREFIXES} prefixes` });
    return undefined;
  }
  const before = causes.length;
  const seen: { index: number; prefix: Prefix }[] = [];
  input.forEach((item: unknown, i) => {
    const field = `spec.prefixes[${i}]`;
    const prefix = parsePrefix(item);
    if (!prefix.ok) {
      causes.push({ field, message: prefix.problem });
      return;
    }
    const text = formatPrefix(prefix.value);
    const first = seen[0];
    if (first && first.prefix.family !== prefix.value.family) {
      causes.push({
        field,
        message: `${field} (${text}) is IPv${prefix.value.family} but spec.prefixes[${first.index}] (${formatPrefix(first.prefix)}) is IPv${first.prefix.family}; a pool holds one family`,
      });
      return;
    }
    const range = prefixRange(prefix.value);
    const clash = seen.find((other) => overlaps(prefixRange(other.prefix), range));
    if (clash) {
      causes.push({
        field,
        message: `${field} (${text}) overlaps with spec.prefixes[${clash.index}] (${formatPrefix(clash.prefix)})`,
      });
    }
    seen.push({ index: i, prefix: prefix.value });
  });
  return causes.length === before ? seen.map((entry) => entry.prefix) : undefined;
}

/** Something a pool spec or claim names: an address or a CIDR, with its canonical text. */
interface Span {
  readonly text: string;
  readonly family: Family;
  readonly range: Segment;
}

function addressSpan(address: Address): Span {
  return { text: formatAddress(address), family: address.family, range: point(address.bits) };
}

function prefixSpan(prefix: Prefix): Span {
  return { text: formatPrefix(prefix), family: prefix.family, range: prefixRange(prefix) };
}

/** Why a span is not part of the pool (a foreign family, or outside every prefix), or undefined. */
function placementProblem(span: Span, prefixes: readonly Prefix[]): string | undefined {
  const poolFamily = prefixes[0]!.family;
  if (span.family !== poolFamily) return `${span.text} is IPv${span.family} but the pool is IPv${poolFamily}`;
  const inside = prefixes.some((prefix) => {
    const outer = prefixRange(prefix);
    return outer.first <= span.range.first && span.range.last <= outer.last;
  });
  return inside ? undefined : `${span.text} is not inside any of spec.prefixes`;
}

/**
 * Records a cause when the span lies outside the pool. Without checked prefixes (they have causes
 * of their own) there is no pool to compare with, and only the span's syntax was checked.
 */
function checkPlacement(
  field: string,
  span: Span,
  prefixes: readonly Prefix[] | undefined,
  causes: Cause[],
): boolean {
  const message = prefixes && placementProblem(span, prefixes);
  if (message) causes.push({ field, message });
  return message === undefined;
}

/** An `exclude` entry: an address or a CIDR, written back in the form it was given. */
function parseExclusion(input: unknown): Parsed<Span> {
  if (typeof input === 'string' && input.includes('/')) {
    const prefix = parsePrefix(input);
    return prefix.ok ? parsed(prefixSpan(prefix.value)) : prefix;
  }
  if (typeof input !== 'string') return problem('must be an address or a CIDR');
  const address = parseAddress(input);
  return address.ok ? parsed(addressSpan(address.value)) : address;
}

function checkExclude(input: unknown, prefixes: readonly Prefix[] | undefined, causes: Cause[]): Span[] {
  if (!Array.isArray(input)) {
    causes.push({ field: 'spec.exclude', message: 'must be a list of addresses or CIDRs' });
    return [];
  }
  const exclusions: Span[] = [];
  input.forEach((item: unknown, i) => {
    const field = `spec.exclude[${i}]`;
    const exclusion = parseExclusion(item);
    if (!exclusion.ok) causes.push({ field, message: exclusion.problem });
    else if (checkPlacement(field, exclusion.value, prefixes, causes)) exclusions.push(exclusion.value);
  });
  return exclusions;
}

function checkGateway(
  input: unknown,
  prefixes: readonly Prefix[] | undefined,
  causes: Cause[],
): Address | undefined {
  const gateway = parseAddress(input);
  if (!gateway.ok) {
    causes.push({ field: 'spec.gateway', message: gateway.problem });
    return undefined;
  }
  return checkPlacement('spec.gateway', addressSpan(gateway.value), prefixes, causes)
    ? gateway.value
    : undefined;
}

function point(slot: bigint): Segment {
  return { first: slot, last: slot };
}

/**
 * The PiVirt rule: an IPv4 prefix up to /30 loses its network and broadcast address, an IPv6 prefix
 * up to /126 its first address (the subnet-router anycast address; IPv6 has no broadcast). Longer
 * prefixes are point-to-point links or single hosts (RFC 3021, RFC 6164) and keep every address.
 */
function networkAndBroadcast(prefix: Prefix): Segment[] {
  const { first, last } = prefixRange(prefix);
  if (prefix.family === 4) return prefix.length <= 30 ? [point(first), point(last)] : [];
  return prefix.length <= 126 ? [point(first)] : [];
}

/** Checks an IPAddressPool's `prefixes`, `exclude`, `gateway` and `excludeNetworkAndBroadcast`. */
export function checkIPAddressPoolSpec(spec: Record<string, unknown>): CheckedPoolSpec | { causes: Cause[] } {
  const causes: Cause[] = [];
  const prefixes = checkPrefixes(spec.prefixes, causes);
  const exclude = spec.exclude === undefined ? undefined : checkExclude(spec.exclude, prefixes, causes);
  const gateway = spec.gateway === undefined ? undefined : checkGateway(spec.gateway, prefixes, causes);
  const { excludeNetworkAndBroadcast } = spec;
  if (excludeNetworkAndBroadcast !== undefined && typeof excludeNetworkAndBroadcast !== 'boolean') {
    causes.push({ field: 'spec.excludeNetworkAndBroadcast', message: 'must be true or false' });
  }
  if (causes.length > 0 || prefixes === undefined) return { causes };

  const edges = excludeNetworkAndBroadcast === true;
  const removed = [
    ...(exclude ?? []).map((exclusion) => exclusion.range),
    ...(gateway ? [point(gateway.bits)] : []),
    ...(edges ? prefixes.flatMap(networkAndBroadcast) : []),
  ];
  const segments = subtractSegments(prefixes.map(prefixRange), removed);

  const canonical: Record<string, unknown> = { prefixes: prefixes.map(formatPrefix) };
  if (exclude) canonical.exclude = exclude.map((exclusion) => exclusion.text);
  if (gateway) canonical.gateway = formatAddress(gateway);
  if (excludeNetworkAndBroadcast !== undefined) {
    canonical.excludeNetworkAndBroadcast = excludeNetworkAndBroadcast;
  }
  return { spec: canonical, space: ipAddressPoolSpace(prefixes, segments, edges) };
}

/** Reads a claim's `within` and checks it lies inside one of the pool's prefixes. */
export function checkWithin(
  input: unknown,
  prefixes: readonly Prefix[],
  causes: Cause[],
): Prefix | undefined {
  const within = parsePrefix(input);
  if (!within.ok) {
    causes.push({ field: 'spec.within', message: within.problem });
    return undefined;
  }
  return checkPlacement('spec.within', prefixSpan(within.value), prefixes, causes) ? within.value : undefined;
}

/** Reads a claim's `reserved` addresses; they need not lie in the pool, but must be of its family. */
function checkReserved(input: unknown, family: Family, causes: Cause[]): Segment[] {
  if (!Array.isArray(input)) {
    causes.push({ field: 'spec.reserved', message: 'must be a list of addresses' });
    return [];
  }
  const reserved: Segment[] = [];
  input.forEach((item: unknown, i) => {
    const field = `spec.reserved[${i}]`;
    const address = parseAddress(item);
    if (!address.ok) causes.push({ field, message: address.problem });
    else if (address.value.family !== family) {
      causes.push({
        field,
        message: `${formatAddress(address.value)} is IPv${address.value.family} but the pool is IPv${family}`,
      });
    } else reserved.push(point(address.value.bits));
  });
  return reserved;
}

function ipAddressPoolSpace(
  prefixes: readonly Prefix[],
  segments: readonly Segment[],
  excludeNetworkAndBroadcast: boolean,
): PoolSpace {
  const family = prefixes[0]!.family;
  return {
    kind: 'IPAddressPool',
    segments,
    total: countCandidates(segments),
    valueAt: (slot) => addressValue({ family, bits: slot }),
    fits: (value) => value.family === family && value.length === undefined,
    claimSegments(within, reserved) {
      const causes: Cause[] = [];
      let result = [...segments];
      if (within !== undefined) {
        const prefix = checkWithin(within, prefixes, causes);
        if (prefix) result = intersectSegments(result, prefixRange(prefix));
        // A claim within a subnet must not get that subnet's network or broadcast address either.
        if (prefix && excludeNetworkAndBroadcast) {
          result = subtractSegments(result, networkAndBroadcast(prefix));
        }
      }
      if (reserved !== undefined) result = subtractSegments(result, checkReserved(reserved, family, causes));
      return causes.length > 0 ? { causes } : { segments: result };
    },
  };
}
