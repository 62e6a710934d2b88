import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFeatureLine, readFeatureFile } from './feature-file';

describe('parseFeatureLine', () => {
  it('parses a user record', () => {
    expect(
      parseFeatureLine(
        '{"entity":"user","id":"u1","fields":{"age":25,"vip":true,"city":"c1"}}',
        'f:1',
      ),
    ).toEqual({ entity: 'user', id: 'u1', fields: { age: 25, vip: true, city: 'c1' } });
  });

  it('parses an item record with no fields', () => {
    expect(parseFeatureLine('{"entity":"item","id":"i1","fields":{}}', 'f:1')).toEqual({
      entity: 'item',
      id: 'i1',
      fields: {},
    });
  });

  it('drops keys other than entity, id and fields', () => {
    const record = parseFeatureLine('{"entity":"item","id":"i1","fields":{},"ttl":5}', 'f:1');
    expect(record).toEqual({ entity: 'item', id: 'i1', fields: {} });
  });

  it.each([
    ['{"entity":', /^seed\.jsonl:7: not JSON \(/],
    ['null', /^seed\.jsonl:7: not an object$/],
    ['42', /^seed\.jsonl:7: not an object$/],
    [
      '{"entity":"session","id":"s","fields":{}}',
      /^seed\.jsonl:7: entity must be "user" or "item"$/,
    ],
    ['{"id":"u1","fields":{}}', /^seed\.jsonl:7: entity must be "user" or "item"$/],
    ['{"entity":"user","id":"","fields":{}}', /^seed\.jsonl:7: id must be a non-empty string$/],
    ['{"entity":"user","id":5,"fields":{}}', /^seed\.jsonl:7: id must be a non-empty string$/],
    ['{"entity":"user","id":"u1"}', /^seed\.jsonl:7: fields must be an object$/],
    ['{"entity":"user","id":"u1","fields":null}', /^seed\.jsonl:7: fields must be an object$/],
    ['{"entity":"user","id":"u1","fields":[1]}', /^seed\.jsonl:7: fields must be an object$/],
    [
      '{"entity":"user","id":"u1","fields":{"tags":["a"]}}',
      /^seed\.jsonl:7: fields\.tags must be a string, finite number or boolean$/,
    ],
    [
      '{"entity":"user","id":"u1","fields":{"x":null}}',
      /^seed\.jsonl:7: fields\.x must be a string, finite number or boolean$/,
    ],
  ])('rejects %s, prefixed with where it is', (line, message) => {
    expect(() => parseFeatureLine(line, 'seed.jsonl:7')).toThrow(message);
  });

  it('keeps toString and constructor as own fields and refuses a __proto__ field', () => {
    const record = parseFeatureLine(
      '{"entity":"item","id":"constructor","fields":{"toString":1,"constructor":"c"}}',
      'f:1',
    );
    expect(record).toEqual({
      entity: 'item',
      id: 'constructor',
      fields: { toString: 1, constructor: 'c' },
    });
    expect(() =>
      parseFeatureLine('{"entity":"item","id":"i1","fields":{"__proto__":1}}', 'f:2'),
    ).toThrow('f:2: fields.__proto__ is a reserved name');
  });

  it('takes entity, id and fields only as own members, never from Object.prototype', () => {
    expect(() => parseFeatureLine('{"entity":"item","id":"i1"}', 'f:3')).toThrow(
      'f:3: fields must be an object',
    );
    expect(() =>
      parseFeatureLine('{"__proto__":{"entity":"item","id":"i1","fields":{}}}', 'f:4'),
    ).toThrow('f:4: entity must be "user" or "item"');
  });
});

describe('readFeatureFile', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'ranker-features-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (lines: string[]) => {
    const path = join(dir, 'features.jsonl');
    writeFileSync(path, lines.join('\n'));
    return path;
  };

  it('reads every record in file order, skipping blank lines', async () => {
    const path = write([
      '{"entity":"user","id":"u1","fields":{"age":25}}',
      '',
      '   ',
      '{"entity":"item","id":"i1","fields":{"price":3.5}}',
      '{"entity":"item","id":"i2","fields":{}}',
      '',
    ]);
    expect(await readFeatureFile(path)).toEqual([
      { entity: 'user', id: 'u1', fields: { age: 25 } },
      { entity: 'item', id: 'i1', fields: { price: 3.5 } },
      { entity: 'item', id: 'i2', fields: {} },
    ]);
  });

  it('accepts CRLF line endings', async () => {
    const path = join(dir, 'crlf.jsonl');
    writeFileSync(
      path,
      '{"entity":"user","id":"u1","fields":{}}\r\n{"entity":"item","id":"i1","fields":{}}\r\n',
    );
    expect((await readFeatureFile(path)).map((r) => r.id)).toEqual(['u1', 'i1']);
  });

  it('names the file and the 1-based line of a bad record, counting blank lines', async () => {
    const path = write([
      '{"entity":"user","id":"u1","fields":{}}',
      '',
      '{"entity":"user","id":"u2","fields":{"age":{}}}',
    ]);
    await expect(readFeatureFile(path)).rejects.toThrow(
      `${path}:3: fields.age must be a string, finite number or boolean`,
    );
  });

  it('names the line of a line that is not JSON', async () => {
    const path = write(['{"entity":"user","id":"u1","fields":{}}', 'not json']);
    await expect(readFeatureFile(path)).rejects.toThrow(new RegExp(`^${path}:2: not JSON`));
  });

  it('fails for a missing file', async () => {
    await expect(readFeatureFile(join(dir, 'nope.jsonl'))).rejects.toThrow(/ENOENT/);
  });

  it('reads an empty file as no records', async () => {
    expect(await readFeatureFile(write([]))).toEqual([]);
  });
});
