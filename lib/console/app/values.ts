/**
 * What the console needs to know of values without asking: which kind a typed value is, and the
 * deterministic name of the allocation object that holds it (api.md, "Allocation objects").
 */

export type ValueShape = 'index' | 'address' | 'prefix' | 'text';

export function shapeOf(text: string): ValueShape {
  if (/^\d+$/.test(text)) return 'index';
  if (text.includes('/')) return 'prefix';
  if (/^[\d.]+$/.test(text) && text.split('.').length === 4) return 'address';
  if (/^[0-9a-f:]+$/i.test(text) && text.includes(':')) return 'address';
  return 'text';
}

/** IPv6 text as its eight groups, each four hex digits; undefined when it is not IPv6. */
function ipv6Groups(text: string): string[] | undefined {
  const halves = text.toLowerCase().split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...head, ...Array<string>(missing).fill('0'), ...tail];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return groups.map((group) => group.padStart(4, '0'));
}

function addressPart(address: string): string | undefined {
  if (address.includes(':')) return ipv6Groups(address)?.join('-');
  const octets = address.split('.');
  if (octets.length !== 4 || !octets.every((octet) => /^\d{1,3}$/.test(octet) && Number(octet) < 256))
    return undefined;
  return octets.map(Number).join('-');
}

/** `asn-pool-64512`, `vpc-main-10-42-1-7`, `p-10-0-0-64-26`: the name the server gives an allocation. */
export function allocationName(pool: string, shape: ValueShape, value: string): string | undefined {
  if (shape === 'index') return `${pool}-${BigInt(value)}`;
  if (shape === 'address') {
    const part = addressPart(value);
    return part && `${pool}-${part}`;
  }
  if (shape === 'prefix') {
    const [address, length] = value.split('/');
    const part = address === undefined ? undefined : addressPart(address);
    return part && length !== undefined ? `${pool}-${part}-${length}` : undefined;
  }
  return undefined;
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
