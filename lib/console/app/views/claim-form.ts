/**
 * The claim form: a claim's name, which value (the next free, a given one, or one within a span) and an
 * optional owner, with the API's refusals shown at their field. On a pool's page, and on a shared pool's
 * page (views/shared.ts), where the claim names the pool's namespace in `spec.poolRef.namespace`.
 */
import { html, nothing } from 'lit-html';
import { API_VERSION, call, isStatus, nsPath, type PoolKindInfo, type Status } from '../api.ts';
import { refresh, scheduleDraw } from '../data.ts';
import { href } from '../router.ts';
import { causesByField, conditionOf, errorBox, fieldError, invalidAttrs } from '../ui.ts';

export interface ClaimFormState {
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

export function formOf(key: string): ClaimFormState {
  let form = claimForms.get(key);
  if (!form) claimForms.set(key, (form = { mode: 'next', value: '', within: '', busy: false }));
  return form;
}

type Errors = Map<string, string[]>;

/** Which pool a claim names: its kind and name, and its namespace when another one's (a shared pool). */
export interface PoolTarget {
  info: PoolKindInfo;
  name: string;
  namespace?: string;
}

/** The claim's spec from the form: the pool, the value or span its mode asks for, and the owner if named. */
function claimSpecFromForm(pool: PoolTarget, form: ClaimFormState, data: FormData) {
  const { info } = pool;
  const poolRef = { kind: info.kind, name: pool.name, ...(pool.namespace && { namespace: pool.namespace }) };
  const spec: Record<string, unknown> = { poolRef };
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
async function submitClaim(event: Event, ns: string, pool: PoolTarget, form: ClaimFormState) {
  event.preventDefault();
  const data = new FormData(event.target as HTMLFormElement);
  const spec = claimSpecFromForm(pool, form, data);
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

/** The form for a claim in `ns` on `pool` (of `ns`, or of the namespace it names). */
export function claimForm(ns: string, pool: PoolTarget, form: ClaimFormState) {
  const { info } = pool;
  const errors: Errors =
    form.result && 'error' in form.result ? causesByField(form.result.error, CLAIM_FIELDS) : new Map();
  return html`<section class="card" aria-labelledby="claim-title">
    <h2 id="claim-title">Claim a value</h2>
    <form
      class="stack"
      @submit=${(event: Event) => submitClaim(event, ns, pool, form)}
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
