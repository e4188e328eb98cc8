/**
 * Serves the console: the page and its one script. From a clone they are built from app/ with esbuild's
 * API the first time they are asked for and kept in memory, so `npm start` and `allot ui` need no build
 * step. The package's CLI reads them as `npm pack` built them (bin/pack.ts, `dist/console/`), so it needs
 * neither esbuild nor the console's sources.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export const CONSOLE_SCRIPT_PATH = '/console.js';

export interface ConsoleAssets {
  html: string;
  script: string;
  /** Page and script gzipped, as a browser receives them compressed (the budget is 150 KB). */
  gzippedBytes: number;
  /** The files the script was bundled from, relative to the working folder (for the package's notices). */
  inputs?: string[];
}

const appDir = fileURLToPath(new URL('./app/', import.meta.url));
/** Inlined into the page, in this order. */
const STYLESHEETS = ['style.css', 'map.css', 'history.css'];

/**
 * Set by bin/pack.ts (an esbuild `define`) in the packed CLI: the folder of the built page and script,
 * relative to the CLI's module. Undefined when this module runs from its TypeScript source.
 */
declare const ALLOT_PACKED_CONSOLE: string | undefined;

/** The page and script files the package holds (bin/pack.ts writes them with `consoleAssets`). */
export const PACKED_CONSOLE_FILES = { html: 'index.html', script: 'console.js' } as const;

async function readPackedAssets(folder: URL): Promise<ConsoleAssets> {
  const [html, script] = await Promise.all(
    [PACKED_CONSOLE_FILES.html, PACKED_CONSOLE_FILES.script].map((file) =>
      readFile(new URL(file, folder), 'utf8'),
    ),
  );
  return { html: html!, script: script!, gzippedBytes: gzipSync(html!).length + gzipSync(script!).length };
}

async function buildAssets(): Promise<ConsoleAssets> {
  if (typeof ALLOT_PACKED_CONSOLE === 'string')
    return readPackedAssets(new URL(ALLOT_PACKED_CONSOLE, import.meta.url));
  // Imported here, not above: the packed CLI never gets this far, and has no esbuild.
  const { build } = await import('esbuild');
  const [result, ...css] = await Promise.all([
    build({
      entryPoints: [`${appDir}main.ts`],
      bundle: true,
      minify: true,
      format: 'esm',
      target: 'es2022',
      platform: 'browser',
      write: false,
      legalComments: 'none',
      metafile: true,
      loader: { '.yaml': 'text' },
      logLevel: 'silent',
    }),
    ...STYLESHEETS.map((name) => readFile(`${appDir}${name}`, 'utf8')),
  ]);
  const script = result.outputFiles[0]!.text;
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Allot</title>
<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%231f6feb'/%3E%3Crect x='3' y='3' width='5' height='10' fill='%23fff'/%3E%3C/svg%3E">
<style>${css.join('\n')}</style>
<script type="module" src="${CONSOLE_SCRIPT_PATH}"></script>
</head>
<body>
<div id="app"><noscript>The Allot console needs JavaScript; the API is at /v1/openapi.json.</noscript></div>
</body>
</html>
`;
  return {
    html,
    script,
    gzippedBytes: gzipSync(html).length + gzipSync(script).length,
    inputs: Object.keys(result.metafile.inputs),
  };
}

let assets: Promise<ConsoleAssets> | undefined;

/** The console's page and script, built once per process. */
export function consoleAssets(): Promise<ConsoleAssets> {
  assets ??= buildAssets().catch((error: unknown) => {
    assets = undefined; // a failed build is tried again on the next request
    throw error;
  });
  return assets;
}

/**
 * Answers the console's own requests (`GET /`, `/index.html`, the script); false for anything else,
 * which the caller serves (the API).
 */
export function serveConsole(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  const which =
    path === '/' || path === '/index.html' ? 'html' : path === CONSOLE_SCRIPT_PATH ? 'script' : undefined;
  if (!which) return false;
  consoleAssets().then(
    (built) => {
      response.writeHead(200, {
        'content-type': which === 'html' ? 'text/html; charset=utf-8' : 'text/javascript; charset=utf-8',
        'cache-control': 'no-cache',
        // The page loads nothing from elsewhere; say so, so a browser enforces it.
        'content-security-policy':
          "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'",
        'x-content-type-options': 'nosniff',
      });
      response.end(request.method === 'HEAD' ? undefined : built[which]);
    },
    (error: unknown) => {
      response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`the console could not be built: ${(error as Error).message}`);
    },
  );
  return true;
}
