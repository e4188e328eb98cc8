/** The console's places, as hash routes, so every page has an address to bookmark and go back to. */

export type Route =
  | { page: 'pools'; ns: string }
  | { page: 'pool'; ns: string; resource: string; name: string; within?: string }
  /** One value of a pool (`name`), and who held it when (GET …/history?value=). */
  | { page: 'value'; ns: string; resource: string; name: string; value: string }
  /** A pool of `poolNs` shared with `ns`, as `ns` sees it (GET …/sharedpools). */
  | { page: 'shared'; ns: string; poolNs: string; resource: string; name: string }
  | { page: 'claims'; ns: string }
  | { page: 'claim'; ns: string; name: string }
  | { page: 'allocations'; ns: string }
  | { page: 'allocation'; ns: string; resource: string; name: string }
  | { page: 'search'; ns: string; q: string }
  | { page: 'new'; ns: string };

export function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?');
  const query = new URLSearchParams(search);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const ns = parts[0] === 'ns' && parts[1] ? parts[1] : 'default';
  const [section, a, b, c, d] = parts.slice(2);
  switch (section) {
    case 'pools':
      if (a && b && c === 'values' && d) return { page: 'value', ns, resource: a, name: b, value: d };
      if (a && b) return { page: 'pool', ns, resource: a, name: b, within: query.get('within') ?? undefined };
      break;
    case 'shared':
      if (a && b && c) return { page: 'shared', ns, poolNs: a, resource: b, name: c };
      break;
    case 'claims':
      return a ? { page: 'claim', ns, name: a } : { page: 'claims', ns };
    case 'allocations':
      if (a && b) return { page: 'allocation', ns, resource: a, name: b };
      return { page: 'allocations', ns };
    case 'search':
      return { page: 'search', ns, q: query.get('q') ?? '' };
    case 'new':
      return { page: 'new', ns };
  }
  return { page: 'pools', ns };
}

const enc = encodeURIComponent;

export function href(route: Route): string {
  const base = `#/ns/${enc(route.ns)}`;
  switch (route.page) {
    case 'pools':
      return base;
    case 'pool':
      return `${base}/pools/${route.resource}/${enc(route.name)}${route.within ? `?within=${enc(route.within)}` : ''}`;
    case 'value':
      return `${base}/pools/${route.resource}/${enc(route.name)}/values/${enc(route.value)}`;
    case 'shared':
      return `${base}/shared/${enc(route.poolNs)}/${route.resource}/${enc(route.name)}`;
    case 'claims':
      return `${base}/claims`;
    case 'claim':
      return `${base}/claims/${enc(route.name)}`;
    case 'allocations':
      return `${base}/allocations`;
    case 'allocation':
      return `${base}/allocations/${route.resource}/${enc(route.name)}`;
    case 'search':
      return `${base}/search?q=${enc(route.q)}`;
    case 'new':
      return `${base}/new`;
  }
}
