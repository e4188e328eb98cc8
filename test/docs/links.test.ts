/**
 * Every link of every Markdown page resolves: inside the repository (the file exists, the anchor is one
 * of its headings) or to a public http(s) URL. A user's clone holds nothing outside the repository.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headingAnchors, linksOf, markdownFiles, whyBroken } from './markdown.ts';

describe('the links of the Markdown pages', () => {
  const files = markdownFiles();

  it('reads the front page, the docs and the folder READMEs', () => {
    expect(files[0]).toBe('README.md');
    expect(files).toEqual(
      expect.arrayContaining(['docs/stream.md', 'docs/pools/indexpool.md', 'lib/README.md']),
    );
  });

  it('keeps the front page to five minutes of reading: at most 250 lines', () => {
    expect(readFileSync('README.md', 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it.each(files)('%s', (file) => {
    const broken = linksOf(readFileSync(file, 'utf8'))
      .map(({ line, target }) => ({ line, target, why: whyBroken(file, target) }))
      .filter(({ why }) => why !== undefined)
      .map(({ line, target, why }) => `${file}:${line}: ${target} (${why})`);
    expect(broken).toEqual([]);
  });
});

describe('the link check itself', () => {
  const root = mkdtempSync(join(tmpdir(), 'allot-links-'));
  mkdirSync(join(root, 'docs'));
  writeFileSync(
    join(root, 'docs/page.md'),
    '# A page\n\n## Two words: `code` here\n\n## Two words: `code` here\n',
  );

  it('names GitHub anchors as GitHub does', () => {
    expect([...headingAnchors(readFileSync(join(root, 'docs/page.md'), 'utf8'))]).toEqual([
      'a-page',
      'two-words-code-here',
      'two-words-code-here-1',
    ]);
  });

  it('finds links in prose, not in code', () => {
    const text = 'see [a](x.md) and ![b](y.png "t")\n\n```\n[c](z.md)\n```\n`[d](w.md)`\n[e]: ref.md\n';
    expect(linksOf(text).map((link) => link.target)).toEqual(['x.md', 'y.png', 'ref.md']);
  });

  it.each([
    ['page.md#two-words-code-here-1', undefined],
    ['page.md#a-page', undefined],
    ['#a-page', undefined],
    ['https://github.com/ironcore-dev/network-operator', undefined],
    ['page.md#nowhere', 'docs/page.md has no heading #nowhere'],
    ['missing.md', 'docs/missing.md does not exist'],
    ['../../shared/seeds/', 'outside the repository'],
    ['http://127.0.0.1:8080/', '127.0.0.1 is not public'],
    ['ftp://example.com/x', 'neither a public http(s) URL nor a path'],
  ])('%s', (link, why) => {
    expect(whyBroken('docs/page.md', link, root)).toBe(why);
  });
});
