import { decodeBlob, encodeBlob, TS_FIELD } from './feature-blob';

describe('decodeBlob', () => {
  it('decodes a JSON object of strings, finite numbers and booleans', () => {
    expect(decodeBlob('{"category":"c1","price":9.99,"vip":true,"n":0}')).toEqual({
      ok: true,
      row: { category: 'c1', price: 9.99, vip: true, n: 0 },
      ts: 0,
      badFields: [],
    });
  });

  it('decodes an empty object as an empty row', () => {
    expect(decodeBlob('{}')).toEqual({ ok: true, row: {}, ts: 0, badFields: [] });
  });

  it.each([
    ['', 'not JSON'],
    ['{"price":', 'not JSON'],
    ['price=9.99', 'not JSON'],
    ['\u0000\u0001binary', 'not JSON'],
    ['null', 'not a JSON object'],
    ['42', 'not a JSON object'],
    ['"a string"', 'not a JSON object'],
    ['true', 'not a JSON object'],
    ['[1,2]', 'not a JSON object'],
  ])('refuses %j: %s', (text, reason) => {
    expect(decodeBlob(text)).toEqual({ ok: false, reason });
  });

  it('drops fields of the wrong type and lists them, keeping the good ones', () => {
    const decoded = decodeBlob(
      '{"price":9.99,"tags":["a","b"],"meta":{"x":1},"gone":null,"category":"c1","big":1e999}',
    );
    expect(decoded).toEqual({
      ok: true,
      row: { price: 9.99, category: 'c1' },
      ts: 0,
      badFields: ['tags', 'meta', 'gone', 'big'],
    });
  });

  it('keeps a string that looks like a number as a string (the bundle’s types decide later)', () => {
    expect(decodeBlob('{"price":"9.99"}')).toMatchObject({ ok: true, row: { price: '9.99' } });
  });

  describe(`${TS_FIELD}`, () => {
    it('is read as the row’s timestamp and is not a feature', () => {
      expect(decodeBlob('{"price":1,"_ts":1718000000123}')).toEqual({
        ok: true,
        row: { price: 1 },
        ts: 1718000000123,
        badFields: [],
      });
    });

    it.each([
      ['absent', '{"price":1}'],
      ['a string', '{"price":1,"_ts":"1718000000123"}'],
      ['null', '{"price":1,"_ts":null}'],
      ['an object', '{"price":1,"_ts":{"t":1}}'],
    ])('counts as 0 when %s, and never becomes a feature or a bad field', (_what, text) => {
      expect(decodeBlob(text)).toEqual({ ok: true, row: { price: 1 }, ts: 0, badFields: [] });
    });
  });

  it('returns a row without an own __proto__ trick changing its prototype', () => {
    const decoded = decodeBlob('{"__proto__":{"polluted":1},"price":1}');
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(Object.getPrototypeOf(decoded.row)).toBe(Object.prototype);
    expect((decoded.row as Record<string, unknown>).polluted).toBeUndefined();
    expect(decoded.badFields).toEqual(['__proto__']);
  });
});

describe('decodeBlob with names from outside', () => {
  it('keeps toString and constructor as own fields and reports a primitive __proto__', () => {
    const decoded = decodeBlob('{"__proto__":7,"constructor":"c","toString":2,"price":1}');
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(Object.getPrototypeOf(decoded.row)).toBe(Object.prototype);
    expect(Object.keys(decoded.row)).toEqual(['constructor', 'toString', 'price']);
    expect(decoded.row.constructor).toBe('c');
    // A __proto__ value can never be a field (an assignment would drop it without a word).
    expect(decoded.badFields).toEqual(['__proto__']);
  });

  it('reads _ts only as an own member', () => {
    const decoded = decodeBlob('{"price":1}');
    expect(decoded).toEqual({ ok: true, row: { price: 1 }, ts: 0, badFields: [] });
  });
});

describe('encodeBlob', () => {
  it('writes the row with its timestamp as one JSON object', () => {
    expect(JSON.parse(encodeBlob({ price: 9.99, category: 'c1' }, 42))).toEqual({
      price: 9.99,
      category: 'c1',
      _ts: 42,
    });
  });

  it('round-trips through decodeBlob', () => {
    const row = { category: 'c1', price: 9.99, vip: false, empty: '', unicode: 'ü\u2028"' };
    expect(decodeBlob(encodeBlob(row, 1718000000123))).toEqual({
      ok: true,
      row,
      ts: 1718000000123,
      badFields: [],
    });
  });

  it('lets the timestamp argument win over a stray _ts field in the row', () => {
    expect(decodeBlob(encodeBlob({ _ts: 1, price: 2 }, 7))).toMatchObject({
      row: { price: 2 },
      ts: 7,
    });
  });
});
