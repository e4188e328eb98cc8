/** What `allot get` and `allot describe` print: kubectl-like tables, utilisation bars, pool maps. */
import { poolInfoByAllocationKind, poolKindInfo, type PoolKind } from '../domain/kinds.ts';
import type { Segment } from '../domain/values/candidates.ts';
import { formatAddress, parsePrefix, prefixRange } from '../domain/values/ip.ts';
import { parseRange } from '../domain/values/ranges.ts';
import { poolSpecChecker, valueKind } from '../domain/values/spaces.ts';

type ApiObject = Record<string, any>;

export interface Column {
  header: string;
  value: (object: ApiObject) => string;
  /** Only in `-o wide`. */
  wide?: boolean;
}

/** Columns separated by three spaces, each as wide as its widest cell; the last is not padded. */
export function renderTable(columns: readonly Column[], objects: readonly ApiObject[], wide = false): string {
  const shown = columns.filter((column) => wide || !column.wide);
  const rows = [shown.map((c) => c.header), ...objects.map((o) => shown.map((c) => c.value(o)))];
  const widths = shown.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

const BAR_WIDTH = 10;

/** `[###.......]  30%`: what share of the candidates is held; `<1%` when some but under one percent. */
export function utilisationBar(total: bigint, free: bigint): string {
  const used = total > free ? total - free : 0n;
  if (total === 0n) return `[${'.'.repeat(BAR_WIDTH)}]    -`;
  let filled = Number((used * BigInt(BAR_WIDTH) + total / 2n) / total);
  if (used > 0n && filled === 0) filled = 1;
  const percent = (used * 100n) / total;
  const label = used > 0n && percent === 0n ? '<1%' : `${percent}%`;
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${label.padStart(4)}`;
}

export function condition(object: ApiObject, type: string): ApiObject | undefined {
  return (object.status?.conditions ?? []).find((c: ApiObject) => c.type === type);
}

const poolRef = (ref: ApiObject | undefined) =>
  ref ? `${ref.namespace ? `${ref.namespace}/` : ''}${ref.kind}/${ref.name}` : '<none>';

export function candidates(pool: ApiObject): string {
  const spec = pool.spec ?? {};
  if (pool.kind === 'IndexPool') return (spec.ranges ?? []).join(',');
  // A carved pool's prefixes are its claim's value (status.prefixes).
  const prefixes = (spec.prefixes ?? pool.status?.prefixes ?? []).join(',');
  if (pool.kind !== 'IPPrefixPool') return prefixes;
  const lengths = spec.allocationPrefixLengths;
  return `${prefixes} as /${lengths ? `${lengths.min}../${lengths.max}` : spec.allocationPrefixLength}`;
}

export const POOL_COLUMNS: readonly Column[] = [
  { header: 'NAME', value: (o) => o.metadata.name },
  { header: 'KIND', value: (o) => o.kind },
  { header: 'ALLOCATED', value: (o) => String(o.status?.allocated ?? 0) },
  { header: 'TOTAL', value: (o) => o.status?.total ?? '' },
  { header: 'FREE', value: (o) => o.status?.free ?? '' },
  // Present on a pool that quarantines or still holds values back (docs/leases.md): part of neither.
  { header: 'QUARANTINED', value: (o) => o.status?.quarantined ?? '', wide: true },
  { header: 'AVAILABLE', value: (o) => condition(o, 'Available')?.status ?? 'Unknown' },
  {
    header: 'UTILISATION',
    value: (o) => utilisationBar(BigInt(o.status?.total ?? '0'), BigInt(o.status?.free ?? '0')),
  },
  { header: 'RECLAIM', value: (o) => o.spec?.reclaimPolicy ?? '', wide: true },
  { header: 'CANDIDATES', value: candidates, wide: true },
];

export const CLAIM_COLUMNS: readonly Column[] = [
  { header: 'NAME', value: (o) => o.metadata.name },
  { header: 'POOL', value: (o) => poolRef(o.spec?.poolRef) },
  { header: 'VALUE', value: (o) => o.status?.value ?? '<none>' },
  { header: 'ALLOCATED', value: (o) => condition(o, 'Allocated')?.status ?? 'Unknown' },
  { header: 'REASON', value: (o) => condition(o, 'Allocated')?.reason ?? '' },
  { header: 'WITHIN', value: (o) => o.spec?.within ?? '', wide: true },
  {
    header: 'OWNER',
    value: (o) => (o.spec?.owner ? `${o.spec.owner.kind}/${o.spec.owner.name}` : ''),
    wide: true,
  },
  { header: 'ALLOCATION', value: (o) => o.status?.allocationRef?.name ?? '', wide: true },
  { header: 'LEASE-ENDS', value: (o) => o.status?.leaseExpiresAt ?? '', wide: true },
];

function claimOf(o: ApiObject): string {
  const ref = o.spec?.claimRef;
  if (!ref) return '<none>';
  const name = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
  return ref.uid ? name : `${name} (unbound)`;
}

function valueOf(o: ApiObject): string {
  const field = poolInfoByAllocationKind(o.kind)?.valueField;
  return field ? String(o.spec?.[field] ?? '') : '';
}

export const ALLOCATION_COLUMNS: readonly Column[] = [
  { header: 'NAME', value: (o) => o.metadata.name },
  { header: 'POOL', value: (o) => poolRef(o.spec?.poolRef) },
  { header: 'VALUE', value: valueOf },
  { header: 'CLAIM', value: claimOf },
  { header: 'VALID', value: (o) => condition(o, 'Valid')?.status ?? 'Unknown' },
  { header: 'REASON', value: (o) => condition(o, 'Valid')?.reason ?? '', wide: true },
  {
    header: 'OWNER',
    value: (o) => (o.spec?.owner ? `${o.spec.owner.kind}/${o.spec.owner.name}` : ''),
    wide: true,
  },
];

/** `acme (max 2), *`: a pool's spec.sharedWith on one line. */
function sharedWithText(entries: readonly ApiObject[]): string {
  if (entries.length === 0) return '<none>';
  return entries
    .map((e) => `${e.namespace}${e.maxAllocations === undefined ? '' : ` (max ${e.maxAllocations})`}`)
    .join(', ');
}

export interface Run {
  state: 'taken' | 'free' | 'excluded';
  first: string;
  last: string;
  count: bigint;
}

export interface Block {
  /** The spec's range or prefix. */
  label: string;
  runs: Run[];
}

/**
 * The pool's spec, range by range (or prefix by prefix), as runs of taken, free and excluded values in
 * candidate order: one line per run, not per value. `values` are the pool's allocation objects'
 * values; those that are not candidates of the spec are returned apart.
 */
export function poolMap(pool: ApiObject, values: readonly string[]): { blocks: Block[]; outside: string[] } {
  const kind = pool.kind as PoolKind;
  // A pool of a range of prefix lengths has no one slot per value: no map (its values are listed).
  if (pool.spec?.allocationPrefixLengths !== undefined) return { blocks: [], outside: [...values] };
  // A carved pool: its claim's value as its prefixes.
  const spec = pool.spec?.prefixesFrom
    ? { ...pool.spec, prefixesFrom: undefined, prefixes: pool.status?.prefixes ?? [] }
    : (pool.spec ?? {});
  const checked = poolSpecChecker(kind)(spec);
  if ('causes' in checked) return { blocks: [], outside: [...values] };
  const space = checked.space;
  const parse = valueKind(poolKindInfo(kind)!.allocationKind).parse;
  const isCandidate = (slot: bigint) => space.segments.some((s) => s.first <= slot && slot <= s.last);
  const taken: bigint[] = [];
  const outside: string[] = [];
  for (const text of values) {
    const value = parse(text);
    if (value.ok && space.fits(value.value) && isCandidate(value.value.slot)) taken.push(value.value.slot);
    else outside.push(text);
  }
  taken.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const blocks = specBlocks({ ...pool, spec }, space.segments);
  const show = (slot: bigint, block: SpecBlock) =>
    block.family === undefined
      ? space.valueAt(slot).value
      : formatAddress({ family: block.family, bits: slot });
  return {
    outside,
    blocks: blocks.map((block) => {
      const runs: Run[] = [];
      const push = (state: Run['state'], first: bigint, last: bigint) =>
        runs.push({ state, first: show(first, block), last: show(last, block), count: last - first + 1n });
      let next = block.range.first;
      const inside = space.segments.filter((s) => block.range.first <= s.first && s.last <= block.range.last);
      for (const segment of inside) {
        if (segment.first > next) push('excluded', next, segment.first - 1n);
        const held = taken.filter((slot) => segment.first <= slot && slot <= segment.last);
        next = segment.first;
        for (let i = 0; i < held.length;) {
          let j = i;
          while (j + 1 < held.length && held[j + 1] === held[j]! + 1n) j++;
          if (held[i]! > next) push('free', next, held[i]! - 1n);
          push('taken', held[i]!, held[j]!);
          next = held[j]! + 1n;
          i = j + 1;
        }
        if (next <= segment.last) push('free', next, segment.last);
        next = segment.last + 1n;
      }
      if (next <= block.range.last) push('excluded', next, block.range.last);
      return { label: block.label, runs };
    }),
  };
}

interface SpecBlock {
  label: string;
  range: Segment;
  /** IPAddressPool: slots are addresses, written with this family (excluded ones are not candidates). */
  family?: 4 | 6;
}

function specBlocks(pool: ApiObject, segments: readonly Segment[]): SpecBlock[] {
  const spec = pool.spec;
  if (pool.kind === 'IndexPool') {
    return (spec.ranges as unknown[]).map((range) => {
      const parsed = parseRange(range);
      return { label: String(range), range: parsed.ok ? parsed.value : { first: 0n, last: -1n } };
    });
  }
  if (pool.kind === 'IPAddressPool') {
    return (spec.prefixes as string[]).map((text) => {
      const prefix = parsePrefix(text);
      return prefix.ok
        ? { label: text, range: prefixRange(prefix.value), family: prefix.value.family }
        : { label: text, range: { first: 0n, last: -1n } };
    });
  }
  // IPPrefixPool: one segment of sub-prefixes per prefix, in spec order.
  return (spec.prefixes as string[]).map((text, i) => ({ label: text, range: segments[i]! }));
}

const MAX_RUNS = 40;

export function renderDescribe(pool: ApiObject, values: readonly string[], truncated: boolean): string {
  const lines: string[] = [];
  const field = (label: string, value: unknown, indent = '') =>
    lines.push(`${indent}${`${label}:`.padEnd(26 - indent.length)}${value}`);
  const spec = pool.spec ?? {};
  const status = pool.status ?? {};
  field('Name', pool.metadata.name);
  field('Namespace', pool.metadata.namespace);
  field('Kind', pool.kind);
  field('Created', pool.metadata.creationTimestamp);
  for (const [label, map] of [
    ['Labels', pool.metadata.labels],
    ['Annotations', pool.metadata.annotations],
  ] as const) {
    const entries = Object.entries(map ?? {});
    field(label, entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(', ') : '<none>');
  }
  lines.push('Spec:');
  if (pool.kind === 'IndexPool') field('Ranges', (spec.ranges ?? []).join(', '), '  ');
  else if (spec.prefixesFrom)
    field(
      'Prefixes',
      `from claim ${spec.prefixesFrom.claimRef?.name}: ${(status.prefixes ?? []).join(', ') || '<none yet>'}`,
      '  ',
    );
  else field('Prefixes', (spec.prefixes ?? []).join(', '), '  ');
  if (spec.allocationPrefixLength !== undefined)
    field('Allocation length', `/${spec.allocationPrefixLength}`, '  ');
  const lengths = spec.allocationPrefixLengths;
  if (lengths)
    field('Allocation lengths', `/${lengths.min} to /${lengths.max} (default /${lengths.default})`, '  ');
  if (spec.gateway !== undefined) field('Gateway', spec.gateway, '  ');
  if (spec.exclude?.length) field('Exclude', spec.exclude.join(', '), '  ');
  if (spec.excludeNetworkAndBroadcast !== undefined)
    field('Network and broadcast', spec.excludeNetworkAndBroadcast ? 'excluded' : 'included', '  ');
  field('Reclaim policy', spec.reclaimPolicy, '  ');
  if (spec.quarantineSeconds !== undefined) field('Quarantine seconds', spec.quarantineSeconds, '  ');
  if (spec.sharedWith !== undefined) field('Shared with', sharedWithText(spec.sharedWith), '  ');
  lines.push('Status:');
  field('Allocated', status.allocated ?? 0, '  ');
  field('Total', status.total ?? '', '  ');
  field('Free', status.free ?? '', '  ');
  if (status.quarantined !== undefined) field('Quarantined', status.quarantined, '  ');
  for (const usage of status.sharing ?? [])
    field(
      `Held by ${usage.namespace}`,
      `${usage.allocated}${usage.maxAllocations === undefined ? '' : ` of ${usage.maxAllocations}`}`,
      '  ',
    );
  const available = condition(pool, 'Available');
  if (available) field('Available', `${available.status} (${available.reason}): ${available.message}`, '  ');
  field('Utilisation', utilisationBar(BigInt(status.total ?? '0'), BigInt(status.free ?? '0')));
  const { blocks, outside } = poolMap(pool, values);
  lines.push(`Map${truncated ? ` (of the first ${values.length} allocation objects)` : ''}:`);
  const shown = blocks.flatMap((block) => block.runs).slice(0, MAX_RUNS);
  const width = Math.max(0, ...shown.map((run) => rangeText(run).length));
  let left = MAX_RUNS;
  for (const block of blocks) {
    if (left <= 0) break;
    lines.push(`  ${block.label}`);
    for (const run of block.runs.slice(0, left)) {
      lines.push(`    ${run.state.padEnd(8)}  ${rangeText(run).padEnd(width)}  (${run.count})`);
    }
    left -= block.runs.length;
  }
  const total = blocks.reduce((n, block) => n + block.runs.length, 0);
  if (total > MAX_RUNS) lines.push(`  … ${total - MAX_RUNS} more runs`);
  if (outside.length) lines.push(`  not candidates of the spec: ${outside.join(', ')}`);
  return lines.join('\n');
}

function rangeText(run: Run): string {
  return run.count === 1n ? run.first : `${run.first} - ${run.last}`;
}
