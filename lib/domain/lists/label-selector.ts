/**
 * Kubernetes' label selector grammar, as apimachinery parses it (pkg/labels/selector.go: its lexer, its
 * recursive descent, the checks of `NewRequirement` and the error texts, so a client sees what a
 * Kubernetes API server would say), and its matching. Pure.
 *
 *   <selector>    ::= <requirement> | <requirement> "," <selector>
 *   <requirement> ::= [!] KEY [ ("in" | "notin") "(" <values> ")" | ("=" | "==" | "!=" | ">" | "<") VALUE ]
 *
 * KEY is a qualified name (`[DNS subdomain "/"] name`, the name up to 63 characters); VALUE is empty or a
 * label value (up to 63 characters). `key` alone selects objects that have the label, `!key` those that
 * do not; `!=` and `notin` also select objects without the label; `>` and `<` compare integers.
 */

export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'gt' | 'lt' | 'exists' | '!';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted and without repeats, as apimachinery keeps them. */
  readonly values: readonly string[];
}

export type LabelSelector = readonly LabelRequirement[];

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

// ---------------------------------------------------------------- the lexer

type Token =
  'error' | 'end' | ')' | ',' | '!' | '==' | '=' | '>' | 'identifier' | 'in' | '<' | '!=' | 'notin' | '(';

const LITERALS: Readonly<Record<string, Token>> = {
  ')': ')',
  ',': ',',
  '!': '!',
  '==': '==',
  '=': '=',
  '>': '>',
  in: 'in',
  '<': '<',
  '!=': '!=',
  notin: 'notin',
  '(': '(',
};

interface Scanned {
  token: Token;
  literal: string;
}

const isWhitespace = (ch: string) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecial = (ch: string) => ch !== '' && '=!(),><'.includes(ch);

/** Splits a selector into tokens, as apimachinery's lexer does. */
function scan(text: string): Scanned[] {
  let pos = 0;
  // As apimachinery's byte reader: '' at the end (without moving), and for a NUL (moving past it).
  const read = (): string => {
    if (pos >= text.length) return '';
    const ch = text[pos++]!;
    return ch === '\0' ? '' : ch;
  };
  const unread = () => {
    pos--;
  };
  const items: Scanned[] = [];
  for (;;) {
    let ch = read();
    while (ch !== '' && isWhitespace(ch)) ch = read();
    let item: Scanned;
    if (ch === '') item = { token: 'end', literal: '' };
    else if (isSpecial(ch)) {
      unread();
      let buffer = '';
      let last: Scanned | undefined;
      for (;;) {
        const next = read();
        if (next === '') break;
        if (!isSpecial(next)) {
          unread();
          break;
        }
        buffer += next;
        const token = LITERALS[buffer];
        if (token) last = { token, literal: buffer };
        else if (last) {
          unread();
          break;
        }
      }
      item = last ?? { token: 'error', literal: `error expected: keyword found '${buffer}'` };
    } else {
      unread();
      let buffer = '';
      for (;;) {
        const next = read();
        if (next === '') break;
        if (isSpecial(next) || isWhitespace(next)) {
          unread();
          break;
        }
        buffer += next;
      }
      const keyword = buffer === 'in' || buffer === 'notin' ? LITERALS[buffer]! : undefined;
      item = { token: keyword ?? 'identifier', literal: buffer };
    }
    items.push(item);
    if (item.token === 'end') return items;
  }
}

// ---------------------------------------------------------------- validation (apimachinery's texts)

const NAME_PATTERN = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const NAME = new RegExp(`^${NAME_PATTERN}$`);
const NAME_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" +
  NAME_PATTERN +
  "')";
const SUBDOMAIN_PATTERN = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const SUBDOMAIN = new RegExp(`^${SUBDOMAIN_PATTERN}$`);
const VALUE_PATTERN = `(${NAME_PATTERN})?`;
const VALUE = new RegExp(`^${VALUE_PATTERN}$`);

/** apimachinery's IsQualifiedName: the problems of a label key. */
export function labelKeyProblems(key: string): string[] {
  const problems: string[] = [];
  const parts = key.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) problems.push('prefix part must be non-empty');
    else {
      if (prefix.length > 253) problems.push('prefix part must be no more than 253 characters');
      if (!SUBDOMAIN.test(prefix))
        problems.push(
          "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '" +
            SUBDOMAIN_PATTERN +
            "')",
        );
    }
  } else {
    return [
      `a qualified name ${NAME_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  if (!NAME.test(name)) problems.push(`name part ${NAME_MESSAGE}`);
  return problems;
}

/** apimachinery's IsValidLabelValue. */
export function labelValueProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > 63) problems.push('must be no more than 63 characters');
  if (!VALUE.test(value))
    problems.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '" +
        VALUE_PATTERN +
        "')",
    );
  return problems;
}

/** A field.Invalid error as apimachinery prints it (`<path>: Invalid value: "<value>": <detail>`). */
const invalid = (path: string, value: string, detail: string) =>
  `${path}: Invalid value: ${JSON.stringify(value)}: ${detail}`;

/** An aggregate of errors, as apimachinery prints one: the error alone, or `[a, b]`. */
const aggregate = (errors: string[]) => (errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`);

class SelectorError extends Error {}

const INT64 = /^[+-]?[0-9]+$/;
const int64 = (text: string): bigint | undefined => {
  if (!INT64.test(text)) return undefined;
  const value = BigInt(text);
  return value >= -(2n ** 63n) && value < 2n ** 63n ? value : undefined;
};

function requirement(key: string, operator: LabelOperator, values: string[]): LabelRequirement {
  const errors: string[] = [];
  if (operator === 'gt' || operator === 'lt')
    values.forEach((value, i) => {
      if (int64(value) === undefined)
        errors.push(invalid(`values[${i}]`, value, "for 'Gt', 'Lt' operators, the value must be an integer"));
    });
  values.forEach((value, i) => {
    const problems = labelValueProblems(value);
    if (problems.length) errors.push(invalid(`values[${i}][${key}]`, value, problems.join('; ')));
  });
  if (errors.length) throw new SelectorError(aggregate(errors));
  return { key, operator, values };
}

// ---------------------------------------------------------------- the parser

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

const OPERATORS: Partial<Record<Token, LabelOperator>> = {
  in: 'in',
  '=': '=',
  '==': '==',
  '>': 'gt',
  '<': 'lt',
  notin: 'notin',
  '!=': '!=',
};

const fail = (message: string): never => {
  throw new SelectorError(message);
};

/**
 * The scanned tokens and the parser's place in them. As in apimachinery, `in` and `notin` read as
 * identifiers (values) unless the parser asks for an operator (`values` false).
 */
class Tokens {
  private position = 0;

  constructor(private readonly items: readonly Scanned[]) {}

  lookahead(values = true): Scanned {
    const item = this.items[this.position]!;
    return values && (item.token === 'in' || item.token === 'notin')
      ? { ...item, token: 'identifier' }
      : item;
  }

  consume(values = true): Scanned {
    const item = this.lookahead(values);
    this.position++;
    return item;
  }
}

/** The key, with `!` before it or nothing after it read as the operator (`!` or `exists`). */
function keyAndOperator(tokens: Tokens): { key: string; operator?: LabelOperator } {
  let operator: LabelOperator | undefined;
  let item = tokens.consume();
  if (item.token === '!') {
    operator = '!';
    item = tokens.consume();
  }
  if (item.token !== 'identifier') fail(`found '${item.literal}', expected: identifier`);
  const problems = labelKeyProblems(item.literal);
  if (problems.length) fail(invalid('<nil>', item.literal, problems.join('; ')));
  const next = tokens.lookahead().token;
  if ((next === 'end' || next === ',') && operator !== '!') operator = 'exists';
  return { key: item.literal, operator };
}

function binaryOperator(tokens: Tokens): LabelOperator {
  const item = tokens.consume(false);
  return OPERATORS[item.token] ?? fail(`found '${item.literal}', expected: ${BINARY_OPERATORS}`);
}

/** The values inside `( … )`; empty ones between commas count, as apimachinery counts them. */
function identifiers(tokens: Tokens): Set<string> {
  const values = new Set<string>();
  for (;;) {
    const item = tokens.consume();
    if (item.token === 'identifier') {
      values.add(item.literal);
      const next = tokens.lookahead();
      if (next.token === ',') continue;
      if (next.token === ')') return values;
      fail(`found '${next.literal}', expected: ',' or ')'`);
    } else if (item.token === ',') {
      if (values.size === 0) values.add('');
      const next = tokens.lookahead().token;
      if (next === ')') {
        values.add('');
        return values;
      }
      if (next === ',') {
        tokens.consume();
        values.add('');
      }
    } else fail(`found '${item.literal}', expected: ',', or identifier`);
  }
}

/** The values of `in` and `notin`: `( … )`, where `()` is the one empty value. */
function setValues(tokens: Tokens): Set<string> {
  const open = tokens.consume();
  if (open.token !== '(') fail(`found '${open.literal}' expected: '('`);
  const first = tokens.lookahead();
  if (first.token === 'identifier' || first.token === ',') {
    const values = identifiers(tokens);
    if (tokens.consume().token !== ')') fail(`found '${first.literal}', expected: ')'`);
    return values;
  }
  if (first.token === ')') {
    tokens.consume();
    return new Set(['']);
  }
  return fail(`found '${first.literal}', expected: ',', ')' or identifier`);
}

/** The value after `=`, `==`, `!=`, `>` or `<`; none (at the end or a comma) is the empty value. */
function exactValue(tokens: Tokens): Set<string> {
  const next = tokens.lookahead().token;
  if (next === 'end' || next === ',') return new Set(['']);
  const item = tokens.consume();
  if (item.token === 'identifier') return new Set([item.literal]);
  return fail(`found '${item.literal}', expected: identifier`);
}

function parseRequirement(tokens: Tokens): LabelRequirement {
  const { key, operator: inferred } = keyAndOperator(tokens);
  if (inferred === 'exists' || inferred === '!') return requirement(key, inferred, []);
  const operator = binaryOperator(tokens);
  const values = operator === 'in' || operator === 'notin' ? setValues(tokens) : exactValue(tokens);
  return requirement(key, operator, [...values].sort());
}

/** The requirements, separated by commas, up to the end; a requirement's error names it as such. */
function parseRequirements(tokens: Tokens): LabelRequirement[] {
  const selector: LabelRequirement[] = [];
  for (;;) {
    const item = tokens.lookahead();
    if (item.token === 'end') return selector;
    if (item.token !== 'identifier' && item.token !== '!')
      fail(`found '${item.literal}', expected: !, identifier, or 'end of string'`);
    try {
      selector.push(parseRequirement(tokens));
    } catch (error) {
      if (error instanceof SelectorError)
        throw new SelectorError(`unable to parse requirement: ${error.message}`);
      throw error;
    }
    const after = tokens.consume();
    if (after.token === 'end') return selector;
    if (after.token !== ',') fail(`found '${after.literal}', expected: ',' or 'end of string'`);
    const next = tokens.lookahead();
    if (next.token !== 'identifier' && next.token !== '!')
      fail(`found '${next.literal}', expected: identifier after ','`);
  }
}

/** Parses a label selector; an empty one (or only blanks) selects everything. */
export function parseLabelSelector(text: string): Parsed<LabelSelector> {
  try {
    const selector = parseRequirements(new Tokens(scan(text)));
    // apimachinery sorts by key, so that equal selectors print alike.
    return { ok: true, value: selector.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)) };
  } catch (error) {
    if (error instanceof SelectorError) return { ok: false, problem: error.message };
    throw error;
  }
}

// ---------------------------------------------------------------- matching

/** Whether labels satisfy every requirement (apimachinery's Requirement.Matches). */
export function labelsMatch(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  return selector.every((req) => {
    const has = Object.prototype.hasOwnProperty.call(labels, req.key);
    const value = has ? labels[req.key]! : undefined;
    switch (req.operator) {
      case 'in':
      case '=':
      case '==':
        return has && req.values.includes(value!);
      case 'notin':
      case '!=':
        return !has || !req.values.includes(value!);
      case 'exists':
        return has;
      case '!':
        return !has;
      case 'gt':
      case 'lt': {
        const actual = has ? int64(value!) : undefined;
        const wanted = int64(req.values[0] ?? '');
        if (actual === undefined || wanted === undefined) return false;
        return req.operator === 'gt' ? actual > wanted : actual < wanted;
      }
    }
  });
}

/** A selector as apimachinery prints it (`a in (x,y),!b,c=d`). */
export function formatLabelSelector(selector: LabelSelector): string {
  return selector
    .map((req) => {
      switch (req.operator) {
        case 'exists':
          return req.key;
        case '!':
          return `!${req.key}`;
        case 'in':
        case 'notin':
          return `${req.key} ${req.operator} (${req.values.join(',')})`;
        case 'gt':
          return `${req.key}>${req.values[0]}`;
        case 'lt':
          return `${req.key}<${req.values[0]}`;
        default:
          return `${req.key}${req.operator}${req.values[0]}`;
      }
    })
    .join(',');
}
