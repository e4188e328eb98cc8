/** A pool: its spec, counts, map, the claim form, and the claims and allocation objects it holds. */
import { html, nothing } from 'lit-html';
import { API_VERSION, byResource, call, isStatus, nsPath, type PoolKindInfo, type Status } from '../api.ts';
import { read, readAll, refresh, scheduleDraw } from '../data.ts';
import { href } from '../router.ts';
import {
  badge,
  causesByField,
  conditionOf,
  count,
  errorBox,
  fieldError,
  invalidAttrs,
  labels,
  usedOf,
  utilisation,
} from '../ui.ts';
import { poolMap } from './map.ts';
import { allocationsTable, claimsTable } from './objects.ts';

interface ClaimFormState {
  mode: 'next' | 'value' | 'within';
  value: string;
  within: string;
  result?: { claim: any } | { error: Status };
  busy: boolean;
}

/** The claim form's ways of choosing a value, with their labels. */
const CLAIM_MODES: [ClaimFormState['mode'], string][] = [
  ['next', 'next free'],
  ['value', 'this value'],
  ['within', 'within'],
];

const claimForms = new Map<string, ClaimFormState>();
const CLAIM_FIELDS = ['metadata.name', 'spec.value', 'spec.within', 'spec.owner'] as const;

function formOf(key: string): ClaimFormState {
  let form = claimForms.get(key);
  if (!form) claimForms.set(key, (form = { mode: 'next', value: '', within: '', busy: false }));
  return form;
}

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
  const poolClaims = (claims.data ?? []).filter(
    (claim: any) => claim.spec?.poolRef?.kind === info.kind && claim.spec?.poolRef?.name === name,
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
        ${specList(pool.spec)}
        <p><span class="muted">Labels</span> ${labels(pool.metadata.labels)}</p>
      </section>
      ${claimForm(ns, info, name, form)}
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

function specList(spec: Record<string, unknown>) {
  return html`<dl class="spec">
    ${Object.entries(spec).map(
      ([field, value]) =>
        html`<div>
          <dt>${field}</dt>
          <dd>
            ${Array.isArray(value) ? value.map((v) => html`<code>${String(v)}</code> `) : html`<code>${typeof value === 'object' ? JSON.stringify(value) : String(value)}</code>`}
          </dd>
        </div>`,
    )}
  </dl>`;
}

type Errors = Map<string, string[]>;

/** The claim's spec from the form: the pool, the value or span its mode asks for, and the owner if named. */
function claimSpecFromForm(info: PoolKindInfo, pool: string, form: ClaimFormState, data: FormData) {
  const spec: Record<string, unknown> = { poolRef: { kind: info.kind, name: pool } };
  const value = String(data.get('value') ?? '').trim();
  const within = String(data.get('within') ?? '').trim();
  if (form.mode === 'value')
    spec.value =
      info.kind === 'IndexPool' && /^\d+$/.test(value) && Number.isSafeInteger(Number(value))
        ? Number(value)
        : value;
  if (form.mode === 'within') spec.within = within;
  const ownerName = String(data.get('owner-name') ?? '').trim();
  if (ownerName)
    spec.owner = { kind: String(data.get('owner-kind') ?? '').trim() || 'Machine', name: ownerName };
  return spec;
}

/** Creates the claim; the answer, claim or refusal, stays on the form. A made claim's name is cleared. */
async function submitClaim(event: Event, ns: string, info: PoolKindInfo, pool: string, form: ClaimFormState) {
  event.preventDefault();
  const data = new FormData(event.target as HTMLFormElement);
  const spec = claimSpecFromForm(info, pool, form, data);
  form.value = String(data.get('value') ?? '').trim();
  form.within = String(data.get('within') ?? '').trim();
  form.busy = true;
  scheduleDraw();
  const answer = await call('POST', nsPath(ns, 'claims'), {
    apiVersion: API_VERSION,
    kind: 'Claim',
    metadata: { name: String(data.get('name') ?? '').trim() },
    spec,
  });
  form.busy = false;
  form.result = isStatus(answer.body) ? { error: answer.body } : { claim: answer.body };
  if (!isStatus(answer.body))
    (event.target as HTMLFormElement).querySelector<HTMLInputElement>('#claim-name')!.value = '';
  await refresh();
  scheduleDraw();
}

function claimInput(
  errors: Errors,
  id: string,
  field: string,
  attrs: { label: string; placeholder?: string; value?: string; name: string },
) {
  return html`<label for=${id}>${attrs.label}</label>
    <input
      id=${id}
      name=${attrs.name}
      .value=${attrs.value ?? ''}
      placeholder=${attrs.placeholder ?? ''}
      aria-invalid=${invalidAttrs(errors.get(field))}
      aria-describedby=${errors.get(field) ? `${id}-error` : ''}
      autocomplete="off"
    />${fieldError(id, errors.get(field))}`;
}

function modeChoice(form: ClaimFormState) {
  return html`<fieldset class="modes">
    <legend>Which value</legend>
    ${CLAIM_MODES.map(
      ([mode, label]) =>
        html`<label
          ><input
            type="radio"
            name="mode"
            value=${mode}
            .checked=${form.mode === mode}
            @change=${() => {
              form.mode = mode;
              scheduleDraw();
            }}
          />
          ${label}</label
        >`,
    )}
  </fieldset>`;
}

/** The value asked for. Drawn apart from withinInput, so text typed in one never shows in the other. */
function valueInput(info: PoolKindInfo, form: ClaimFormState, errors: Errors) {
  return claimInput(errors, 'claim-value', 'spec.value', {
    label: 'Value',
    name: 'value',
    value: form.value,
    placeholder:
      info.kind === 'IndexPool' ? '64600' : info.kind === 'IPAddressPool' ? '10.42.1.7' : '10.0.1.0/24',
  });
}

/** The span to claim within. */
function withinInput(info: PoolKindInfo, form: ClaimFormState, errors: Errors) {
  return claimInput(errors, 'claim-within', 'spec.within', {
    label: info.kind === 'IndexPool' ? 'Within (a..b)' : 'Within (CIDR)',
    name: 'within',
    value: form.within,
    placeholder: info.kind === 'IndexPool' ? '65000..65100' : '10.42.1.0/24',
  });
}

function ownerFields(errors: Errors) {
  return html`<details>
    <summary>Owner (optional)</summary>
    <div class="stack">
      <label for="owner-kind">Owner kind</label
      ><input id="owner-kind" name="owner-kind" placeholder="VirtualMachine" autocomplete="off" />
      <label for="owner-name">Owner name</label>
      <input
        id="owner-name"
        name="owner-name"
        placeholder="web-01"
        autocomplete="off"
        aria-invalid=${invalidAttrs(errors.get('spec.owner'))}
        aria-describedby=${errors.get('spec.owner') ? 'owner-name-error' : ''}
      />
      ${fieldError('owner-name', errors.get('spec.owner'))}
    </div>
  </details>`;
}

/** The last answer: the refusal's causes that name no field, or the claim with its value or why it waits. */
function claimResult(ns: string, form: ClaimFormState, errors: Errors) {
  const claimed = form.result && 'claim' in form.result ? form.result.claim : undefined;
  const allocated = claimed ? conditionOf(claimed, 'Allocated') : undefined;
  return html`<div id="claim-result" aria-live="polite">
    ${errors.get('') ? errorBox({ ...(form.result as { error: Status }).error, message: errors.get('')!.join('; ') }) : nothing}
    ${
      claimed
        ? html`<p class=${allocated?.status === 'True' ? 'success' : 'warning'} role="status">
            <a href=${href({ page: 'claim', ns, name: claimed.metadata.name })}
              >claim/${claimed.metadata.name}</a
            >:
            ${
              claimed.status?.value
                ? html`<strong class="value">${claimed.status.value}</strong>`
                : html`waits (${allocated?.reason}: ${allocated?.message})`
            }
          </p>`
        : nothing
    }
  </div>`;
}

function claimForm(ns: string, info: PoolKindInfo, pool: string, form: ClaimFormState) {
  const errors: Errors =
    form.result && 'error' in form.result ? causesByField(form.result.error, CLAIM_FIELDS) : new Map();
  return html`<section class="card" aria-labelledby="claim-title">
    <h2 id="claim-title">Claim a value</h2>
    <form
      class="stack"
      @submit=${(event: Event) => submitClaim(event, ns, info, pool, form)}
      aria-describedby="claim-result"
    >
      <label for="claim-name">Claim name</label>
      <input
        id="claim-name"
        name="name"
        required
        placeholder="e.g. leaf2-asn"
        autocomplete="off"
        aria-invalid=${invalidAttrs(errors.get('metadata.name'))}
        aria-describedby=${errors.get('metadata.name') ? 'claim-name-error' : ''}
      />${fieldError('claim-name', errors.get('metadata.name'))} ${modeChoice(form)}
      ${form.mode === 'value' ? valueInput(info, form, errors) : nothing}
      ${form.mode === 'within' ? withinInput(info, form, errors) : nothing} ${ownerFields(errors)}
      <button class="button primary" type="submit" ?disabled=${form.busy}>
        ${form.busy ? 'Claiming…' : 'Claim'}
      </button>
    </form>
    ${claimResult(ns, form, errors)}
  </section>`;
}
