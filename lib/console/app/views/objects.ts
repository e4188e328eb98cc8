/** Claims and allocation objects: lists with their state, pages with conditions, owners, labels. */
import { html, nothing } from 'lit-html';
import { byKind, call, isStatus, nsPath, POOL_KINDS, type PoolKindInfo, type Status } from '../api.ts';
import { forget, read, readAll, refresh, scheduleDraw } from '../data.ts';
import { href } from '../router.ts';
import { ago, badge, conditionOf, conditionsTable, errorBox, labels, until } from '../ui.ts';
import { valueLink } from './value.ts';

/** Releases waiting for their confirming second press, by claim name; and the last failed release. */
const confirming = new Set<string>();
const releaseErrors = new Map<string, Status>();

export function releaseButton(ns: string, name: string) {
  const key = `${ns}/${name}`;
  const armed = confirming.has(key);
  const press = async () => {
    if (!armed) {
      confirming.add(key);
      scheduleDraw();
      return;
    }
    confirming.delete(key);
    const answer = await call('DELETE', nsPath(ns, 'claims', name));
    if (isStatus(answer.body)) releaseErrors.set(key, answer.body);
    else releaseErrors.delete(key);
    forget(nsPath(ns, 'claims', name));
    await refresh();
    scheduleDraw();
  };
  return html`<button
      type="button"
      class="button ${armed ? 'danger' : ''}"
      aria-label=${armed ? `Confirm: release ${name}` : `Release ${name}`}
      @click=${press}
      @blur=${() => {
        if (confirming.delete(key)) scheduleDraw();
      }}
    >
      ${armed ? 'Confirm release' : 'Release'}</button
    >${releaseErrors.has(key) ? errorBox(releaseErrors.get(key)) : nothing}`;
}

/** The last failed renewal, by claim. */
const renewErrors = new Map<string, Status>();

/** Starts a lease claim's lease again from now (POST …/renew). */
export function renewButton(ns: string, name: string) {
  const key = `${ns}/${name}`;
  const press = async () => {
    const answer = await call('POST', `${nsPath(ns, 'claims', name)}/renew`);
    if (isStatus(answer.body)) renewErrors.set(key, answer.body);
    else renewErrors.delete(key);
    forget(nsPath(ns, 'claims', name));
    await refresh();
    scheduleDraw();
  };
  return html`<button type="button" class="button" aria-label=${`Renew ${name}`} @click=${press}>Renew</button
    >${renewErrors.has(key) ? errorBox(renewErrors.get(key)) : nothing}`;
}

/** A lease's end, as a time and how far off it is; a dash for a claim without a lease. */
function leaseEnd(claim: any) {
  const end = claim.status?.leaseExpiresAt;
  if (!end) return html`<span class="muted">–</span>`;
  return html`<time datetime=${end} title=${end}>${until(end)}</time>`;
}

export function allocationState(object: any): 'bound' | 'unbound' | 'invalid' {
  if (conditionOf(object, 'Valid')?.status === 'False') return 'invalid';
  return object.spec?.claimRef?.uid ? 'bound' : 'unbound';
}

function stateBadge(state: string) {
  return html`<span class="badge ${state === 'bound' ? 'ok' : state === 'invalid' ? 'bad' : 'unknown'}"
    >${state}</span
  >`;
}

function owner(spec: any) {
  return spec?.owner?.name
    ? html`<span>${spec.owner.kind ?? ''} <strong>${spec.owner.name}</strong></span>`
    : html`<span class="muted">–</span>`;
}

/** A claim's pool: its name, or `infra/fip` (to its page as shared with `ns`) when another namespace's. */
function poolLink(ns: string, ref: any) {
  const info = byKind(ref?.kind);
  const other = ref?.namespace && ref.namespace !== ns ? `${ref.namespace}/` : '';
  if (!info || info.kind !== ref.kind) return html`<span>${other}${ref?.kind}/${ref?.name}</span>`;
  const to = other
    ? href({ page: 'shared', ns, poolNs: ref.namespace, resource: info.resource, name: ref.name })
    : href({ page: 'pool', ns, resource: info.resource, name: ref.name });
  return html`<a href=${to}>${other}${ref.name}</a>`;
}

/** An object's claim (`spec.claimRef`): its name, or `acme/web` when a claim of another namespace. */
export function claimLink(ns: string, ref: { name: string; namespace?: string }) {
  const claimNs = ref.namespace ?? ns;
  return html`<a href=${href({ page: 'claim', ns: claimNs, name: ref.name })}
    >${claimNs === ns ? ref.name : `${claimNs}/${ref.name}`}</a
  >`;
}

export function claimsTable(ns: string, claims: any[], options: { showPool: boolean }) {
  if (claims.length === 0) return html`<p class="muted">No claims.</p>`;
  return html`<div class="table-wrap">
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Claim</th>
          ${options.showPool ? html`<th scope="col">Pool</th>` : nothing}
          <th scope="col">Value</th>
          <th scope="col">Allocated</th>
          <th scope="col">Owner</th>
          <th scope="col">Age</th>
          <th scope="col">Lease ends</th>
          <th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${claims.map(
          (claim) =>
            html`<tr>
              <th scope="row">
                <a href=${href({ page: 'claim', ns, name: claim.metadata.name })}>${claim.metadata.name}</a>
              </th>
              ${options.showPool ? html`<td>${poolLink(ns, claim.spec?.poolRef)}</td>` : nothing}
              <td><code class="value">${claim.status?.value ?? '–'}</code></td>
              <td>${badge(conditionOf(claim, 'Allocated'))}</td>
              <td>${owner(claim.spec)}</td>
              <td>${ago(claim.metadata.creationTimestamp)}</td>
              <td>${leaseEnd(claim)}</td>
              <td>
                ${claim.status?.leaseExpiresAt ? renewButton(ns, claim.metadata.name) : nothing}
                ${releaseButton(ns, claim.metadata.name)}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function allocationsTable(
  ns: string,
  rows: { info: PoolKindInfo; object: any }[],
  options: { showPool: boolean },
) {
  if (rows.length === 0) return html`<p class="muted">No allocation objects.</p>`;
  return html`<div class="table-wrap">
    <table class="list">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Kind</th>
          ${options.showPool ? html`<th scope="col">Pool</th>` : nothing}
          <th scope="col">Value</th>
          <th scope="col">State</th>
          <th scope="col">Claim</th>
          <th scope="col">Owner</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(({ info, object }) => {
          const claimRef = object.spec?.claimRef;
          return html`<tr>
            <th scope="row">
              <a
                href=${href({ page: 'allocation', ns, resource: info.allocationResource, name: object.metadata.name })}
                >${object.metadata.name}</a
              >
            </th>
            <td>${info.allocationKind}</td>
            ${options.showPool ? html`<td>${poolLink(ns, object.spec?.poolRef)}</td>` : nothing}
            <td>${valueCell(ns, info, object)}</td>
            <td>${stateBadge(allocationState(object))}</td>
            <td>${claimRef?.name ? claimLink(ns, claimRef) : html`<span class="muted">–</span>`}</td>
            <td>${owner(object.spec)}</td>
          </tr>`;
        })}
      </tbody>
    </table>
  </div>`;
}

/** An object's value, opening the value's page (its holdings) when the object names its pool. */
function valueCell(ns: string, info: PoolKindInfo, object: any) {
  const value = String(object.spec?.[info.valueField] ?? '');
  const pool = object.spec?.poolRef?.name;
  if (!value || typeof pool !== 'string') return html`<code class="value">${value}</code>`;
  return valueLink(object.metadata?.namespace ?? ns, info, pool, value);
}

interface Filter {
  state: string;
  text: string;
  /** A Kubernetes label selector, applied by the API (`labelSelector`), not in the page. */
  selector: string;
}

/** A list's path, with the filter's label selector for the API to apply. */
const selected = (path: string, filter: Filter) =>
  filter.selector.trim() ? `${path}?labelSelector=${encodeURIComponent(filter.selector.trim())}` : path;

const claimFilter: Filter = { state: '', text: '', selector: '' };

export function claimsPage(ns: string) {
  const claims = readAll(selected(nsPath(ns, 'claims'), claimFilter));
  const text = claimFilter.text.trim().toLowerCase();
  const shown = (claims.data ?? []).filter((claim: any) => {
    const allocated = conditionOf(claim, 'Allocated')?.status;
    if (claimFilter.state === 'allocated' && allocated !== 'True') return false;
    if (claimFilter.state === 'waiting' && allocated === 'True') return false;
    if (
      text &&
      !`${claim.metadata.name} ${claim.spec?.owner?.name ?? ''} ${claim.status?.value ?? ''}`
        .toLowerCase()
        .includes(text)
    )
      return false;
    return true;
  });
  return html`<section aria-labelledby="claims-title">
    <h1 id="claims-title">Claims <small class="muted">in ${ns}</small></h1>
    ${filterForm('claims', claimFilter, [
      ['', 'Any state'],
      ['allocated', 'Allocated'],
      ['waiting', 'Waiting'],
    ])}
    ${claims.error ? errorBox(claims.error) : claims.data ? claimsTable(ns, shown, { showPool: true }) : html`<p class="muted">Loading…</p>`}
  </section>`;
}

const allocationFilter: Filter = { state: '', text: '', selector: '' };

export function allocationsPage(ns: string) {
  const lists = POOL_KINDS.map((info) => ({
    info,
    entry: readAll(selected(nsPath(ns, info.allocationResource), allocationFilter)),
  }));
  const text = allocationFilter.text.trim().toLowerCase();
  const rows = lists
    .flatMap(({ info, entry }) => (entry.data ?? []).map((object: any) => ({ info, object })))
    .filter(({ info, object }) => {
      if (allocationFilter.state && allocationState(object) !== allocationFilter.state) return false;
      const claimRef = object.spec?.claimRef;
      const hay = `${object.metadata.name} ${object.spec?.[info.valueField]} ${object.spec?.owner?.name ?? ''} ${claimRef?.namespace ? `${claimRef.namespace}/` : ''}${claimRef?.name ?? ''}`;
      return !text || hay.toLowerCase().includes(text);
    });
  return html`<section aria-labelledby="allocations-title">
    <h1 id="allocations-title">Allocation objects <small class="muted">in ${ns}</small></h1>
    ${filterForm('allocations', allocationFilter, [
      ['', 'Any state'],
      ['bound', 'Bound'],
      ['unbound', 'Unbound'],
      ['invalid', 'Invalid'],
    ])}
    ${
      // One error for a selector the API refuses, not one per kind.
      lists.find(({ entry }) => entry.error)
        ? errorBox(lists.find(({ entry }) => entry.error)!.entry.error)
        : nothing
    }
    ${allocationsTable(ns, rows, { showPool: true })}
  </section>`;
}

function filterForm(id: string, filter: Filter, states: [string, string][]) {
  return html`<form
    class="filters"
    role="search"
    aria-label=${`Filter ${id}`}
    @submit=${(e: Event) => e.preventDefault()}
  >
    <label
      >Filter
      <input
        type="search"
        name="filter"
        .value=${filter.text}
        placeholder="name, value or owner"
        @input=${(e: Event) => {
          filter.text = (e.target as HTMLInputElement).value;
          scheduleDraw();
        }}
    /></label>
    <label
      >State
      <select
        name="state"
        @change=${(e: Event) => {
          filter.state = (e.target as HTMLSelectElement).value;
          scheduleDraw();
        }}
      >
        ${states.map(([value, label]) => html`<option value=${value} ?selected=${filter.state === value}>${label}</option>`)}
      </select></label
    >
    <label
      >Labels
      <input
        type="text"
        name="labelSelector"
        .value=${filter.selector}
        placeholder="team=fabric, tier in (a,b), !legacy"
        spellcheck="false"
        @change=${(e: Event) => {
          filter.selector = (e.target as HTMLInputElement).value;
          scheduleDraw();
        }}
    /></label>
  </form>`;
}

function metadataList(object: any) {
  return html`<dl class="spec">
    <div>
      <dt>Namespace</dt>
      <dd>${object.metadata.namespace}</dd>
    </div>
    <div>
      <dt>UID</dt>
      <dd><code>${object.metadata.uid}</code></dd>
    </div>
    <div>
      <dt>Created</dt>
      <dd>${object.metadata.creationTimestamp} (${ago(object.metadata.creationTimestamp)})</dd>
    </div>
    <div>
      <dt>Labels</dt>
      <dd>${labels(object.metadata.labels)}</dd>
    </div>
    <div>
      <dt>Annotations</dt>
      <dd>${labels(object.metadata.annotations)}</dd>
    </div>
  </dl>`;
}

export function claimPage(ns: string, name: string) {
  const entry = read(nsPath(ns, 'claims', name));
  const crumbs = html`<nav class="crumbs" aria-label="Breadcrumb">
    <a href=${href({ page: 'claims', ns })}>Claims</a> › <span>${name}</span>
  </nav>`;
  if (!entry.data)
    return html`${crumbs}${entry.error ? errorBox(entry.error) : html`<p class="muted">Loading…</p>`}`;
  const claim = entry.data;
  const ref = claim.status?.allocationRef;
  const info = ref ? byKind(ref.kind) : undefined;
  // A claim on a shared pool is held by an object in the pool's namespace.
  const refNs: string = ref?.namespace ?? ns;
  return html`<article aria-labelledby="claim-page-title">
    ${crumbs}
    <div class="title-row">
      <h1 id="claim-page-title">${name} <small class="muted">Claim</small></h1>
      ${claim.status?.leaseExpiresAt ? renewButton(ns, name) : nothing} ${releaseButton(ns, name)}
    </div>
    <div class="cards">
      <section class="card" aria-labelledby="claim-value-title">
        <h2 id="claim-value-title">Value</h2>
        <p class="big"><code class="value">${claim.status?.value ?? '–'}</code></p>
        <p>
          Pool: ${poolLink(ns, claim.spec?.poolRef)} <span class="muted">${claim.spec?.poolRef?.kind}</span>
        </p>
        ${
          ref && info
            ? html`<p>
                Held by
                <a
                  href=${href({ page: 'allocation', ns: refNs, resource: info.allocationResource, name: ref.name })}
                  >${ref.kind} ${refNs === ns ? '' : `${refNs}/`}${ref.name}</a
                >
              </p>`
            : nothing
        }
        <p>Owner: ${owner(claim.spec)}</p>
        ${
          claim.status?.leaseExpiresAt
            ? html`<p>
                Lease ends: ${leaseEnd(claim)}
                <span class="muted"
                  >(${claim.status.leaseExpiresAt}; ${claim.spec.leaseSeconds}s a renewal)</span
                >
              </p>`
            : nothing
        }
      </section>
      <section class="card" aria-labelledby="claim-spec-title">
        <h2 id="claim-spec-title">Spec</h2>
        <pre>${JSON.stringify(claim.spec, null, 2)}</pre>
      </section>
      <section class="card" aria-labelledby="claim-meta-title">
        <h2 id="claim-meta-title">Metadata</h2>
        ${metadataList(claim)}
      </section>
    </div>
    <section aria-labelledby="claim-conditions-title">
      <h2 id="claim-conditions-title">Conditions</h2>
      ${conditionsTable(claim.status?.conditions)}
    </section>
  </article>`;
}

export function allocationPage(ns: string, resource: string, name: string) {
  const info = POOL_KINDS.find((i) => i.allocationResource === resource);
  const entry = read(nsPath(ns, resource, name));
  const crumbs = html`<nav class="crumbs" aria-label="Breadcrumb">
    <a href=${href({ page: 'allocations', ns })}>Allocation objects</a> › <span>${name}</span>
  </nav>`;
  if (!info || !entry.data)
    return html`${crumbs}${entry.error ? errorBox(entry.error) : html`<p class="muted">Loading…</p>`}`;
  const object = entry.data;
  const claimRef = object.spec?.claimRef;
  return html`<article aria-labelledby="allocation-title">
    ${crumbs}
    <div class="title-row">
      <h1 id="allocation-title">${name} <small class="muted">${info.allocationKind}</small></h1>
      ${stateBadge(allocationState(object))}
    </div>
    <div class="cards">
      <section class="card" aria-labelledby="allocation-value-title">
        <h2 id="allocation-value-title">Value</h2>
        <p class="big"><code class="value">${String(object.spec?.[info.valueField])}</code></p>
        <p>Pool: ${poolLink(ns, object.spec?.poolRef)}</p>
        ${
          object.spec?.poolRef?.name
            ? html`<p>
                ${valueLink(ns, info, object.spec.poolRef.name, String(object.spec?.[info.valueField]), 'Who held it when')}
              </p>`
            : nothing
        }
        <p>
          Claim:
          ${claimRef?.name ? html`${claimLink(ns, claimRef)} ${claimRef.uid ? '' : html`<span class="muted">(not bound: uid empty)</span>`}` : html`<span class="muted">none</span>`}
        </p>
        <p>Owner: ${owner(object.spec)}</p>
      </section>
      <section class="card" aria-labelledby="allocation-meta-title">
        <h2 id="allocation-meta-title">Metadata</h2>
        ${metadataList(object)}
      </section>
    </div>
    <section aria-labelledby="allocation-conditions-title">
      <h2 id="allocation-conditions-title">Conditions</h2>
      ${conditionsTable(object.status?.conditions)}
    </section>
  </article>`;
}
