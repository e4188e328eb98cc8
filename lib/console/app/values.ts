/**
 * What the console needs to know of values without asking: which kind a typed value is, and the
 * deterministic name of the allocation object that holds it (api.md, "Allocation objects"), from the
 * same code the server reads them with (lib/domain, pure).
 */
import type { AllocationKind } from '../../domain/kinds.ts';
import { valueKind } from '../../domain/values/spaces.ts';
import type { ParsedValue } from '../../domain/values/values.ts';

export type ValueShape = AllocationKind | 'text';

/**
 * What a typed value is, read as the server reads it (lib/domain), canonical: `2001:DB8::1` is
 * `2001:db8::1`. An index, an address, a prefix, or text (a name or an owner).
 */
export function readValue(text: string): { shape: ValueShape; value?: ParsedValue } {
  for (const kind of ['Index', 'IPAddress', 'IPPrefix'] as const) {
    const parsed = valueKind(kind).parse(text);
    if (parsed.ok) return { shape: kind, value: parsed.value };
  }
  return { shape: 'text' };
}

/** `asn-pool-64512`, `vpc-main-10-42-1-7`: the name the server gives the object holding a value. */
export function allocationName(pool: string, kind: AllocationKind, value: string): string | undefined {
  const parsed = valueKind(kind).parse(value);
  return parsed.ok ? valueKind(kind).allocationName(pool, parsed.value) : undefined;
}

/** A decimal string (a pool's `total`, a bucket's `size`) shortened for people: 94968318 → 95.0M. */
export function shortCount(decimal: string | number | undefined): string {
  if (decimal === undefined) return '–';
  const value = BigInt(decimal);
  if (value < 100_000n) return value.toLocaleString('en');
  const units = ['K', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
  let scaled = Number(value);
  let unit = -1;
  while (scaled >= 1000 && unit < units.length - 1) {
    scaled /= 1000;
    unit++;
  }
  if (scaled >= 1000) return `2^${value.toString(2).length - 1}`;
  return `${scaled.toFixed(scaled < 10 ? 2 : 1)}${units[unit]}`;
}

/** held ÷ size as a fraction 0..1, from decimal strings that may pass 2^53. */
export function fraction(held: string | number, size: string | number): number {
  const total = BigInt(size);
  if (total === 0n) return 0;
  return Number((BigInt(held) * 10_000n) / total) / 10_000;
}

export function percent(share: number, held: string | number): string {
  if (BigInt(held) > 0n && share < 0.01) return '<1%';
  return `${Math.round(share * 100)}%`;
}
