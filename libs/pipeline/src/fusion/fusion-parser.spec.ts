import {
  FUSION_FUNCTIONS,
  FusionFunction,
  FusionNode,
  MAX_FUSION_DEPTH,
  MAX_FUSION_LENGTH,
  parseFusion,
} from './fusion-parser';

const num = (value: number): FusionNode => ({ kind: 'num', value });
const v = (name: string): FusionNode => ({ kind: 'var', name });
const bin = (op: '+' | '-' | '*' | '/', left: FusionNode, right: FusionNode): FusionNode => ({
  kind: 'bin',
  op,
  left,
  right,
});
const neg = (arg: FusionNode): FusionNode => ({ kind: 'neg', arg });

const ast = (text: string) => parseFusion(text).ast;

describe('parseFusion', () => {
  describe('precedence and grouping', () => {
    it('binds * tighter than +', () => {
      expect(ast('a.x + b.y * c.z')).toEqual(bin('+', v('a.x'), bin('*', v('b.y'), v('c.z'))));
      expect(ast('a.x * b.y + c.z')).toEqual(bin('+', bin('*', v('a.x'), v('b.y')), v('c.z')));
    });

    it('binds / tighter than -', () => {
      expect(ast('1 - 2 / 4')).toEqual(bin('-', num(1), bin('/', num(2), num(4))));
    });

    it('associates + - * / to the left', () => {
      expect(ast('1 - 2 - 3')).toEqual(bin('-', bin('-', num(1), num(2)), num(3)));
      expect(ast('8 / 4 / 2')).toEqual(bin('/', bin('/', num(8), num(4)), num(2)));
      expect(ast('1 + 2 - 3')).toEqual(bin('-', bin('+', num(1), num(2)), num(3)));
    });

    it('lets parentheses override precedence', () => {
      expect(ast('(a.x + b.y) * c.z')).toEqual(bin('*', bin('+', v('a.x'), v('b.y')), v('c.z')));
      expect(ast('((1))')).toEqual(num(1));
    });

    it('applies unary minus to the operand, before multiplication', () => {
      expect(ast('-a.x * 2')).toEqual(bin('*', neg(v('a.x')), num(2)));
      expect(ast('2 * -a.x')).toEqual(bin('*', num(2), neg(v('a.x'))));
      expect(ast('1 - -2')).toEqual(bin('-', num(1), neg(num(2))));
      expect(ast('--a.x')).toEqual(neg(neg(v('a.x'))));
      expect(ast('-(1 + 2)')).toEqual(neg(bin('+', num(1), num(2))));
    });

    it('accepts and ignores a unary plus', () => {
      expect(ast('+a.x')).toEqual(v('a.x'));
      expect(ast('1 * +2')).toEqual(bin('*', num(1), num(2)));
    });

    it('ignores whitespace, including none at all', () => {
      expect(ast('a.x+b.y*c.z')).toEqual(ast('  a.x +\n b.y\t*  c.z  '));
    });
  });

  describe('numbers', () => {
    it.each([
      ['0', 0],
      ['42', 42],
      ['3.25', 3.25],
      ['.5', 0.5],
      ['1.', 1],
      ['1e-3', 0.001],
      ['2E3', 2000],
      ['1.5e+2', 150],
      ['.5e1', 5],
    ])('parses %s as %p', (text, value) => {
      expect(ast(text)).toEqual(num(value));
    });

    it('parses an exponent as part of the number, not as a subtraction', () => {
      expect(ast('1e-3 - 1')).toEqual(bin('-', num(0.001), num(1)));
    });
  });

  describe('variables', () => {
    it('collects <model>.<output> names in order of first use, without duplicates', () => {
      const { variables } = parseFusion('mtl.cvr * ctr.ctr + mtl.cvr - ctr.ctr / mtl.ctr');
      expect(variables).toEqual(['mtl.cvr', 'ctr.ctr', 'mtl.ctr']);
    });

    it('collects variables used inside function arguments', () => {
      const { variables } = parseFusion('pow(b.y, 0.7) * max(a.x, b.y, c_1.out_2)');
      expect(variables).toEqual(['b.y', 'a.x', 'c_1.out_2']);
    });

    it('has no variables for a constant expression', () => {
      expect(parseFusion('1 + 2').variables).toEqual([]);
    });

    it('parses the example bundle formula', () => {
      const parsed = parseFusion('pow(ctr.ctr, 0.7) * pow(mtl.ctr, 0.3) * (1 + 2 * mtl.cvr)');
      expect(parsed.variables).toEqual(['ctr.ctr', 'mtl.ctr', 'mtl.cvr']);
      expect(parsed.ast).toEqual(
        bin(
          '*',
          bin(
            '*',
            { kind: 'call', fn: 'pow', args: [v('ctr.ctr'), num(0.7)] },
            { kind: 'call', fn: 'pow', args: [v('mtl.ctr'), num(0.3)] },
          ),
          bin('+', num(1), bin('*', num(2), v('mtl.cvr'))),
        ),
      );
    });

    it('rejects a bare identifier without a dot, naming it and its column', () => {
      expect(() => parseFusion('ctr')).toThrow(
        "'ctr' must be <model>.<output> or a function call at column 1 of 'ctr'",
      );
      expect(() => parseFusion('1 + score')).toThrow(
        /'score' must be <model>\.<output>.* column 5/,
      );
    });

    it('rejects a function name used without a call', () => {
      expect(() => parseFusion('pow + 1')).toThrow(/'pow' must be <model>\.<output> or a function/);
    });

    it('rejects a name with more than one dot', () => {
      expect(() => parseFusion('a.b.c')).toThrow("unexpected character '.' at column 4");
    });
  });

  describe('functions', () => {
    const names = Object.keys(FUSION_FUNCTIONS) as FusionFunction[];

    const call = (fn: string, count: number) =>
      `${fn}(${Array.from({ length: count }, (_, i) => `m.o${i}`).join(', ')})`;

    it.each(names)('%s accepts its minimum and maximum number of arguments', (fn) => {
      const [min, max] = FUSION_FUNCTIONS[fn];
      for (const count of new Set([min, max])) {
        const parsed = parseFusion(call(fn, count));
        expect(parsed.ast).toEqual({
          kind: 'call',
          fn,
          args: Array.from({ length: count }, (_, i) => v(`m.o${i}`)),
        });
      }
    });

    it.each(names)('%s rejects one argument too many, at the function name', (fn) => {
      const [min, max] = FUSION_FUNCTIONS[fn];
      const range = min === max ? `${min}` : `${min}-${max}`;
      expect(() => parseFusion(`1 + ${call(fn, max + 1)}`)).toThrow(
        `${fn}() takes ${range} argument(s), got ${max + 1} at column 5`,
      );
    });

    it.each(names.filter((fn) => FUSION_FUNCTIONS[fn][0] > 1))(
      '%s rejects one argument too few, at the function name',
      (fn) => {
        const [min, max] = FUSION_FUNCTIONS[fn];
        const range = min === max ? `${min}` : `${min}-${max}`;
        expect(() => parseFusion(call(fn, min - 1))).toThrow(
          `${fn}() takes ${range} argument(s), got ${min - 1} at column 1`,
        );
      },
    );

    it.each(names)('%s rejects an empty argument list', (fn) => {
      expect(() => parseFusion(`${fn}()`)).toThrow(`unexpected ')' at column ${fn.length + 2}`);
    });

    it('accepts nested calls and expressions as arguments', () => {
      expect(ast('clamp(sigmoid(a.x * 2), 0, max(b.y, .5))')).toEqual({
        kind: 'call',
        fn: 'clamp',
        args: [
          { kind: 'call', fn: 'sigmoid', args: [bin('*', v('a.x'), num(2))] },
          num(0),
          { kind: 'call', fn: 'max', args: [v('b.y'), num(0.5)] },
        ],
      });
    });

    it('rejects an unknown function, listing the known ones', () => {
      expect(() => parseFusion('1 + softmax(a.x)')).toThrow(
        /^unknown function 'softmax' \(known: pow, exp, log, sqrt, abs, sigmoid, min, max, clamp\) at column 5/,
      );
    });

    it('rejects a dotted name used as a function', () => {
      expect(() => parseFusion('a.x(1)')).toThrow(/unknown function 'a\.x'.* at column 1/);
    });

    it('rejects a call whose parenthesis is never closed', () => {
      expect(() => parseFusion('pow(a.x, 2')).toThrow("expected ')' at column 11 of 'pow(a.x, 2'");
    });

    it('rejects a trailing comma', () => {
      expect(() => parseFusion('min(a.x, )')).toThrow("unexpected ')' at column 10");
    });
  });

  describe('hostile expressions (nothing is evaluated as code)', () => {
    it.each([
      'constructor',
      'toString',
      '__proto__',
      'hasOwnProperty',
      'valueOf',
      'eval',
      'require',
    ])('refuses %s(...) as an unknown function, not as a JavaScript built-in', (name) => {
      expect(() => parseFusion(`${name}(1)`)).toThrow(`unknown function '${name}'`);
    });

    it.each(['this', 'process', 'globalThis', 'constructor'])(
      'refuses the bare name %s',
      (name) => {
        expect(() => parseFusion(`1 + ${name}`)).toThrow(
          `'${name}' must be <model>.<output> or a function call at column 5`,
        );
      },
    );

    it('reads process.exit or this.constructor only as <model>.<output> names (the schema refuses them)', () => {
      expect(parseFusion('process.exit + this.constructor').variables).toEqual([
        'process.exit',
        'this.constructor',
      ]);
    });

    it('refuses JavaScript syntax: strings, brackets, assignments, arrows', () => {
      for (const text of ["'a'", 'a.b[0]', 'a.b = 1', '() => 1', 'a.b ? 1 : 2', '`x`'])
        expect(() => parseFusion(text)).toThrow(/unexpected/);
    });

    it(`refuses nesting deeper than ${MAX_FUSION_DEPTH} levels with a clear message`, () => {
      const deep = '('.repeat(100_000) + 'a.x' + ')'.repeat(100_000);
      expect(() => parseFusion(deep.slice(0, MAX_FUSION_LENGTH))).toThrow(
        `nested deeper than ${MAX_FUSION_DEPTH} levels at column ${MAX_FUSION_DEPTH + 1}`,
      );
      const calls = 'abs('.repeat(MAX_FUSION_DEPTH + 1) + 'a.x' + ')'.repeat(MAX_FUSION_DEPTH + 1);
      expect(() => parseFusion(calls)).toThrow(`nested deeper than ${MAX_FUSION_DEPTH} levels`);
      const negations = '-'.repeat(MAX_FUSION_DEPTH + 1) + 'a.x';
      expect(() => parseFusion(negations)).toThrow(`nested deeper than ${MAX_FUSION_DEPTH} levels`);
      const fits = '('.repeat(MAX_FUSION_DEPTH) + 'a.x' + ')'.repeat(MAX_FUSION_DEPTH);
      expect(parseFusion(fits).ast).toEqual(v('a.x'));
    });

    it(`refuses an expression longer than ${MAX_FUSION_LENGTH} characters before reading it`, () => {
      const long = Array.from({ length: 5000 }, () => 'a.x').join('+');
      expect(() => parseFusion(long)).toThrow(
        `expression is ${long.length} characters long, more than the ${MAX_FUSION_LENGTH} allowed`,
      );
    });
  });

  describe('syntax errors', () => {
    it.each([
      ['', 'unexpected end of expression at column 1'],
      ['a.x +', 'unexpected end of expression at column 6'],
      ['-', 'unexpected end of expression at column 2'],
      ['(a.x', "expected ')' at column 5"],
      ['(a.x b.y)', "expected ')' at column 6"],
      ['a.x )', "unexpected ')' at column 5"],
      ['a.x b.y', "unexpected 'b.y' at column 5"],
      ['1 2', "unexpected '2' at column 3"],
      ['(1 + 2))', "unexpected ')' at column 8"],
      ['a.x * * b.y', "unexpected '*' at column 7"],
      [', a.x', "unexpected ',' at column 1"],
      ['a.x ^ 2', "unexpected character '^' at column 5"],
      ['a.x % 2', "unexpected character '%' at column 5"],
      ['a.x; b.y', "unexpected character ';' at column 4"],
    ])('rejects %p with %p', (text, message) => {
      expect(() => parseFusion(text)).toThrow(`${message} of '${text}'`);
    });

    it('counts columns from 1 and after leading whitespace', () => {
      expect(() => parseFusion('   $')).toThrow("unexpected character '$' at column 4");
    });
  });
});
