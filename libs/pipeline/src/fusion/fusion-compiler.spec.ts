import { compileFusion } from './fusion-compiler';

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
});
