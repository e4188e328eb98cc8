/**
 * Namespaces and pools: every pool of a namespace with its kind, use and availability, filterable; and
 * the pools of other namespaces shared with it (views/shared.ts).
 */
import { html } from 'lit-html';
import { nsPath, POOL_KINDS } from '../api.ts';
import { readAll, scheduleDraw } from '../data.ts';
import { href } from '../router.ts';
import { badge, conditionOf, count, errorBox, usedOf, utilisation } from '../ui.ts';
import { exampleButton } from './create.ts';
import { readSharedPools, sharedPoolsTable, sharedWithText } from './shared.ts';

const filters = { kind: '', text: '', availability: '' };

export interface PoolRow {
  info: (typeof POOL_KINDS)[number];
  pool: any;
}

/** Every pool of a namespace, of the three kinds, in name order. */
export function readPools(ns: string): { rows: PoolRow[]; loading: boolean; errors: any[] } {
  const lists = POOL_KINDS.map((info) => ({ info, entry: readAll(nsPath(ns, info.resource)) }));
  const rows = lists
    .flatMap(({ info, entry }) => (entry.data ?? []).map((pool) => ({ info, pool })))
    .sort((a, b) => (a.pool.metadata.name < b.pool.metadata.name ? -1 : 1));
  return {
    rows,
    loading: lists.some(({ entry }) => entry.data === undefined && !entry.error),
    errors: lists.flatMap(({ entry }) => (entry.error ? [entry.error] : [])),
  };
}

/** Whether a pool passes the filters (its own or a shared one alike). */
function kept({ info, pool }: PoolRow): boolean {
  const text = filters.text.trim().toLowerCase();
  if (filters.kind && info.kind !== filters.kind) return false;
  if (text && !pool.metadata.name.toLowerCase().includes(text)) return false;
  const available = conditionOf(pool, 'Available')?.status;
  if (filters.availability === 'available' && available !== 'True') return false;
  if (filters.availability === 'exhausted' && available === 'True') return false;
  return true;
}

export function poolsPage(ns: string) {
  const { rows, loading, errors } = readPools(ns);
  const shown = rows.filter(kept);
  // Only a pool that quarantines (or still holds quarantined values) shows the count, as its own page does.
  const quarantining = shown.some(({ pool }) => pool.status?.quarantined !== undefined);
  // Only a namespace that shares a pool shows whom with (as kubectl's SharedWith column).
  const sharing = shown.some(({ pool }) => pool.spec?.sharedWith?.length);
  const set = (key: keyof typeof filters) => (event: Event) => {
    filters[key] = (event.target as HTMLInputElement).value;
    scheduleDraw();
  };
  return html`<section aria-labelledby="pools-title">
    <div class="title-row">
      <h1 id="pools-title">Pools <small class="muted">in ${ns}</small></h1>
      <a class="button primary" href=${href({ page: 'new', ns })}>New pool</a>
    </div>
    <form class="filters" role="search" aria-label="Filter pools" @submit=${(e: Event) => e.preventDefault()}>
      <label
        >Name
        <input
          type="search"
          name="filter"
          .value=${filters.text}
          @input=${set('text')}
          placeholder="filter by name"
      /></label>
      <label
        >Kind
        <select name="kind" @change=${set('kind')}>
          <option value="" ?selected=${filters.kind === ''}>All kinds</option>
          ${POOL_KINDS.map(
            (info) =>
              html`<option value=${info.kind} ?selected=${filters.kind === info.kind}>${info.kind}</option>`,
          )}
        </select></label
      >
      <label
        >Availability
        <select name="availability" @change=${set('availability')}>
          <option value="" ?selected=${filters.availability === ''}>Any</option>
          <option value="available" ?selected=${filters.availability === 'available'}>Available</option>
          <option value="exhausted" ?selected=${filters.availability === 'exhausted'}>Exhausted</option>
        </select></label
      >
    </form>
    ${errors.map((error) => errorBox(error))}
    ${
      loading && rows.length === 0
        ? html`<p class="muted" aria-busy="true">Loading…</p>`
        : rows.length === 0
          ? html`<div class="empty">
              <p>
                No pools in
                <strong>${ns}</strong>
                yet${readSharedPools(ns).rows.length ? ' of its own; the ones shared with it are below' : ''}.
              </p>
              <p>
                <a class="button primary" href=${href({ page: 'new', ns })}>Create a pool</a>
                ${exampleButton(ns)}
              </p>
            </div>`
          : html`<div class="table-wrap">
              <table class="list" aria-label=${`Pools in ${ns}`}>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Utilisation</th>
                    <th scope="col" class="num">Allocated</th>
                    <th scope="col" class="num">Total</th>
                    <th scope="col" class="num">Free</th>
                    ${quarantining ? html`<th scope="col" class="num">Quarantined</th>` : ''}
                    ${sharing ? html`<th scope="col">Shared with</th>` : ''}
                    <th scope="col">Available</th>
                  </tr>
                </thead>
                <tbody>
                  ${shown.map(
                    ({ info, pool }) =>
                      html`<tr>
                        <th scope="row">
                          <a
                            href=${href({ page: 'pool', ns, resource: info.resource, name: pool.metadata.name })}
                            >${pool.metadata.name}</a
                          >
                        </th>
                        <td>${info.kind}</td>
                        <td>${utilisation(usedOf(pool), pool.status?.total ?? '0', pool.metadata.name)}</td>
                        <td class="num">${count(pool.status?.allocated)}</td>
                        <td class="num">${count(pool.status?.total)}</td>
                        <td class="num">${count(pool.status?.free)}</td>
                        ${quarantining ? html`<td class="num">${count(pool.status?.quarantined ?? '0')}</td>` : ''}
                        ${sharing ? html`<td>${sharedWithText(pool.spec?.sharedWith)}</td>` : ''}
                        <td>${badge(conditionOf(pool, 'Available'))}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
              ${
                shown.length < rows.length
                  ? html`<p class="muted">
                      ${rows.length - shown.length} of ${rows.length} pools hidden by the filters.
                    </p>`
                  : ''
              }
            </div>`
    }
    ${sharedPoolsTable(ns, kept)}
  </section>`;
}
