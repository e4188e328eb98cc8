/**
 * A pool: its spec, counts, whom it is shared with, map, the claim form, and the claims and allocation
 * objects it holds.
 */
import { html, nothing } from 'lit-html';
import { byResource, nsPath, type PoolKindInfo } from '../api.ts';
import { read, readAll, scheduleDraw } from '../data.ts';
import { href } from '../router.ts';
import { badge, conditionOf, count, errorBox, labels, specList, usedOf, utilisation } from '../ui.ts';
import { claimForm, formOf } from './claim-form.ts';
import { poolMap } from './map.ts';
import { allocationsTable, claimsTable } from './objects.ts';
import { sharingCard } from './shared.ts';

/** The spans a pool's map shows by default: each prefix, or each range. */
function spansOf(info: PoolKindInfo, pool: any): string[] {
  if (info.kind === 'IndexPool') {
    return (pool.spec.ranges as unknown[]).map((range) => {
      const text = String(range);
      return text.includes('..') ? text : `${text}..${text}`;
    });
  }
  return (pool.status?.prefixes ?? pool.spec.prefixes ?? []) as string[];
}

export function poolPage(ns: string, resource: string, name: string, within: string | undefined) {
  const info = byResource(resource);
  if (!info || info.resource !== resource)
    return errorBox({ kind: 'Status', code: 404, reason: 'NotFound', message: `no pool kind ${resource}` });
  const entry = read(nsPath(ns, resource, name));
  if (!entry.data)
    return entry.error ? errorBox(entry.error) : html`<p class="muted" aria-busy="true">Loading…</p>`;
  const pool = entry.data;
  const key = `${ns}/${resource}/${name}`;
  const form = formOf(key);
  const claimValue = (value: string) => {
    form.mode = 'value';
    form.value = value;
    scheduleDraw();
    requestAnimationFrame(() => document.getElementById(`claim-name`)?.focus());
  };
  const spans = within ? [within] : spansOf(info, pool).slice(0, 8);
  const claims = readAll(nsPath(ns, 'claims'));
  // A claim of this namespace on a pool of the same name another namespace shares is not this pool's.
  const poolClaims = (claims.data ?? []).filter(
    ({ spec }: any) =>
      spec?.poolRef?.kind === info.kind &&
      spec.poolRef.name === name &&
      (spec.poolRef.namespace ?? ns) === ns,
  );
  const allocations = read(
    `${nsPath(ns, info.allocationResource)}?pool=${encodeURIComponent(name)}&limit=100`,
  );
  const available = conditionOf(pool, 'Available');
  return html`<article aria-labelledby="pool-title">
    <nav class="crumbs" aria-label="Breadcrumb">
      <a href=${href({ page: 'pools', ns })}>Pools</a> › <span>${name}</span>
    </nav>
    <div class="title-row">
      <h1 id="pool-title">${name} <small class="muted">${info.kind}</small></h1>
      ${badge(available)}
    </div>
    <div class="cards">
      <section class="card" aria-labelledby="counts-title">
        <h2 id="counts-title">Counts</h2>
        ${utilisation(usedOf(pool), pool.status?.total ?? '0', name)}
        <dl class="counts">
          <div>
            <dt>Allocated</dt>
            <dd>${count(pool.status?.allocated)}</dd>
          </div>
          <div>
            <dt>Total</dt>
            <dd>${count(pool.status?.total)}</dd>
          </div>
          <div>
            <dt>Free</dt>
            <dd>${count(pool.status?.free)}</dd>
          </div>
          ${
            // Present on a pool that quarantines or still holds values back (docs/leases.md): freed
            // values held back, so neither allocated nor free.
            pool.status?.quarantined === undefined
              ? nothing
              : html`<div>
                  <dt>Quarantined</dt>
                  <dd>${count(pool.status.quarantined)}</dd>
                </div>`
          }
        </dl>
        <p class="muted">${available?.message ?? ''}</p>
      </section>
      <section class="card" aria-labelledby="spec-title">
        <h2 id="spec-title">Spec</h2>
        ${specList(pool.spec, ['sharedWith'])}
        <p><span class="muted">Labels</span> ${labels(pool.metadata.labels)}</p>
      </section>
      ${sharingCard(pool)} ${claimForm(ns, { info, name }, form)}
    </div>
    <section aria-labelledby="map-title">
      <h2 id="map-title">Map</h2>
      ${
        within
          ? html`<nav class="crumbs" aria-label="Map level">
              <a href=${href({ page: 'pool', ns, resource, name })}>Whole pool</a> › <span>${within}</span>
            </nav>`
          : nothing
      }
      ${spans.length === 0 ? html`<p class="muted">The pool has no candidates yet.</p>` : nothing}
      ${spans.map((span) => poolMap({ ns, info, pool: name, within: span, title: span, onClaimValue: claimValue }))}
    </section>
    <section aria-labelledby="pool-claims-title">
      <h2 id="pool-claims-title">Claims <small class="muted">${poolClaims.length}</small></h2>
      ${claims.error ? errorBox(claims.error) : claimsTable(ns, poolClaims, { showPool: false })}
    </section>
    <section aria-labelledby="pool-allocations-title">
      <h2 id="pool-allocations-title">${info.allocationKind} objects</h2>
      ${
        allocations.data
          ? allocationsTable(
              ns,
              allocations.data.items.map((a: any) => ({ info, object: a })),
              { showPool: false },
            )
          : allocations.error
            ? errorBox(allocations.error)
            : html`<p class="muted">Loading…</p>`
      }
      ${allocations.data?.metadata?.continue ? html`<p class="muted">Showing the first 100.</p>` : nothing}
    </section>
  </article>`;
}
