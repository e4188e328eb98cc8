/**
 * The map of a pool's space, from the occupancy route (one reply per map, whatever the pool's size):
 * an IP pool's prefix as a grid of blocks (a /16 as 256 /24 cells), an index pool's range as a run of
 * buckets. A cell opens to its own map, down to single values; a single value shows who holds it.
 */
import { html, nothing } from 'lit-html';
import { nsPath, type PoolKindInfo } from '../api.ts';
import { read, scheduleDraw } from '../data.ts';
import { href } from '../router.ts';
import { errorBox } from '../ui.ts';
import { allocationName, fraction, percent, shortCount } from '../values.ts';
import { claimLink } from './objects.ts';
import { valueLink } from './value.ts';

export interface Bucket {
  first: string;
  last: string;
  within: string;
  /** Values in the bucket, candidates or not. */
  values: string;
  /** Candidates in the bucket. */
  size: string;
  held: string;
  /** Of `held`, the values a quarantine holds back (absent when none). */
  quarantined?: string;
  approximate?: boolean;
}

export interface Occupancy {
  kind: 'Occupancy';
  first: string;
  last: string;
  within: string;
  bucketSize: string;
  exact: boolean;
  buckets: Bucket[];
}

/** Which cell of each map has the keyboard focus (a roving tabindex: one tab stop per map). */
const focused = new Map<string, number>();
/** The single value picked on a leaf map, per pool. */
const picked = new Map<string, Bucket>();

export function occupancyPath(ns: string, info: PoolKindInfo, pool: string, within: string, buckets: number) {
  return `${nsPath(ns, info.resource, pool)}/occupancy?buckets=${buckets}&within=${encodeURIComponent(within)}`;
}

function describe(bucket: Bucket): string {
  const excluded = BigInt(bucket.values) - BigInt(bucket.size);
  const parts = [`${bucket.within}: ${shortCount(bucket.held)} of ${shortCount(bucket.size)} held`];
  if (quarantinedOf(bucket) > 0n) parts.push(`${shortCount(bucket.quarantined)} of them quarantined`);
  if (excluded > 0n) parts.push(`${shortCount(excluded.toString())} excluded`);
  if (bucket.approximate) parts.push('estimated');
  return parts.join(', ');
}

function quarantinedOf(bucket: Bucket): bigint {
  return BigInt(bucket.quarantined ?? '0');
}

function cellState(bucket: Bucket): string {
  const size = BigInt(bucket.size);
  const held = BigInt(bucket.held);
  if (size === 0n && held === 0n) return 'excluded';
  const some = size < BigInt(bucket.values) ? ' excluded-some' : '';
  const quarantined = quarantinedOf(bucket) > 0n ? ' quarantined' : '';
  if (held === 0n) return `free${some}`;
  if (held >= size) return `full${some}${quarantined}`;
  return `partial${some}${quarantined}`;
}

export interface MapOptions {
  ns: string;
  info: PoolKindInfo;
  pool: string;
  within: string;
  /** The heading of the map (the prefix or range it shows). */
  title: string;
  /** What a click on a single value offers: claim it. */
  onClaimValue: (value: string) => void;
}

export function poolMap(options: MapOptions) {
  const { ns, info, pool, within } = options;
  const ip = info.kind !== 'IndexPool';
  const buckets = ip ? 256 : 64;
  const entry = read<Occupancy>(occupancyPath(ns, info, pool, within, buckets));
  const key = `${ns}/${info.resource}/${pool}/${within}`;
  if (!entry.data) {
    return html`<figure class="map">
      <figcaption>${options.title}</figcaption>
      ${entry.error ? errorBox(entry.error) : html`<p class="muted" aria-busy="true">Loading the map…</p>`}
    </figure>`;
  }
  const occupancy = entry.data;
  const width = BigInt(occupancy.bucketSize);
  const leaf = width === 1n;
  const columns = ip
    ? Math.min(16, Math.ceil(Math.sqrt(occupancy.buckets.length)))
    : occupancy.buckets.length;
  const active = Math.min(focused.get(key) ?? 0, occupancy.buckets.length - 1);
  const held = occupancy.buckets.reduce((sum, b) => sum + BigInt(b.held), 0n);
  const size = occupancy.buckets.reduce((sum, b) => sum + BigInt(b.size), 0n);
  const quarantined = occupancy.buckets.reduce((sum, b) => sum + quarantinedOf(b), 0n);

  const open = (bucket: Bucket) => {
    if (leaf) {
      picked.set(`${ns}/${pool}`, bucket);
      scheduleDraw();
    } else {
      location.hash = href({ page: 'pool', ns, resource: info.resource, name: pool, within: bucket.within });
    }
  };
  const onKey = (event: KeyboardEvent) => {
    const index = Number((event.target as HTMLElement).dataset.index);
    const moves: Record<string, number> = {
      ArrowRight: 1,
      ArrowLeft: -1,
      ArrowDown: columns,
      ArrowUp: -columns,
      Home: -index,
      End: occupancy.buckets.length - 1 - index,
    };
    const move = moves[event.key];
    if (move === undefined) return;
    event.preventDefault();
    const next = Math.max(0, Math.min(occupancy.buckets.length - 1, index + move));
    focused.set(key, next);
    const grid = (event.target as HTMLElement).parentElement!;
    (grid.children[next] as HTMLElement | undefined)?.focus();
    scheduleDraw();
  };

  const cellLabel = (bucket: Bucket) => (ip ? varyingPart(bucket.within) : '');

  return html`<figure class="map ${ip ? 'grid-map' : 'run-map'}" aria-labelledby=${`${key}-caption`}>
    <figcaption id=${`${key}-caption`}>
      <strong>${options.title}</strong>
      <span class="muted">
        ${shortCount(held.toString())} of ${shortCount(size.toString())} held
        (${percent(fraction(held.toString(), size.toString()), held.toString())})${
          quarantined > 0n ? `, ${shortCount(quarantined.toString())} of them quarantined` : ''
        }
        · cells of ${shortCount(occupancy.bucketSize)}
        ${leaf ? 'value' : 'values'}${occupancy.exact ? '' : ' · some cells estimated'}</span
      >
    </figcaption>
    <div
      class="cells"
      role="group"
      aria-label=${`Map of ${occupancy.within}, ${occupancy.buckets.length} cells; arrow keys move, Enter opens`}
      style=${`--columns:${columns}`}
    >
      ${occupancy.buckets.map((bucket, index) => {
        const share = fraction(bucket.held, bucket.size === '0' ? '1' : bucket.size);
        // A few held values in a big cell still show: the faintest tint is a fifth.
        const tint = bucket.held === '0' ? 0 : Math.max(share, 0.2);
        // The quarantined part of what is held, drawn apart as a segment from the cell's foot (of the
        // held share; a few still show).
        const q = quarantinedOf(bucket);
        const qShare = q === 0n ? 0 : Math.max(fraction(q.toString(), bucket.held), 0.2);
        return html`<button
          type="button"
          class="cell ${cellState(bucket)}"
          style=${`--f:${tint};--q:${qShare}`}
          data-index=${index}
          data-within=${bucket.within}
          tabindex=${index === active ? 0 : -1}
          aria-label=${describe(bucket)}
          title=${describe(bucket)}
          @click=${() => {
            focused.set(key, index);
            open(bucket);
          }}
          @keydown=${onKey}
        >
          <span aria-hidden="true">${cellLabel(bucket)}</span>
        </button>`;
      })}
    </div>
    ${
      ip
        ? nothing
        : html`<div class="run-ends" aria-hidden="true">
            <span>${occupancy.first}</span><span>${occupancy.last}</span>
          </div>`
    }
    <div class="legend" aria-hidden="true">
      <span><i class="cell free"></i>free</span
      ><span><i class="cell partial" style="--f:.5"></i>partly held</span
      ><span><i class="cell full"></i>held</span
      ><span><i class="cell full quarantined" style="--q:1"></i>quarantined</span
      ><span><i class="cell excluded"></i>excluded</span>
    </div>
    ${leaf ? pickedValue(options) : nothing}
  </figure>`;
}

/** The part of a cell's prefix that tells it from its neighbours: `10.42.7.0/24` → `7`. */
function varyingPart(within: string): string {
  const [address = '', length = '0'] = within.split('/');
  if (address.includes(':')) return '';
  return address.split('.')[Math.max(0, Math.ceil(Number(length) / 8) - 1)] ?? '';
}

/** The value picked on a leaf map: who holds it, or a button to claim it. */
function pickedValue(options: MapOptions) {
  const { ns, info, pool } = options;
  const bucket = picked.get(`${ns}/${pool}`);
  if (!bucket || !inMap(bucket, options)) return nothing;
  const value = info.kind === 'IPPrefixPool' ? bucket.within : bucket.first;
  let body;
  if (bucket.size === '0' && bucket.held === '0') {
    body = html`<p><strong>${value}</strong> is not a candidate of this pool (excluded).</p>`;
  } else if (bucket.held === '0') {
    body = html`<p>
      <strong>${value}</strong> is free.
      <button type="button" class="button" @click=${() => options.onClaimValue(value)}>Claim ${value}</button>
    </p>`;
  } else if (quarantinedOf(bucket) > 0n) {
    // The pool page has read the pool already: no call of its own.
    const seconds = read(nsPath(ns, info.resource, pool)).data?.spec?.quarantineSeconds;
    body = html`<p>
      <strong>${value}</strong> is quarantined: it was freed less than
      ${seconds === undefined ? "the pool's quarantineSeconds" : `${seconds}s`} ago and is held back before it
      is handed out again.
    </p>`;
  } else {
    const name = allocationName(pool, info.allocationKind, value);
    const entry = name ? read(nsPath(ns, info.allocationResource, name)) : undefined;
    const holder = entry?.data;
    body = html`<p>
      <strong>${value}</strong> is
      held${
        holder
          ? html` by
              <a href=${href({ page: 'allocation', ns, resource: info.allocationResource, name: name ?? '' })}
                >${name}</a
              >
              ${
                holder.spec?.claimRef?.name
                  ? html`(claim ${claimLink(ns, holder.spec.claimRef)})`
                  : '(unbound)'
              }`
          : entry?.error
            ? html` by an object with a name of its own:
                <a href=${href({ page: 'search', ns, q: value })}>search for it</a>`
            : '…'
      }
    </p>`;
  }
  return html`<div class="picked" role="status">
    ${body}
    <p>${valueLink(ns, info, pool, value, `Who held ${value} when`)}</p>
  </div>`;
}

function inMap(bucket: Bucket, options: MapOptions): boolean {
  const entry = read<Occupancy>(
    occupancyPath(
      options.ns,
      options.info,
      options.pool,
      options.within,
      options.info.kind === 'IndexPool' ? 64 : 256,
    ),
  );
  return Boolean(entry.data?.buckets.some((b) => b.within === bucket.within));
}

/** A map level's name in the page title. */
export function mapTitle(within: string): string {
  return `(${within})`;
}
