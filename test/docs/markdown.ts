/**
 * The repository's Markdown pages, and the links in them: what the docs tests read (test/docs/, and the
 * CLI and kubectl replays). A link resolves when it is a public http(s) URL, or a path inside the
 * repository to a file that exists, with its `#anchor` one of that page's headings as GitHub names them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const SKIPPED_FOLDERS = new Set(['node_modules', 'cdk.out', 'coverage']);

/** Every .md file of the repository (paths relative to its root), README.md first. */
export function markdownFiles(root = ROOT): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = folder ? `${folder}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!entry.name.startsWith('.') && !SKIPPED_FOLDERS.has(entry.name)) walk(path);
      } else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('');
  return found.sort((a, b) => (a === 'README.md' ? -1 : b === 'README.md' ? 1 : a.localeCompare(b)));
}

/** A page's text without its fenced code blocks and inline code, where brackets are not links. */
function prose(text: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      lines.push('');
      continue;
    }
    lines.push(fenced ? '' : line.replace(/`[^`]*`/g, '``'));
  }
  return lines;
}

/** The anchors GitHub gives a page's headings: lowercased, punctuation dropped, spaces to `-`, repeats numbered. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

export interface Link {
  line: number;
  target: string;
}

export function linksOf(text: string): Link[] {
  const links: Link[] = [];
  prose(text).forEach((line, index) => {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+["'][^)]*["'])?\s*\)/g))
      links.push({ line: index + 1, target: match[1]! });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (definition) links.push({ line: index + 1, target: definition[1]! });
  });
  return links;
}

const LOCAL_HOSTS = /^(localhost|127\.\d+\.\d+\.\d+|0\.0\.0\.0|\[::1\]|.*\.local)$/i;

/** Why `link` in the page `file` does not resolve, or undefined when it does. */
export function whyBroken(file: string, link: string, root = ROOT): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link)) {
    if (link.startsWith('mailto:')) return undefined;
    if (!/^https?:\/\//i.test(link)) return 'neither a public http(s) URL nor a path';
    try {
      const url = new URL(link);
      return LOCAL_HOSTS.test(url.hostname) ? `${url.hostname} is not public` : undefined;
    } catch {
      return 'not a valid URL';
    }
  }
  const [path, anchor] = link.split('#', 2) as [string, string | undefined];
  const target = path === '' ? join(root, file) : resolve(root, dirname(file), decodeURI(path));
  const inside = relative(root, target);
  if (inside.startsWith('..') || resolve(root, inside) !== target) return 'outside the repository';
  if (!existsSync(target)) return `${inside} does not exist`;
  if (anchor === undefined) return undefined;
  if (statSync(target).isDirectory() || !target.endsWith('.md'))
    return `#${anchor} on a page that is not Markdown`;
  return headingAnchors(readFileSync(target, 'utf8')).has(anchor.toLowerCase())
    ? undefined
    : `${inside} has no heading #${anchor}`;
}
