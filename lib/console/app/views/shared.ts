/**
 * Pools shared with other namespaces (api.md, "Pools shared with other namespaces"): on its owner's pool
 * page, whom a pool is shared with and what each namespace holds of its limit (`spec.sharedWith`,
 * `status.sharing`); in a tenant's namespace, the pools shared with it (`GET …/sharedpools`, each with
 * the tenant's own usage and limit) and a page to claim from one (the claim names the pool's namespace).
 */
import { html, nothing } from 'lit-html';
import { byResource, nsPath, POOL_KINDS, type PoolKindInfo } from '../api.ts';
import { read, readAll } from '../data.ts';
import { href } from '../router.ts';
import { badge, conditionOf, count, errorBox, specList, usedOf, utilisation } from '../ui.ts';
import { claimForm, formOf } from './claim-form.ts';
import { claimsTable } from './objects.ts';

interface SharedWithEntry {
  namespace: string;
  maxAllocations?: number;
}

interface Usage {
  namespace: string;
  allocated: number;
  maxAllocations?: number;
}

/** `acme (max 2)`, `* (every namespace)`: one entry of a pool's `spec.sharedWith`. */
function entryText({ namespace, maxAllocations }: SharedWithEntry): string {
  const notes = [
    namespace === '*' ? 'every namespace' : '',
    maxAllocations === undefined ? '' : `max ${maxAllocations}`,
  ].filter(Boolean);
  return notes.length ? `${namespace} (${notes.join(', ')})` : namespace;
}

/** A pool's `spec.sharedWith` on one line, for the pools list. */
export function sharedWithText(entries: readonly SharedWithEntry[] | undefined): string {
  return (entries ?? []).map(entryText).join(', ');
}

/** `1 of 2`, or `1` with no limit: what a namespace holds of a shared pool. */
function heldText(usage: { allocated: number; maxAllocations?: number }): string {
  return usage.maxAllocations === undefined
    ? String(usage.allocated)
    : `${usage.allocated} of ${usage.maxAllocations}`;
}

/** The holdings of a namespace against its limit: a bar when there is a limit, else the count. */
function heldBar(usage: Usage, label: string) {
  return usage.maxAllocations === undefined
    ? html`<span>${usage.allocated} <span class="muted">(no limit)</span></span>`
    : html`${utilisation(usage.allocated, usage.maxAllocations, label)}
        <span class="muted">${heldText(usage)}</span>`;
}

/** On a pool's own page: whom it is shared with, and each namespace's holdings of its limit. */
export function sharingCard(pool: any) {
  const entries: SharedWithEntry[] = pool.spec?.sharedWith ?? [];
  const usage: Usage[] = pool.status?.sharing ?? [];
  if (entries.length === 0 && usage.length === 0) return nothing;
  return html`<section class="card" aria-labelledby="sharing-title">
    <h2 id="sharing-title">Shared with</h2>
    ${
      entries.length
        ? html`<ul class="chips" aria-label="Shared with">
            ${entries.map((entry) => html`<li><code>${entryText(entry)}</code></li>`)}
          </ul>`
        : html`<p class="muted">No namespace now; the values they hold stay theirs.</p>`
    }
    ${
      usage.length
        ? html`<table class="plain" aria-label="Held by namespace">
            <thead>
              <tr>
                <th scope="col">Namespace</th>
                <th scope="col" class="num">Held</th>
              </tr>
            </thead>
            <tbody>
              ${usage.map(
                (u) =>
                  html`<tr>
                    <th scope="row">${u.namespace}</th>
                    <td class="num">
                      ${heldText(u)}${u.maxAllocations === undefined ? html` <span class="muted">(no limit)</span>` : nothing}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : nothing
    }
  </section>`;
}

export interface SharedRow {
  info: PoolKindInfo;
  pool: any;
}

/** The pools of other namespaces shared with `ns`, by namespace and name. */
export function readSharedPools(ns: string): { rows: SharedRow[]; error?: any; loading: boolean } {
  const entry = read<{ items: any[] }>(nsPath(ns, 'sharedpools'));
  const rows = (entry.data?.items ?? [])
    .flatMap((pool) => {
      const info = POOL_KINDS.find((i) => i.kind === pool.kind);
      return info ? [{ info, pool }] : [];
    })
    .sort((a, b) => {
      const key = (r: SharedRow) => `${r.pool.metadata.namespace}/${r.pool.metadata.name}`;
      return key(a) < key(b) ? -1 : 1;
    });
  return { rows, error: entry.error, loading: entry.data === undefined && !entry.error };
}

const sharedHref = (ns: string, { info, pool }: SharedRow) =>
  href({
    page: 'shared',
    ns,
    poolNs: pool.metadata.namespace,
    resource: info.resource,
    name: pool.metadata.name,
  });

/** The pools list's second table: the pools shared with `ns`, with its own usage and limit. */
export function sharedPoolsTable(ns: string, keep: (row: SharedRow) => boolean) {
  const { rows, error } = readSharedPools(ns);
  if (error) return errorBox(error);
  if (rows.length === 0) return nothing;
  const shown = rows.filter(keep);
  return html`<section aria-labelledby="shared-title">
    <h2 id="shared-title">Shared with ${ns} <small class="muted">pools of other namespaces</small></h2>
    <div class="table-wrap">
      <table class="list" aria-label=${`Pools shared with ${ns}`}>
        <thead>
          <tr>
            <th scope="col">Namespace</th>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">Utilisation</th>
            <th scope="col" class="num">Held</th>
            <th scope="col" class="num">Limit</th>
            <th scope="col" class="num">Free</th>
            <th scope="col">Available</th>
            <th scope="col"><span class="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${shown.map((row) => {
            const { info, pool } = row;
            const share = pool.status?.share ?? {};
            const label = `${pool.metadata.namespace}/${pool.metadata.name}`;
            return html`<tr>
              <td>${pool.metadata.namespace}</td>
              <th scope="row"><a href=${sharedHref(ns, row)}>${pool.metadata.name}</a></th>
              <td>${info.kind}</td>
              <td>${utilisation(usedOf(pool), pool.status?.total ?? '0', label)}</td>
              <td class="num">${count(share.allocated ?? 0)}</td>
              <td class="num">
                ${share.maxAllocations === undefined ? html`<span class="muted">none</span>` : count(share.maxAllocations)}
              </td>
              <td class="num">${count(pool.status?.free)}</td>
              <td>${badge(conditionOf(pool, 'Available'))}</td>
              <td>
                <a class="button" href=${sharedHref(ns, row)} aria-label=${`Claim from ${label}`}>Claim</a>
              </td>
            </tr>`;
          })}
        </tbody>
      </table>
      ${shown.length < rows.length ? html`<p class="muted">${rows.length - shown.length} of ${rows.length} shared pools hidden by the filters.</p>` : nothing}
    </div>
  </section>`;
}

/**
 * A pool of `poolNs` as `ns` sees it: its spec, the pool's counts and `ns`'s own holdings and limit, the
 * claim form (its claims name `poolRef.namespace`), and `ns`'s claims on it. No map: the occupancy route
 * is the pool's namespace's.
 */
export function sharedPoolPage(ns: string, poolNs: string, resource: string, name: string) {
  const info = byResource(resource);
  if (!info || info.resource !== resource)
    return errorBox({ kind: 'Status', code: 404, reason: 'NotFound', message: `no pool kind ${resource}` });
  const crumbs = html`<nav class="crumbs" aria-label="Breadcrumb">
    <a href=${href({ page: 'pools', ns })}>Pools</a> › <span>${poolNs}/${name}</span>
  </nav>`;
  const { rows, error, loading } = readSharedPools(ns);
  const row = rows.find(
    (r) => r.info === info && r.pool.metadata.namespace === poolNs && r.pool.metadata.name === name,
  );
  if (!row) {
    const missing = {
      kind: 'Status' as const,
      code: 404,
      reason: 'NotFound',
      message: `${poolNs} shares no ${info.kind} ${name} with ${ns}`,
    };
    return html`${crumbs}${loading ? html`<p class="muted" aria-busy="true">Loading…</p>` : errorBox(error ?? missing)}`;
  }
  const { pool } = row;
  const share: Usage = { namespace: ns, allocated: 0, ...pool.status?.share };
  const claims = readAll(nsPath(ns, 'claims'));
  const mine = (claims.data ?? []).filter(
    ({ spec }: any) =>
      spec?.poolRef?.kind === info.kind && spec.poolRef.name === name && spec.poolRef.namespace === poolNs,
  );
  const available = conditionOf(pool, 'Available');
  return html`<article aria-labelledby="pool-title">
    ${crumbs}
    <div class="title-row">
      <h1 id="pool-title">${name} <small class="muted">${info.kind} shared by ${poolNs}</small></h1>
      ${badge(available)}
    </div>
    <div class="cards">
      <section class="card" aria-labelledby="share-title">
        <h2 id="share-title">Held by ${ns}</h2>
        ${heldBar(share, `${ns}: ${heldText(share)} held`)}
        <dl class="counts">
          <div>
            <dt>Held</dt>
            <dd>${count(share.allocated)}</dd>
          </div>
          <div>
            <dt>Limit</dt>
            <dd>${share.maxAllocations === undefined ? 'none' : count(share.maxAllocations)}</dd>
          </div>
        </dl>
        <h2 id="counts-title">The whole pool</h2>
        ${utilisation(usedOf(pool), pool.status?.total ?? '0', `${poolNs}/${name}`)}
        <dl class="counts">
          <div>
            <dt>Total</dt>
            <dd>${count(pool.status?.total)}</dd>
          </div>
          <div>
            <dt>Free</dt>
            <dd>${count(pool.status?.free)}</dd>
          </div>
        </dl>
        <p class="muted">${available?.message ?? ''}</p>
      </section>
      <section class="card" aria-labelledby="spec-title">
        <h2 id="spec-title">Spec</h2>
        ${specList(pool.spec)}
      </section>
      ${claimForm(ns, { info, name, namespace: poolNs }, formOf(`${ns}/shared/${poolNs}/${resource}/${name}`))}
    </div>
    <section aria-labelledby="pool-claims-title">
      <h2 id="pool-claims-title">Claims of ${ns} <small class="muted">${mine.length}</small></h2>
      ${claims.error ? errorBox(claims.error) : claimsTable(ns, mine, { showPool: false })}
    </section>
  </article>`;
}
