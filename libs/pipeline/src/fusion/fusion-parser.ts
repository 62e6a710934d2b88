/**
 * Parser for the fusion expression of a bundle: arithmetic over model outputs named
 * `<model>.<output>`, numbers, + - * /, unary minus, parentheses and a fixed set of functions.
 * It never evaluates code; the AST is compiled into closures by fusion-compiler.ts.
 */
export type FusionNode =
  | { kind: 'num'; value: number }
  | { kind: 'var'; name: string }
  | { kind: 'neg'; arg: FusionNode }
  | { kind: 'bin'; op: '+' | '-' | '*' | '/'; left: FusionNode; right: FusionNode }
  | { kind: 'call'; fn: FusionFunction; args: FusionNode[] };

/** Function name to [min args, max args]. */
export const FUSION_FUNCTIONS = {
  pow: [2, 2],
  exp: [1, 1],
  log: [1, 1],
  sqrt: [1, 1],
  abs: [1, 1],
  sigmoid: [1, 1],
  min: [2, 16],
  max: [2, 16],
  clamp: [3, 3],
} as const;
export type FusionFunction = keyof typeof FUSION_FUNCTIONS;

export interface ParsedFusion {
  ast: FusionNode;
  /** Distinct `<model>.<output>` names in order of first use. */
  variables: string[];
}

/** Longer expressions are refused: every row of every request walks the whole expression. */
export const MAX_FUSION_LENGTH = 10_000;
/** Deeper nesting is refused before it can exhaust the parser's (or an evaluation's) stack. */
export const MAX_FUSION_DEPTH = 64;

const TOKEN =
  /(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)|([-+*/(),])/y;

export function parseFusion(text: string): ParsedFusion {
  if (text.length > MAX_FUSION_LENGTH) {
    throw new Error(
      `expression is ${text.length} characters long, more than the ${MAX_FUSION_LENGTH} allowed`,
    );
  }
  const tokens = tokenize(text);
  const variables: string[] = [];
  let pos = 0;
  let depth = 0;
  const nested = <T>(at: number, parse: () => T): T => {
    if (++depth > MAX_FUSION_DEPTH)
      throw syntax(text, at, `nested deeper than ${MAX_FUSION_DEPTH} levels`);
    const node = parse();
    depth--;
    return node;
  };

  const peek = () => tokens[pos]?.text;
  const expect = (t: string) => {
    if (peek() !== t) throw syntax(text, tokens[pos]?.at ?? text.length, `expected '${t}'`);
    pos++;
  };

  const additive = (): FusionNode => {
    let node = multiplicative();
    while (peek() === '+' || peek() === '-') {
      const op = tokens[pos++].text as '+' | '-';
      node = { kind: 'bin', op, left: node, right: multiplicative() };
    }
    return node;
  };
  const multiplicative = (): FusionNode => {
    let node = unary();
    while (peek() === '*' || peek() === '/') {
      const op = tokens[pos++].text as '*' | '/';
      node = { kind: 'bin', op, left: node, right: unary() };
    }
    return node;
  };
  const unary = (): FusionNode => {
    if (peek() === '-') {
      const at = tokens[pos++].at;
      return { kind: 'neg', arg: nested(at, unary) };
    }
    if (peek() === '+') pos++;
    return primary();
  };
  const primary = (): FusionNode => {
    const token = tokens[pos];
    if (!token) throw syntax(text, text.length, 'unexpected end of expression');
    pos++;
    if (token.kind === 'num') return { kind: 'num', value: Number(token.text) };
    if (token.text === '(') {
      const inner = nested(token.at, additive);
      expect(')');
      return inner;
    }
    if (token.kind !== 'name') throw syntax(text, token.at, `unexpected '${token.text}'`);
    if (peek() === '(') return nested(token.at, () => call(token.text, token.at));
    if (!token.text.includes('.')) {
      throw syntax(text, token.at, `'${token.text}' must be <model>.<output> or a function call`);
    }
    if (!variables.includes(token.text)) variables.push(token.text);
    return { kind: 'var', name: token.text };
  };
  const call = (name: string, at: number): FusionNode => {
    // Own keys only: `constructor`, `toString` or `__proto__` are not functions of the language.
    if (!Object.hasOwn(FUSION_FUNCTIONS, name)) {
      throw syntax(
        text,
        at,
        `unknown function '${name}' (known: ${Object.keys(FUSION_FUNCTIONS).join(', ')})`,
      );
    }
    const fn = name as FusionFunction;
    expect('(');
    const args: FusionNode[] = [additive()];
    while (peek() === ',') {
      pos++;
      args.push(additive());
    }
    expect(')');
    const [min, max] = FUSION_FUNCTIONS[fn];
    if (args.length < min || args.length > max) {
      throw syntax(
        text,
        at,
        `${fn}() takes ${min === max ? min : `${min}-${max}`} argument(s), got ${args.length}`,
      );
    }
    return { kind: 'call', fn, args };
  };

  const ast = additive();
  if (pos < tokens.length) throw syntax(text, tokens[pos].at, `unexpected '${tokens[pos].text}'`);
  return { ast, variables };
}

interface Token {
  kind: 'num' | 'name' | 'punct';
  text: string;
  at: number;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  for (;;) {
    while (at < text.length && /\s/.test(text[at])) at++;
    if (at >= text.length) return tokens;
    TOKEN.lastIndex = at;
    const m = TOKEN.exec(text);
    if (!m) throw syntax(text, at, `unexpected character '${text[at]}'`);
    tokens.push({
      kind: m[1] !== undefined ? 'num' : m[2] !== undefined ? 'name' : 'punct',
      text: m[0],
      at,
    });
    at = TOKEN.lastIndex;
  }
}

function syntax(text: string, at: number, message: string): Error {
  return new Error(`${message} at column ${at + 1} of '${text}'`);
}
