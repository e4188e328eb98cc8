#!/usr/bin/env -S node --import tsx
/**
 * `allot`, the CLI (lib/cli/): `npx allot --help`. Runs from the TypeScript source through tsx, so it
 * needs no build step after `npm ci`.
 */
import { text } from 'node:stream/consumers';
import { run } from '../lib/cli/main.ts';

// Node 20 is what this machine has; the pinned SDK supports it, so its upgrade notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

process.exitCode = await run(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  readStdin: () => text(process.stdin),
  env: process.env,
  progress: process.stderr.isTTY,
});
