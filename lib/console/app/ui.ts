/** Small pieces every page uses: bars, badges, conditions, labels, errors shown at their field. */
import { html, nothing, type TemplateResult } from 'lit-html';
import type { Status } from './api.ts';
import { fraction, percent, shortCount } from './values.ts';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export function utilisation(allocated: string | number, total: string | number, label: string) {
  const share = fraction(allocated, total);
  const text = `${percent(share, allocated)}`;
  return html`<span class="util">
    <span class="bar" role="img" aria-label=${`${label}: ${allocated} of ${total} allocated (${text})`}
      ><span class="fill" style=${`width:${Math.max(share * 100, BigInt(allocated) > 0n ? 1 : 0)}%`}></span
    ></span>
    <span class="pct" aria-hidden="true">${text}</span>
  </span>`;
}

export function badge(condition: Condition | undefined): TemplateResult {
  if (!condition) return html`<span class="badge unknown">Unknown</span>`;
  const tone = condition.status === 'True' ? 'ok' : condition.status === 'False' ? 'bad' : 'unknown';
  return html`<span class="badge ${tone}" title=${condition.message ?? ''}
    >${condition.status}${condition.reason ? html` <small>${condition.reason}</small>` : nothing}</span
  >`;
}

export function conditionOf(object: any, type: string): Condition | undefined {
  return (object?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);
}

export function conditionsTable(conditions: Condition[] | undefined) {
  if (!conditions?.length) return html`<p class="muted">No conditions.</p>`;
  return html`<table class="plain">
    <thead>
      <tr>
        <th scope="col">Type</th>
        <th scope="col">Status</th>
        <th scope="col">Message</th>
        <th scope="col">Since</th>
      </tr>
    </thead>
    <tbody>
      ${conditions.map(
        (c) =>
          html`<tr>
            <td>${c.type}</td>
            <td>${badge(c)}</td>
            <td>${c.message ?? ''}</td>
            <td><time datetime=${c.lastTransitionTime ?? ''}>${ago(c.lastTransitionTime)}</time></td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function labels(map: Record<string, string> | undefined) {
  const entries = Object.entries(map ?? {});
  if (entries.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul class="chips">
    ${entries.map(([key, value]) => html`<li><code>${key}=${value}</code></li>`)}
  </ul>`;
}

/** A span of whole seconds in its largest unit: "42s", "9m", "3h", "2d". */
function span(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

export function ago(time: string | undefined): string {
  if (!time) return '';
  return `${span(Math.max(0, Math.round((Date.now() - Date.parse(time)) / 1000)))} ago`;
}

/** How long until `time` (a lease's end): "in 42s", "in 9m", …; "ended" once it has passed. */
export function until(time: string): string {
  const seconds = Math.round((Date.parse(time) - Date.now()) / 1000);
  return seconds <= 0 ? 'ended' : `in ${span(seconds)}`;
}

/** How long a period lasted, from `from` to `until` (or now): "<1s", "42s", "9m", "3h", "2d". */
export function lasted(from: string, until?: string): string {
  const ms = (until ? Date.parse(until) : Date.now()) - Date.parse(from);
  return ms < 1000 ? '<1s' : span(Math.round(ms / 1000));
}

/** An instant in the reader's time zone, the exact UTC time (milliseconds) in its title and datetime. */
export function instant(time: string) {
  return html`<time datetime=${time} title=${time}>${localTime(Date.parse(time))}</time>`;
}

/** A moment (epoch ms) as the reader's clock shows it, to the second. */
export function localTime(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function errorBox(status: Status | undefined, id?: string) {
  if (!status) return nothing;
  return html`<div class="error" role="alert" id=${id ?? nothing}>
    <strong>${status.code ? `${status.code} ${status.reason}` : status.reason}</strong>: ${status.message}
  </div>`;
}

/**
 * The causes of a Status, by the form field they belong to: `spec.ranges[1]` belongs to the field
 * `spec.ranges`. Causes no field claims are kept under "".
 */
export function causesByField(status: Status | undefined, fields: readonly string[]): Map<string, string[]> {
  const byField = new Map<string, string[]>();
  for (const cause of status?.details?.causes ?? []) {
    const named = cause.field ?? '';
    const field =
      fields.find((f) => named === f || named.startsWith(`${f}[`) || named.startsWith(`${f}.`)) ?? '';
    byField.set(field, [...(byField.get(field) ?? []), cause.message]);
  }
  if (status && byField.size === 0) byField.set('', [status.message]);
  return byField;
}

/** An input's error line, tied to it by aria-describedby (`${id}-error`). */
export function fieldError(id: string, messages: string[] | undefined) {
  if (!messages?.length) return nothing;
  return html`<p class="field-error" id=${`${id}-error`}>${messages.join('; ')}</p>`;
}

export function invalidAttrs(messages: string[] | undefined) {
  return messages?.length ? 'true' : 'false';
}

export function count(value: string | number | undefined) {
  return html`<span title=${value === undefined ? '' : String(value)}>${shortCount(value)}</span>`;
}

export function loadingOr<T>(
  entry: { data?: T; error?: Status; loading: boolean },
  view: (data: T) => unknown,
) {
  if (entry.data !== undefined) return view(entry.data);
  if (entry.error) return errorBox(entry.error);
  return html`<p class="muted" aria-busy="true">Loading…</p>`;
}

/** What a pool's bar shows as used: total − free (a prefix pool counts in its smallest prefixes). */
export function usedOf(pool: any): string {
  const total = BigInt(pool?.status?.total ?? '0');
  const free = BigInt(pool?.status?.free ?? '0');
  return (total > free ? total - free : 0n).toString();
}

/** A spec's fields (but those shown apart), each value as code: a list item by item, an object as JSON. */
export function specList(spec: Record<string, unknown>, apart: readonly string[] = []) {
  const code = (value: unknown) =>
    html`<code>${typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value)}</code>`;
  return html`<dl class="spec">
    ${Object.entries(spec)
      .filter(([field]) => !apart.includes(field))
      .map(
        ([field, value]) =>
          html`<div>
            <dt>${field}</dt>
            <dd>${Array.isArray(value) ? value.map((v) => html`${code(v)} `) : code(value)}</dd>
          </div>`,
      )}
  </dl>`;
}
