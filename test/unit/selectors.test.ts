/**
 * Label and field selectors parse and match as apimachinery's do: the cases of its own tests
 * (pkg/labels/selector_test.go, pkg/fields/selector_test.go) and its error texts.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  formatLabelSelector,
  labelsMatch,
  parseLabelSelector,
  type LabelSelector,
} from '../../lib/domain/lists/label-selector.ts';
import { parseFieldSelector, selectionOf, selects } from '../../lib/domain/lists/selection.ts';

const parsed = (text: string): LabelSelector => {
  const result = parseLabelSelector(text);
  if (!result.ok) throw new Error(`${text}: ${result.problem}`);
  return result.value;
};
const problem = (text: string): string => {
  const result = parseLabelSelector(text);
  if (result.ok) throw new Error(`${text} parsed`);
  return result.problem;
};

describe('label selectors', () => {
  it('parses what apimachinery parses, and prints it back as apimachinery does', () => {
    for (const text of [
      'x=a,y=b,z=c',
      '',
      'x!=a,y=b',
      'x=',
      'x= ',
      'x=,z= ',
      'x= ,z= ',
      '!x',
      'x>1',
      'x>1,z<5',
    ])
      expect(formatLabelSelector(parsed(text)), text).toBe(text.replace(/ /g, ''));
    for (const text of [
      'x in (a,b,c)',
      'x in (a,b),y in (c,d)',
      'x notin (a,b,c)',
      'x in (a,b),y notin (a,b)',
    ])
      expect(formatLabelSelector(parsed(text)), text).toBe(text);
    expect(formatLabelSelector(parsed('x in (foo,,baz),y,z notin ()'))).toBe('x in (,baz,foo),y,z notin ()');
    expect(formatLabelSelector(parsed('x=a,a=x'))).toBe(formatLabelSelector(parsed('a=x,x=a')));
    expect(parsed('in in (in, notin)')).toEqual([{ key: 'in', operator: 'in', values: ['in', 'notin'] }]);
    expect(parsed('example.com/team==fabric')).toEqual([
      { key: 'example.com/team', operator: '==', values: ['fabric'] },
    ]);
  });

  it('refuses what apimachinery refuses, with its words', () => {
    expect(problem('x=a||y=b')).toMatch(
      /^unable to parse requirement: values\[0\]\[x\]: Invalid value: "a\|\|y": a valid label must be an empty string/,
    );
    expect(problem('x==a==b')).toBe("found '==', expected: ',' or 'end of string'");
    expect(problem('!x=a')).toBe("found '=', expected: ',' or 'end of string'");
    expect(problem('x<a')).toBe(
      `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`,
    );
    expect(problem('x in a')).toBe("unable to parse requirement: found 'a' expected: '('");
    expect(problem('x in (a')).toBe("unable to parse requirement: found '', expected: ',' or ')'");
    expect(problem('x=(a,b)')).toBe("unable to parse requirement: found '(', expected: identifier");
    expect(problem('x,')).toBe("found '', expected: identifier after ','");
    expect(problem(',x')).toBe("found ',', expected: !, identifier, or 'end of string'");
    expect(problem('x y')).toBe(
      "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt",
    );
    expect(problem('bad key=1')).toBe(
      "unable to parse requirement: found 'key', expected: in, notin, =, ==, !=, gt, lt",
    );
    expect(problem('-team=a')).toMatch(
      /^unable to parse requirement: <nil>: Invalid value: "-team": name part must consist of alphanumeric characters/,
    );
    expect(problem('a/b/c')).toMatch(
      /a qualified name must consist of .* with an optional DNS subdomain prefix/,
    );
    expect(problem('Example.com/x')).toMatch(/prefix part a lowercase RFC 1123 subdomain/);
    expect(problem(`x=${'v'.repeat(64)}`)).toMatch(/: must be no more than 63 characters$/);
  });

  it('matches as apimachinery matches: != and notin select objects without the label', () => {
    const labels = { team: 'fabric', tier: '3' };
    const cases: [string, boolean][] = [
      ['team=fabric', true],
      ['team==fabric', true],
      ['team!=fabric', false],
      ['team!=edge', true],
      ['owner!=me', true],
      ['team in (edge,fabric)', true],
      ['team notin (edge,fabric)', false],
      ['owner notin (x)', true],
      ['owner in (x)', false],
      ['team', true],
      ['!team', false],
      ['!owner', true],
      ['tier>2', true],
      ['tier<3', false],
      ['team>2', false],
      ['team=fabric,tier=4', false],
      ['', true],
    ];
    for (const [text, match] of cases) expect(labelsMatch(parsed(text), labels), text).toBe(match);
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'ab=!(),<> in\t\\/.-_0\u0000é'.split('')) }),
        (text) => {
          const result = parseLabelSelector(text);
          if (result.ok) expect(parseLabelSelector(formatLabelSelector(result.value)).ok).toBe(true);
        },
      ),
    );
  });
});

describe('field selectors', () => {
  it('serves the contract fields per resource, and names them when another is asked', () => {
    expect(parseFieldSelector('status.phase=Waiting,spec.poolRef.name!=p', 'claims')).toEqual({
      ok: true,
      value: [
        { field: 'spec.poolRef.name', operator: '!=', value: 'p' },
        { field: 'status.phase', operator: '=', value: 'Waiting' },
      ],
    });
    expect(parseFieldSelector('spec.poolRef.name=p', 'indices').ok).toBe(true);
    expect(parseFieldSelector('status.phase=Waiting', 'indices')).toEqual({
      ok: false,
      problem:
        'field label not supported: status.phase; the fields served are metadata.name, metadata.namespace, spec.poolRef.name',
    });
    expect(parseFieldSelector('spec.poolRef.name=p', 'indexpools')).toEqual({
      ok: false,
      problem:
        'field label not supported: spec.poolRef.name; the fields served are metadata.name, metadata.namespace',
    });
  });

  it('parses escapes and refuses what apimachinery refuses', () => {
    expect(parseFieldSelector('metadata.name==a\\=\\,b\\\\', 'claims')).toEqual({
      ok: true,
      value: [{ field: 'metadata.name', operator: '=', value: 'a=,b\\' }],
    });
    expect(parseFieldSelector('metadata.name', 'claims')).toEqual({
      ok: false,
      problem: "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    });
    expect(parseFieldSelector('metadata.name=a\\b', 'claims')).toEqual({
      ok: false,
      problem: 'invalid field selector: invalid escape sequence: \\b',
    });
    expect(parseFieldSelector('metadata.name==a==b', 'claims')).toEqual({
      ok: false,
      problem: 'invalid field selector: unescaped character in value: 61',
    });
  });

  it('selects records on labels and fields together', () => {
    const claim = {
      metadata: { name: 'c1', namespace: 'ns', labels: { team: 'fabric' } },
      spec: { poolRef: { name: 'p' } },
      phase: 'Waiting',
    };
    const selection = (labelSelector: string, fieldSelector: string) => {
      const result = selectionOf('claims', { labelSelector, fieldSelector });
      if (!result.ok) throw new Error(result.problem);
      return result.value;
    };
    expect(selects(selection('team=fabric', 'status.phase=Waiting'), claim)).toBe(true);
    expect(selects(selection('team=fabric', 'status.phase=Allocated'), claim)).toBe(false);
    expect(selects(selection('', 'metadata.namespace=ns,metadata.name!=c2'), claim)).toBe(true);
    expect(selects(selection('!team', ''), claim)).toBe(false);
  });
});
