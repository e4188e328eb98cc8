/**
 * Search: by value ("10.42.1.7", "64512", "2001:db8::/64"), by claim or object name, by owner. A value
 * is looked up by the deterministic name of its allocation object in every pool of its kind (one read
 * each), and in the namespace's lists, which also find objects with names of their own.
 */
import { html, nothing } from 'lit-html';
import { nsPath, POOL_KINDS } from '../api.ts';
import { read, readAll } from '../data.ts';
import { href } from '../router.ts';
import { errorBox } from '../ui.ts';
import { allocationName, readValue } from '../values.ts';
import { allocationsTable, claimsTable } from './objects.ts';
import { readPools } from './pools.ts';

function canonical(text: string): string {
  return text.trim().toLowerCase();
}

export function searchPage(ns: string, q: string) {
  const query = q.trim();
  const heading = html`<h1 id="search-title">Search <small class="muted">in ${ns}</small></h1>`;
  if (!query) {
    return html`<section aria-labelledby="search-title">
      ${heading}
      <p class="muted">
        Type a value (<code>10.42.1.7</code>, <code>64512</code>, <code>2001:db8::/64</code>), a claim or
        object name, or an owner in the search box.
      </p>
    </section>`;
  }
  const { shape, value } = readValue(query);
  // A value is compared in its canonical form (2001:DB8::1 is 2001:db8::1), text as typed, lowercased.
  const needle = value ? value.value : canonical(query);
  const claims = readAll(nsPath(ns, 'claims'));
  const allocationLists = POOL_KINDS.map((info) => ({
    info,
    entry: readAll(nsPath(ns, info.allocationResource)),
  }));
  const { rows: pools } = readPools(ns);

  // A value: the deterministic object in every pool that could hold it.
  const byName = new Map<string, { info: (typeof POOL_KINDS)[number]; object: any }>();
  if (shape !== 'text') {
    for (const { info, pool } of pools) {
      if (info.allocationKind !== shape) continue;
      const name = allocationName(pool.metadata.name, shape, needle);
      const entry = name ? read(nsPath(ns, info.allocationResource, name)) : undefined;
      if (entry?.data)
        byName.set(`${info.allocationResource}/${entry.data.metadata.name}`, { info, object: entry.data });
    }
  }
  for (const { info, entry } of allocationLists) {
    for (const object of entry.data ?? []) {
      const value = canonical(String(object.spec?.[info.valueField] ?? ''));
      const hit =
        value === needle ||
        object.metadata.name.includes(needle) ||
        canonical(object.spec?.owner?.name ?? '').includes(needle) ||
        canonical(object.spec?.claimRef?.name ?? '') === needle;
      if (hit) byName.set(`${info.allocationResource}/${object.metadata.name}`, { info, object });
    }
  }
  const matchingClaims = (claims.data ?? []).filter(
    (claim: any) =>
      claim.metadata.name.includes(needle) ||
      canonical(claim.status?.value ?? '') === needle ||
      canonical(String(claim.spec?.value ?? '')) === needle ||
      canonical(claim.spec?.owner?.name ?? '').includes(needle) ||
      canonical(claim.spec?.owner?.kind ?? '') === needle,
  );
  const matchingPools = pools.filter(({ pool }) => pool.metadata.name.includes(needle));
  const loading =
    claims.data === undefined ||
    allocationLists.some(({ entry }) => entry.data === undefined && !entry.error);
  const total = byName.size + matchingClaims.length + matchingPools.length;
  return html`<section aria-labelledby="search-title">
    ${heading}
    <p role="status">
      ${loading ? 'Searching…' : `${total} ${total === 1 ? 'result' : 'results'} for “${query}”`}
      ${shape !== 'text' ? html`<span class="muted">(read as ${shape === 'Index' ? 'an index' : shape === 'IPAddress' ? 'an IP address' : 'an IP prefix'})</span>` : nothing}
    </p>
    ${claims.error ? errorBox(claims.error) : nothing}
    ${
      matchingPools.length
        ? html`<h2>Pools</h2>
            <ul class="results">
              ${matchingPools.map(
                ({ info, pool }) =>
                  html`<li>
                    <a href=${href({ page: 'pool', ns, resource: info.resource, name: pool.metadata.name })}
                      >${pool.metadata.name}</a
                    >
                    <span class="muted">${info.kind}</span>
                  </li>`,
              )}
            </ul>`
        : nothing
    }
    ${
      byName.size
        ? html`<h2>Allocation objects</h2>
            ${allocationsTable(ns, [...byName.values()], { showPool: true })}`
        : nothing
    }
    ${
      matchingClaims.length
        ? html`<h2>Claims</h2>
            ${claimsTable(ns, matchingClaims, { showPool: true })}`
        : nothing
    }
    ${!loading && total === 0 ? html`<p class="empty">Nothing in <strong>${ns}</strong> holds or is named “${query}”.</p>` : nothing}
  </section>`;
}
