/**
 * A value of a pool, and who held it when: its holdings (api.md, "The history of a value";
 * docs/history.md) as a timeline, newest first, one row each with its claim (or none), owner, from and
 * until, and how it ended; older holdings a page at a time (`continue`). It reads the history alone, so
 * the page of a value whose pool is gone still answers.
 */
import { html, nothing } from 'lit-html';
import type { Holding, HoldingEnd } from '../../../domain/objects/holdings.ts';
import { byResource, nsPath, type PoolKindInfo } from '../api.ts';
import { read, scheduleDraw, type Entry } from '../data.ts';
import { href } from '../router.ts';
import { errorBox, instant, lasted, localTime } from '../ui.ts';

interface HoldingList {
  kind: 'HoldingList';
  items: Holding[];
  metadata?: { continue?: string };
}

/** Holdings a page: a value held this many times shows an "Older holdings" button. */
export const HISTORY_PAGE = 25;

/** How many pages of each value's history the reader asked for (the first, and each "older" press). */
const shownPages = new Map<string, number>();

/** What each way a holding ends means, for the reader (docs/history.md). */
const ENDINGS: Record<HoldingEnd, string> = {
  Released: 'the claim was released',
  Expired: "the claim's lease ended",
  Bound: 'a claim bound the object',
  Deleted: 'the object was deleted by hand',
  PoolDeleted: 'the pool was deleted',
  QuarantineOver: 'the quarantine ended',
};

export function historyPath(ns: string, info: PoolKindInfo, pool: string, value: string, token?: string) {
  const page = `${nsPath(ns, info.resource, pool)}/history?value=${encodeURIComponent(value)}&limit=${HISTORY_PAGE}`;
  return token ? `${page}&continue=${encodeURIComponent(token)}` : page;
}

/** The link to a value's page, as the pool's page and its map show it. */
export function valueLink(ns: string, info: PoolKindInfo, pool: string, value: string, text?: string) {
  return html`<a href=${href({ page: 'value', ns, resource: info.resource, name: pool, value })}
    >${text ?? html`<code class="value">${value}</code>`}</a
  >`;
}

export function valuePage(ns: string, resource: string, pool: string, value: string) {
  const info = byResource(resource);
  if (!info || info.resource !== resource)
    return errorBox({ kind: 'Status', code: 404, reason: 'NotFound', message: `no pool kind ${resource}` });
  const key = `${ns}/${resource}/${pool}/${value}`;
  // Each page's path comes from the page before it as last read, so a holding that starts meanwhile
  // moves the pages along rather than leaving one out.
  const pages: Entry<HoldingList>[] = [];
  let token: string | undefined;
  for (let index = 0; index < (shownPages.get(key) ?? 1); index++) {
    const entry = read<HoldingList>(historyPath(ns, info, pool, value, token));
    pages.push(entry);
    token = entry.data?.metadata?.continue;
    if (!token) break;
  }
  const seen = new Set<string>();
  const holdings = pages
    .flatMap((entry) => entry.data?.items ?? [])
    .filter((holding) => {
      const id = `${holding.allocation.uid}/${holding.from}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  const last = pages[pages.length - 1]!;
  const first = pages[0]!;
  const older = () => {
    shownPages.set(key, pages.length + 1);
    scheduleDraw();
  };

  let body;
  if (!first.data) {
    body = first.error ? errorBox(first.error) : html`<p class="muted" aria-busy="true">Loading…</p>`;
  } else if (holdings.length === 0) {
    body = html`<p class="empty">
      Nothing has held <strong>${value}</strong> in ${pool}, or not within the history kept.
    </p>`;
  } else {
    body = html`${timeline(value, holdings)} ${last.error ? errorBox(last.error) : nothing}
    ${
      last.data === undefined && !last.error
        ? html`<p class="muted" aria-busy="true">Loading older holdings…</p>`
        : last.data?.metadata?.continue
          ? html`<p><button type="button" class="button" @click=${older}>Older holdings</button></p>`
          : nothing
    }`;
  }

  return html`<article aria-labelledby="value-title">
    <nav class="crumbs" aria-label="Breadcrumb">
      <a href=${href({ page: 'pools', ns })}>Pools</a> ›
      <a href=${href({ page: 'pool', ns, resource, name: pool })}>${pool}</a> › <span>${value}</span>
    </nav>
    <div class="title-row">
      <h1 id="value-title"><code class="value">${value}</code> <small class="muted">in ${pool}</small></h1>
    </div>
    <section aria-labelledby="history-title">
      <h2 id="history-title">
        Holdings
        ${first.data ? html`<small class="muted">${holdings.length}${token ? '+' : ''}, newest first</small>` : nothing}
      </h2>
      ${body}
    </section>
  </article>`;
}

function claimOf(holding: Holding) {
  const claim = holding.claim;
  if (!claim) return html`<span class="muted">no claim</span>`;
  const name = `${claim.namespace}/${claim.name}`;
  // A claim whose holding lasts is there to open; an ended holding's claim may be gone, or its name
  // taken by another claim since.
  return holding.until
    ? html`<span title=${`uid ${claim.uid}`}>${name}</span>`
    : html`<a href=${href({ page: 'claim', ns: claim.namespace, name: claim.name })}>${name}</a>`;
}

function timeline(value: string, holdings: Holding[]) {
  const now = Date.now();
  const start = Math.min(...holdings.map((h) => Date.parse(h.from)));
  const end = holdings.some((h) => !h.until) ? now : Math.max(...holdings.map((h) => Date.parse(h.until!)));
  const width = Math.max(end - start, 1);
  const place = (holding: Holding) => {
    const from = Date.parse(holding.from);
    const until = holding.until ? Date.parse(holding.until) : now;
    const left = ((from - start) / width) * 100;
    return `left:${left.toFixed(2)}%;width:${Math.max(((until - from) / width) * 100, 0.5).toFixed(2)}%`;
  };
  return html`<ol class="timeline" aria-label=${`Holdings of ${value}, newest first`}>
      ${holdings.map(
        (holding) =>
          html`<li class="holding ${holding.until ? 'ended' : 'current'} ${holding.claim ? '' : 'unclaimed'}">
            <div class="holding-head">
              <h3>${claimOf(holding)}</h3>
              ${
                holding.until
                  ? html`<span class="badge" title=${ENDINGS[holding.ended!] ?? ''}
                      >${holding.ended ?? 'Ended'}</span
                    >`
                  : html`<span class="badge ok">Held now</span>`
              }
            </div>
            <p class="holding-when">
              ${instant(holding.from)} →
              ${holding.until ? instant(holding.until) : html`<strong>now</strong>`}
              <span class="muted"
                >(${holding.until ? '' : 'so far '}${lasted(holding.from, holding.until)})</span
              >
            </p>
            <p class="holding-detail muted">
              ${holding.ended ? html`${ENDINGS[holding.ended] ?? holding.ended} · ` : nothing}
              ${holding.owner ? html`Owner ${holding.owner.kind} <strong>${holding.owner.name}</strong> · ` : nothing}
              Object <code>${holding.allocation.name}</code>
            </p>
            <div class="span-track" aria-hidden="true">
              <span class="span-fill" style=${place(holding)}></span>
            </div>
          </li>`,
      )}
    </ol>
    <div class="span-ends muted" aria-hidden="true">
      <span>${localTime(start)}</span><span>${holdings.some((h) => !h.until) ? 'now' : localTime(end)}</span>
    </div>`;
}
