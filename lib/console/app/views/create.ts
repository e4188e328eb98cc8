/**
 * Creating pools: a form per pool kind, or manifests pasted as YAML or JSON (several documents, any
 * kind: the seed manifests paste unchanged). The API's validation errors are shown at the field their
 * `details.causes` name.
 */
import { html, nothing } from 'lit-html';
import { parseAllDocuments } from 'yaml';
import {
  API_VERSION,
  byKind,
  call,
  isStatus,
  nsPath,
  POOL_KINDS,
  resourceOfKind,
  type Status,
} from '../api.ts';
import { refresh, scheduleDraw } from '../data.ts';
import { href } from '../router.ts';
import { causesByField, errorBox, fieldError, invalidAttrs } from '../ui.ts';
import seedManifests from '../../../../docs/examples/seed.yaml';

type Kind = (typeof POOL_KINDS)[number]['kind'];

const FIELDS = [
  'metadata.name',
  'spec.ranges',
  'spec.prefixes',
  'spec.exclude',
  'spec.gateway',
  'spec.excludeNetworkAndBroadcast',
  'spec.allocationPrefixLength',
  'spec.reclaimPolicy',
  'spec.sharedWith',
] as const;

const state: {
  kind: Kind;
  tab: 'form' | 'paste';
  error?: Status;
  busy: boolean;
  applied: { ref: string; ok: boolean; message: string; causes?: { field?: string; message: string }[] }[];
} = { kind: 'IndexPool', tab: 'form', busy: false, applied: [] };

const lines = (text: FormDataEntryValue | null) =>
  String(text ?? '')
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter(Boolean);

function specFromForm(kind: Kind, data: FormData): Record<string, unknown> {
  const spec: Record<string, unknown> = { reclaimPolicy: String(data.get('reclaimPolicy') ?? 'Recycle') };
  if (kind === 'IndexPool') spec.ranges = lines(data.get('ranges'));
  else spec.prefixes = lines(data.get('prefixes'));
  if (kind === 'IPAddressPool') {
    const exclude = lines(data.get('exclude'));
    if (exclude.length) spec.exclude = exclude;
    const gateway = String(data.get('gateway') ?? '').trim();
    if (gateway) spec.gateway = gateway;
    spec.excludeNetworkAndBroadcast = data.get('excludeNetworkAndBroadcast') === 'on';
  }
  if (kind === 'IPPrefixPool') {
    const length = String(data.get('allocationPrefixLength') ?? '').trim();
    spec.allocationPrefixLength = /^\d+$/.test(length) ? Number(length) : length;
  }
  const sharedWith = lines(data.get('sharedWith')).map(sharedWithEntry);
  if (sharedWith.length) spec.sharedWith = sharedWith;
  return spec;
}

/** `acme`, `acme 10`, `* 2`: a namespace (or `*`, every one), and the most values it may hold. */
function sharedWithEntry(line: string): { namespace: string; maxAllocations?: unknown } {
  const [namespace = '', max, ...more] = line.split(/\s+/);
  // Anything else is sent as the namespace, for the API to say what is wrong with it.
  if (more.length) return { namespace: line };
  if (max === undefined) return { namespace };
  return { namespace, maxAllocations: /^\d+$/.test(max) ? Number(max) : max };
}

/** Applies manifests in order; each answer is kept, so a failed one shows its causes. */
async function apply(ns: string, documents: unknown[]) {
  state.applied = [];
  for (const document of documents) {
    const object = document as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
    const resource = resourceOfKind(object?.kind);
    const ref = `${String(object?.kind ?? '?').toLowerCase()}/${String(object?.metadata?.name ?? '?')}`;
    if (!resource) {
      state.applied.push({ ref, ok: false, message: `kind ${String(object?.kind)} is not one Allot serves` });
      continue;
    }
    const namespace = typeof object.metadata?.namespace === 'string' ? object.metadata.namespace : ns;
    const answer = await call('POST', nsPath(namespace, resource), document);
    state.applied.push(
      isStatus(answer.body)
        ? { ref, ok: false, message: answer.body.message, causes: answer.body.details?.causes }
        : { ref, ok: true, message: 'created' },
    );
  }
}

export function exampleButton(ns: string) {
  return html`<button
    type="button"
    class="button"
    @click=${async () => {
      await apply(
        ns,
        parseAllDocuments(seedManifests).map((d) => d.toJS()),
      );
      await refresh();
      scheduleDraw();
    }}
  >
    Load the seed example
  </button>`;
}

type Errors = Map<string, string[]>;
type Control = (attrs: { invalid: string; describedby: string }) => unknown;

/** A labelled control with its hint and the API's messages for it; a pool's name errs at metadata.name. */
function field(errors: Errors, id: string, name: string, label: string, control: Control, hint?: string) {
  const messages = errors.get(`spec.${name}`) ?? (name === 'name' ? errors.get('metadata.name') : undefined);
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${control({ invalid: invalidAttrs(messages), describedby: [messages ? `${id}-error` : '', hint ? `${id}-hint` : ''].join(' ').trim() })}
    ${hint ? html`<p class="hint" id=${`${id}-hint`}>${hint}</p>` : nothing} ${fieldError(id, messages)}
  </div>`;
}

/** Creates the form's pool and opens it; on a refusal the form stays, its first bad field focused. */
async function createFromForm(event: Event, ns: string, resource: string) {
  event.preventDefault();
  const data = new FormData(event.target as HTMLFormElement);
  const name = String(data.get('name') ?? '').trim();
  state.busy = true;
  scheduleDraw();
  const answer = await call('POST', nsPath(ns, resource), {
    apiVersion: API_VERSION,
    kind: state.kind,
    metadata: { name },
    spec: specFromForm(state.kind, data),
  });
  state.busy = false;
  if (isStatus(answer.body)) {
    state.error = answer.body;
    scheduleDraw();
    requestAnimationFrame(() => document.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
    return;
  }
  state.error = undefined;
  await refresh();
  location.hash = href({ page: 'pool', ns, resource, name });
}

/** The objects in pasted text: each document, a JSON array's items, a List's items. Throws if not YAML. */
function parseManifests(text: string): unknown[] {
  const parsed = parseAllDocuments(text);
  const problems = parsed.flatMap((d) => d.errors.map((e) => e.message));
  if (problems.length) throw new Error(problems.join('; '));
  return parsed
    .map((d) => d.toJS() as unknown)
    .flatMap((d) =>
      Array.isArray(d)
        ? d
        : (d as { kind?: string; items?: unknown[] })?.kind === 'List'
          ? ((d as { items: unknown[] }).items ?? [])
          : [d],
    )
    .filter((d) => d !== null && d !== undefined);
}

async function applyPasted(event: Event, ns: string) {
  event.preventDefault();
  const text = String(new FormData(event.target as HTMLFormElement).get('manifests') ?? '');
  let documents: unknown[];
  try {
    documents = parseManifests(text);
  } catch (error) {
    state.applied = [
      { ref: 'manifests', ok: false, message: `not YAML or JSON: ${(error as Error).message}` },
    ];
    scheduleDraw();
    return;
  }
  state.busy = true;
  scheduleDraw();
  await apply(ns, documents);
  state.busy = false;
  await refresh();
  scheduleDraw();
}

/** One of the two tabs; the arrow keys move between them, as the ARIA tabs pattern asks. */
function tab(id: 'form' | 'paste', label: string) {
  return html`<button
    type="button"
    role="tab"
    id=${`tab-${id}`}
    aria-controls=${`panel-${id}`}
    aria-selected=${state.tab === id ? 'true' : 'false'}
    tabindex=${state.tab === id ? 0 : -1}
    @click=${() => {
      state.tab = id;
      scheduleDraw();
    }}
    @keydown=${(e: KeyboardEvent) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
      state.tab = state.tab === 'form' ? 'paste' : 'form';
      scheduleDraw();
      requestAnimationFrame(() => document.getElementById(`tab-${state.tab}`)?.focus());
    }}
  >
    ${label}
  </button>`;
}

/** Choosing another kind redraws the form with that kind's fields and forgets the last refusal. */
function kindSelect() {
  return html`<div class="field">
    <label for="pool-kind">Kind</label>
    <select
      id="pool-kind"
      name="kind"
      @change=${(e: Event) => {
        state.kind = (e.target as HTMLSelectElement).value as Kind;
        state.error = undefined;
        scheduleDraw();
      }}
    >
      ${POOL_KINDS.map((k) => html`<option value=${k.kind} ?selected=${k.kind === state.kind}>${k.kind} (${k.label}s)</option>`)}
    </select>
  </div>`;
}

/** What the pool hands out from: an index pool's ranges, or the prefixes of an address or prefix pool. */
function sourceField(errors: Errors) {
  return state.kind === 'IndexPool'
    ? field(
        errors,
        'pool-ranges',
        'ranges',
        'Ranges',
        (a) =>
          html`<textarea
            id="pool-ranges"
            name="ranges"
            rows="3"
            placeholder="64512..65534"
            aria-invalid=${a.invalid}
            aria-describedby=${a.describedby}
          ></textarea>`,
        'One range a line: a..b (inclusive) or a single number.',
      )
    : field(
        errors,
        'pool-prefixes',
        'prefixes',
        'Prefixes',
        (a) =>
          html`<textarea
            id="pool-prefixes"
            name="prefixes"
            rows="3"
            placeholder=${state.kind === 'IPAddressPool' ? '10.42.0.0/16' : '2001:db8::/48'}
            aria-invalid=${a.invalid}
            aria-describedby=${a.describedby}
          ></textarea>`,
        'One CIDR a line, one address family.',
      );
}

function addressPoolFields(errors: Errors) {
  return html`${field(errors, 'pool-exclude', 'exclude', 'Exclude', (a) => html`<textarea id="pool-exclude" name="exclude" rows="2" placeholder="10.42.0.1" aria-invalid=${a.invalid} aria-describedby=${a.describedby}></textarea>`, 'Addresses or CIDRs never handed out, one a line.')}
    ${field(errors, 'pool-gateway', 'gateway', 'Gateway', (a) => html`<input id="pool-gateway" name="gateway" autocomplete="off" aria-invalid=${a.invalid} aria-describedby=${a.describedby} />`)}
    <label class="check"
      ><input type="checkbox" name="excludeNetworkAndBroadcast" /> Leave out each prefix's network and
      broadcast address</label
    >`;
}

function prefixPoolFields(errors: Errors) {
  return field(
    errors,
    'pool-length',
    'allocationPrefixLength',
    'Allocation prefix length',
    (a) =>
      html`<input
        id="pool-length"
        name="allocationPrefixLength"
        inputmode="numeric"
        placeholder="64"
        aria-invalid=${a.invalid}
        aria-describedby=${a.describedby}
      />`,
  );
}

function sharedWithField(errors: Errors) {
  return field(
    errors,
    'pool-shared',
    'sharedWith',
    'Shared with (optional)',
    (a) =>
      html`<textarea
        id="pool-shared"
        name="sharedWith"
        rows="2"
        placeholder=${'acme 10\n*'}
        aria-invalid=${a.invalid}
        aria-describedby=${a.describedby}
      ></textarea>`,
    'Other namespaces whose claims may name the pool, one a line: a namespace or * (every one), then the most values it may hold, if any: acme 10.',
  );
}

function reclaimPolicyField(errors: Errors) {
  return field(
    errors,
    'pool-reclaim',
    'reclaimPolicy',
    'Reclaim policy',
    (a) =>
      html`<select
        id="pool-reclaim"
        name="reclaimPolicy"
        aria-invalid=${a.invalid}
        aria-describedby=${a.describedby}
      >
        <option>Recycle</option>
        <option>Retain</option>
      </select>`,
  );
}

/** The form for one pool kind; causes that name no field of it show above the button. */
function formPanel(ns: string) {
  const errors = causesByField(state.error, FIELDS);
  const { resource } = byKind(state.kind)!;
  return html`<form
    id="panel-form"
    role="tabpanel"
    aria-labelledby="tab-form"
    class="card stack wide"
    @submit=${(event: Event) => createFromForm(event, ns, resource)}
    novalidate
  >
    ${kindSelect()}
    ${field(errors, 'pool-name', 'name', 'Name', (a) => html`<input id="pool-name" name="name" autocomplete="off" placeholder="e.g. asn-pool" aria-invalid=${a.invalid} aria-describedby=${a.describedby} />`)}
    ${sourceField(errors)} ${state.kind === 'IPAddressPool' ? addressPoolFields(errors) : nothing}
    ${state.kind === 'IPPrefixPool' ? prefixPoolFields(errors) : nothing} ${reclaimPolicyField(errors)}
    ${sharedWithField(errors)}
    ${errors.get('') ? errorBox({ ...state.error!, message: errors.get('')!.join('; ') }) : nothing}
    <button class="button primary" type="submit" ?disabled=${state.busy}>
      ${state.busy ? 'Creating…' : `Create ${state.kind}`}
    </button>
  </form>`;
}

function pastePanel(ns: string) {
  return html`<form
    id="panel-paste"
    role="tabpanel"
    aria-labelledby="tab-paste"
    class="card stack wide"
    @submit=${(event: Event) => applyPasted(event, ns)}
  >
    <label for="manifests">Manifests</label>
    <textarea
      id="manifests"
      name="manifests"
      rows="14"
      spellcheck="false"
      class="code"
      aria-describedby="manifests-hint"
      placeholder=${'apiVersion: pool.networking.metal.ironcore.dev/v1alpha1\nkind: IndexPool\nmetadata:\n  name: asn-pool\nspec:\n  ranges:\n    - 64512..65534'}
    ></textarea>
    <p class="hint" id="manifests-hint">
      YAML or JSON; several documents separated by <code>---</code>. Pools, claims and allocation objects.
    </p>
    <button class="button primary" type="submit" ?disabled=${state.busy}>
      ${state.busy ? 'Applying…' : 'Apply'}
    </button>
  </form>`;
}

/** What the last apply did, one line a manifest, with the causes of each refusal. */
function appliedList() {
  if (!state.applied.length) return nothing;
  return html`<ul class="applied" aria-live="polite" aria-label="What was applied">
    ${state.applied.map(
      (a) =>
        html`<li class=${a.ok ? 'success' : 'error'}>
          <code>${a.ref}</code> ${a.ok ? 'created' : html`failed: ${a.message}`}
          ${
            a.causes?.length
              ? html`<ul>
                  ${a.causes.map((c) => html`<li><code>${c.field ?? ''}</code>: ${c.message}</li>`)}
                </ul>`
              : nothing
          }
        </li>`,
    )}
  </ul>`;
}

export function newPoolPage(ns: string) {
  return html`<section aria-labelledby="new-title">
    <nav class="crumbs" aria-label="Breadcrumb">
      <a href=${href({ page: 'pools', ns })}>Pools</a> › <span>New pool</span>
    </nav>
    <h1 id="new-title">New pool <small class="muted">in ${ns}</small></h1>
    <div role="tablist" aria-label="How to create" class="tabs">
      ${tab('form', 'Form')}${tab('paste', 'Paste YAML or JSON')}
    </div>
    ${state.tab === 'form' ? formPanel(ns) : pastePanel(ns)} ${appliedList()}
  </section>`;
}
