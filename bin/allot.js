#!/usr/bin/env node
/**
 * `allot`, the package's `bin`. Installed from the package, it runs dist/cli/allot.js: the CLI that
 * `npm pack` bundled (bin/pack.ts), plain JavaScript with nothing to resolve. A clone builds nothing,
 * so there it runs the TypeScript source (bin/allot.ts) through tsx, a devDependency: `npx allot` in a
 * clone runs what the clone holds, never a stale build.
 */
import { existsSync } from 'node:fs';

const packed = new URL('../dist/cli/allot.js', import.meta.url);
if (existsSync(packed)) {
  await import(packed.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./allot.ts');
}
