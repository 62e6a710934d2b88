import fc from 'fast-check';
import { compileFusion, FUSION_BLOCK_ROWS } from './fusion-compiler';
import { FusionNode, parseFusion } from './fusion-parser';

/** Evaluates `text` with named Float32Array columns, returning plain numbers. */
function run(text: string, columns: Record<string, number[]>): number[] {
  const fusion = compileFusion(text);
  const cols = fusion.variables.map((name) => Float32Array.from(columns[name]));
  const rows = Object.values(columns)[0]?.length ?? 1;
  return Array.from(fusion.evaluate(cols, rows));
}

/** What each row should be: computed in double from the float32 inputs, stored as float32. */
function expected(columns: Record<string, number[]>, f: (row: Record<string, number>) => number) {
  const rows = Object.values(columns)[0].length;
  return Array.from({ length: rows }, (_, i) => {
    const row = Object.fromEntries(
      Object.entries(columns).map(([name, values]) => [name, Math.fround(values[i])]),
    );
    return Math.fround(f(row));
  });
}

const data = {
  'a.x': [0.5, 2, -1.5, 0, 3.25],
  'b.y': [0.25, 0.1, 4, -2, 1],
};

describe('compileFusion', () => {
  it('exposes the variables in order of first use', () => {
    expect(compileFusion('b.y * a.x + b.y').variables).toEqual(['b.y', 'a.x']);
  });

  it('reads each column by the position of its name in variables', () => {
    const fusion = compileFusion('mtl.cvr - ctr.ctr');
    expect(fusion.variables).toEqual(['mtl.cvr', 'ctr.ctr']);
    const out = fusion.evaluate([Float32Array.of(10, 20), Float32Array.of(1, 2)], 2);
    expect(Array.from(out)).toEqual([9, 18]);
  });

  it('returns a Float32Array with one value per row', () => {
    const out = compileFusion('a.x + 1').evaluate([Float32Array.of(1, 2, 3)], 3);
    expect(out).toBeInstanceOf(Float32Array);
    expect(Array.from(out)).toEqual([2, 3, 4]);
  });

  it('evaluates only the requested number of rows', () => {
    const out = compileFusion('a.x * 2').evaluate([Float32Array.of(1, 2, 3, 4)], 2);
    expect(Array.from(out)).toEqual([2, 4]);
  });

  it('evaluates a constant expression for every row', () => {
    expect(Array.from(compileFusion('1 + 2 * 3').evaluate([], 3))).toEqual([7, 7, 7]);
  });

  it.each<[string, (r: Record<string, number>) => number]>([
    ['a.x + b.y * 2', (r) => r['a.x'] + r['b.y'] * 2],
    ['(a.x + b.y) * 2', (r) => (r['a.x'] + r['b.y']) * 2],
    ['a.x - b.y - 1', (r) => r['a.x'] - r['b.y'] - 1],
    ['a.x / 4 / 2', (r) => r['a.x'] / 4 / 2],
    ['-a.x * b.y', (r) => -r['a.x'] * r['b.y']],
    ['1 - -b.y', (r) => 1 + r['b.y']],
    ['pow(abs(a.x), 0.7)', (r) => Math.pow(Math.abs(r['a.x']), 0.7)],
    ['pow(b.y, 2)', (r) => r['b.y'] ** 2],
    ['exp(a.x)', (r) => Math.exp(r['a.x'])],
    ['log(abs(b.y) + 1e-3)', (r) => Math.log(Math.abs(r['b.y']) + 0.001)],
    ['sqrt(abs(a.x))', (r) => Math.sqrt(Math.abs(r['a.x']))],
    ['abs(a.x)', (r) => Math.abs(r['a.x'])],
    ['sigmoid(a.x)', (r) => 1 / (1 + Math.exp(-r['a.x']))],
    ['min(a.x, b.y)', (r) => Math.min(r['a.x'], r['b.y'])],
    ['max(a.x, b.y)', (r) => Math.max(r['a.x'], r['b.y'])],
    ['min(a.x, b.y, 0, .5)', (r) => Math.min(r['a.x'], r['b.y'], 0, 0.5)],
    ['max(a.x, b.y, 0, .5)', (r) => Math.max(r['a.x'], r['b.y'], 0, 0.5)],
    ['clamp(a.x, -1, 1)', (r) => Math.min(Math.max(r['a.x'], -1), 1)],
    ['clamp(a.x * b.y, b.y, 2)', (r) => Math.min(Math.max(r['a.x'] * r['b.y'], r['b.y']), 2)],
  ])('evaluates %s row by row', (text, f) => {
    expect(run(text, data)).toEqual(expected(data, f));
  });

  it('evaluates the example bundle formula', () => {
    const columns = {
      'ctr.ctr': [0.01, 0.2, 0.5, 0.9],
      'mtl.ctr': [0.02, 0.1, 0.4, 0.95],
      'mtl.cvr': [0.001, 0.05, 0.3, 0],
    };
    const formula = 'pow(ctr.ctr, 0.7) * pow(mtl.ctr, 0.3) * (1 + 2 * mtl.cvr)';
    expect(run(formula, columns)).toEqual(
      expected(columns, (r) => r['ctr.ctr'] ** 0.7 * r['mtl.ctr'] ** 0.3 * (1 + 2 * r['mtl.cvr'])),
    );
  });

  it('follows IEEE semantics for division by zero and log of zero', () => {
    expect(run('a.x / b.y', { 'a.x': [1, -1, 0], 'b.y': [0, 0, 0] })).toEqual([
      Infinity,
      -Infinity,
      NaN,
    ]);
    expect(run('log(a.x)', { 'a.x': [0] })).toEqual([-Infinity]);
  });

  it('maps large inputs of sigmoid to 0 and 1 without overflow errors', () => {
    expect(run('sigmoid(a.x)', { 'a.x': [-1000, 0, 1000] })).toEqual([0, 0.5, 1]);
  });

  it('propagates parse errors', () => {
    expect(() => compileFusion('a.x +')).toThrow('unexpected end of expression at column 6');
  });

  it('gives every row the bits of a row-by-row evaluation, across blocks and at their edges', () => {
    // Random expressions over three columns, as text (so through the parser), against a direct
    // walk of the same AST per row in double, stored as float32.
    const leaf = fc.oneof(
      fc.constantFrom('a.x', 'b.y', 'c.z'),
      fc.double({ min: 0, max: 100, noNaN: true }).map((v) => String(Math.round(v * 1000) / 1000)),
    );
    const { expr } = fc.letrec<{ expr: string }>((tie) => ({
      expr: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc
          .tuple(tie('expr'), fc.constantFrom('+', '-', '*', '/'), tie('expr'))
          .map(([l, op, r]) => `(${l} ${op} ${r})`),
        tie('expr').map((e) => `-${e}`),
        fc
          .tuple(fc.constantFrom('exp', 'log', 'sqrt', 'abs', 'sigmoid'), tie('expr'))
          .map(([f, e]) => `${f}(${e})`),
        fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `pow(${a}, ${b})`),
        fc
          .tuple(tie('expr'), tie('expr'), tie('expr'))
          .map(([a, b, c]) => `clamp(${a}, ${b}, ${c})`),
        fc
          .tuple(
            fc.constantFrom('min', 'max'),
            fc.array(tie('expr'), { minLength: 2, maxLength: 4 }),
          )
          .map(([f, args]) => `${f}(${args.join(', ')})`),
      ),
    }));
    const rows = fc.integer({ min: 0, max: 3 * FUSION_BLOCK_ROWS + 1 });
    const value = fc.float({ noDefaultInfinity: false });
    fc.assert(
      fc.property(expr, rows, fc.array(value, { minLength: 1, maxLength: 64 }), (text, n, pool) => {
        const fusion = compileFusion(text);
        const { ast, variables } = parseFusion(text);
        const cols = variables.map((_, v) =>
          Float32Array.from({ length: n }, (_, i) => pool[(i * 7 + v * 13) % pool.length]),
        );
        const out = fusion.evaluate(cols, n);
        for (let i = 0; i < n; i++) {
          const want = Math.fround(walk(ast, (name) => cols[variables.indexOf(name)][i]));
          if (!Object.is(out[i], want)) throw new Error(`${text}: row ${i} ${out[i]} != ${want}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** The expression for one row, straight from the AST: the reference the compiler must match. */
function walk(node: FusionNode, read: (name: string) => number): number {
  switch (node.kind) {
    case 'num':
      return node.value;
    case 'var':
      return read(node.name);
    case 'neg':
      return -walk(node.arg, read);
    case 'bin': {
      const a = walk(node.left, read);
      const b = walk(node.right, read);
      if (node.op === '+') return a + b;
      if (node.op === '-') return a - b;
      if (node.op === '*') return a * b;
      return a / b;
    }
    case 'call': {
      const args = node.args.map((arg) => walk(arg, read));
      switch (node.fn) {
        case 'pow':
          return Math.pow(args[0], args[1]);
        case 'exp':
          return Math.exp(args[0]);
        case 'log':
          return Math.log(args[0]);
        case 'sqrt':
          return Math.sqrt(args[0]);
        case 'abs':
          return Math.abs(args[0]);
        case 'sigmoid':
          return 1 / (1 + Math.exp(-args[0]));
        case 'clamp':
          return Math.min(Math.max(args[0], args[1]), args[2]);
        case 'min':
          return args.reduce((m, x) => Math.min(m, x), Infinity);
        case 'max':
          return args.reduce((m, x) => Math.max(m, x), -Infinity);
      }
    }
  }
}
