/**
 * The console's entry: the page frame (namespace, navigation, search), the router, and the poll that
 * keeps every page current (a claim made from the CLI shows within a poll).
 */
import { html, render } from 'lit-html';
import { onChange, refresh, scheduleDraw } from './data.ts';
import { href, parseRoute, type Route } from './router.ts';
import { newPoolPage } from './views/create.ts';
import { mapTitle } from './views/map.ts';
import { allocationPage, allocationsPage, claimPage, claimsPage } from './views/objects.ts';
import { poolPage } from './views/pool.ts';
import { poolsPage } from './views/pools.ts';
import { searchPage } from './views/search.ts';
import { sharedPoolPage } from './views/shared.ts';
import { valuePage } from './views/value.ts';

/** How often the page asks again (ms): a CLI claim shows within about this. */
const POLL_MS = 2000;
const NAMESPACES_KEY = 'allot.namespaces';

let route: Route = parseRoute(location.hash);
let lastPoll = new Date();

function knownNamespaces(): string[] {
  try {
    const stored = JSON.parse(localStorage.getItem(NAMESPACES_KEY) ?? '[]') as unknown;
    return Array.isArray(stored) ? stored.filter((n): n is string => typeof n === 'string') : [];
  } catch {
    return [];
  }
}

function remember(ns: string): void {
  const known = knownNamespaces();
  if (known.includes(ns)) return;
  try {
    localStorage.setItem(NAMESPACES_KEY, JSON.stringify([ns, ...known].slice(0, 20)));
  } catch {
    // private mode: the list is a convenience
  }
}

function page(current: Route) {
  switch (current.page) {
    case 'pools':
      return poolsPage(current.ns);
    case 'pool':
      return poolPage(current.ns, current.resource, current.name, current.within);
    case 'value':
      return valuePage(current.ns, current.resource, current.name, current.value);
    case 'shared':
      return sharedPoolPage(current.ns, current.poolNs, current.resource, current.name);
    case 'claims':
      return claimsPage(current.ns);
    case 'claim':
      return claimPage(current.ns, current.name);
    case 'allocations':
      return allocationsPage(current.ns);
    case 'allocation':
      return allocationPage(current.ns, current.resource, current.name);
    case 'search':
      return searchPage(current.ns, current.q);
    case 'new':
      return newPoolPage(current.ns);
  }
}

function titleOf(current: Route): string {
  switch (current.page) {
    case 'pool':
      return `${current.name}${current.within ? ` ${mapTitle(current.within)}` : ''}`;
    case 'value':
      return `${current.value} in ${current.name}`;
    case 'shared':
      return `${current.poolNs}/${current.name}`;
    case 'claim':
    case 'allocation':
      return current.name;
    case 'search':
      return `Search ${current.q}`;
    case 'new':
      return 'New pool';
    default:
      return current.page[0]!.toUpperCase() + current.page.slice(1);
  }
}

function frame() {
  const ns = route.ns;
  const section =
    route.page === 'pool' || route.page === 'value' || route.page === 'shared' || route.page === 'new'
      ? 'pools'
      : route.page === 'claim'
        ? 'claims'
        : route.page === 'allocation'
          ? 'allocations'
          : route.page;
  const link = (target: Route, label: string, key: string) =>
    html`<a href=${href(target)} aria-current=${section === key ? 'page' : 'false'}>${label}</a>`;
  const switchNamespace = (event: Event) => {
    event.preventDefault();
    const value = String(new FormData(event.target as HTMLFormElement).get('ns') ?? '').trim() || 'default';
    location.hash = href({ page: 'pools', ns: value });
  };
  const search = (event: Event) => {
    event.preventDefault();
    const q = String(new FormData(event.target as HTMLFormElement).get('q') ?? '').trim();
    location.hash = href({ page: 'search', ns, q });
  };
  return html`<a
      class="skip"
      href="#main"
      @click=${(e: Event) => {
        e.preventDefault();
        document.getElementById('main')?.focus();
      }}
      >Skip to content</a
    >
    <header class="top">
      <a class="brand" href=${href({ page: 'pools', ns })} aria-label="Allot console, pools"
        ><span aria-hidden="true">◧</span> Allot</a
      >
      <form class="ns" @submit=${switchNamespace} aria-label="Namespace">
        <label for="ns-input">Namespace</label>
        <input id="ns-input" name="ns" list="ns-list" .value=${ns} autocomplete="off" size="10" />
        <datalist id="ns-list">${knownNamespaces().map((n) => html`<option value=${n}></option>`)}</datalist>
        <button class="button" type="submit">Go</button>
      </form>
      <nav aria-label="Sections" class="sections">
        ${link({ page: 'pools', ns }, 'Pools', 'pools')} ${link({ page: 'claims', ns }, 'Claims', 'claims')}
        ${link({ page: 'allocations', ns }, 'Allocations', 'allocations')}
      </nav>
      <form class="search" role="search" @submit=${search}>
        <label for="search-input" class="visually-hidden">Search by value, name or owner</label>
        <input
          id="search-input"
          name="q"
          type="search"
          placeholder="10.42.1.7, 64512, leaf1-asn…"
          .value=${route.page === 'search' ? route.q : ''}
        />
        <button class="button" type="submit">Search</button>
      </form>
    </header>
    <main id="main" tabindex="-1">${page(route)}</main>
    <footer class="foot">
      <span
        >Refreshes every ${POLL_MS / 1000} s · last
        <time datetime=${lastPoll.toISOString()}>${lastPoll.toLocaleTimeString()}</time></span
      >
      <a href="/v1/openapi.json">OpenAPI</a>
    </footer>`;
}

const root = document.getElementById('app')!;

function draw(): void {
  document.title = `${titleOf(route)} · Allot`;
  render(frame(), root);
}

onChange(draw);
window.addEventListener('hashchange', () => {
  route = parseRoute(location.hash);
  remember(route.ns);
  scheduleDraw();
  document.getElementById('main')?.focus({ preventScroll: true });
  window.scrollTo(0, 0);
});
setInterval(() => {
  if (document.hidden) return;
  lastPoll = new Date();
  void refresh();
}, POLL_MS);
remember(route.ns);
scheduleDraw();
