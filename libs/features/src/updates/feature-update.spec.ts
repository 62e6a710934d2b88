import { parseFeatureUpdate } from './feature-update';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const KAFKA_TS = '1700000000000';

describe('parseFeatureUpdate', () => {
  it('parses an item update with its own timestamp', () => {
    const parsed = parseFeatureUpdate(
      json({
        entity: 'item',
        id: 'i1',
        fields: { price: 9.5, category: 'cat3', promoted: false },
        timestamp: 1_700_000_123_456,
      }),
      KAFKA_TS,
    );
    expect(parsed).toEqual({
      ok: true,
      update: {
        entity: 'item',
        id: 'i1',
        fields: { price: 9.5, category: 'cat3', promoted: false },
        timestamp: 1_700_000_123_456,
      },
      badFields: [],
    });
  });

  it('parses a user update with no fields', () => {
    const parsed = parseFeatureUpdate(
      json({ entity: 'user', id: 'u1', fields: {}, timestamp: 0 }),
      KAFKA_TS,
    );
    expect(parsed).toEqual({
      ok: true,
      update: { entity: 'user', id: 'u1', fields: {}, timestamp: 0 },
      badFields: [],
    });
  });

  it.each([
    ['a string', KAFKA_TS, 1_700_000_000_000],
    ['a number', 42, 42],
  ])('takes the Kafka timestamp (%s) when the message has none', (_, kafkaTs, expected) => {
    const parsed = parseFeatureUpdate(json({ entity: 'item', id: 'i1', fields: {} }), kafkaTs);
    expect(parsed.ok && parsed.update.timestamp).toBe(expected);
  });

  it('prefers the message timestamp over the Kafka one', () => {
    const parsed = parseFeatureUpdate(
      json({ entity: 'item', id: 'i1', fields: {}, timestamp: 5 }),
      KAFKA_TS,
    );
    expect(parsed.ok && parsed.update.timestamp).toBe(5);
  });

  it('drops fields of the wrong type and reserved names, keeping the rest', () => {
    const parsed = parseFeatureUpdate(
      Buffer.from(
        '{"entity":"item","id":"i1","timestamp":7,"fields":{"price":{"x":1},"tags":["a"],' +
          '"gone":null,"big":1e999,"category":"c","_ts":99,"__proto__":1,"rating":4}}',
      ),
      KAFKA_TS,
    );
    expect(parsed).toEqual({
      ok: true,
      update: { entity: 'item', id: 'i1', fields: { category: 'c', rating: 4 }, timestamp: 7 },
      badFields: [
        { name: 'price', reason: 'wrong_type' },
        { name: 'tags', reason: 'wrong_type' },
        { name: 'gone', reason: 'wrong_type' },
        { name: 'big', reason: 'wrong_type' },
        { name: '_ts', reason: 'reserved' },
        { name: '__proto__', reason: 'reserved' },
      ],
    });
  });

  it('keeps an update whose every field was dropped (nothing to apply, not refused)', () => {
    const parsed = parseFeatureUpdate(
      json({ entity: 'item', id: 'i1', fields: { price: null }, timestamp: 1 }),
      KAFKA_TS,
    );
    expect(parsed).toEqual({
      ok: true,
      update: { entity: 'item', id: 'i1', fields: {}, timestamp: 1 },
      badFields: [{ name: 'price', reason: 'wrong_type' }],
    });
  });

  it.each<[string, Buffer | null, RegExp]>([
    ['a null value (tombstone)', null, /^empty message value$/],
    ['an empty value', Buffer.alloc(0), /^empty message value$/],
    ['text that is not JSON', Buffer.from('price=3'), /^not JSON \(/],
    ['truncated JSON', Buffer.from('{"entity":"item"'), /^not JSON \(/],
    ['JSON null', json(null), /^not a JSON object$/],
    ['a JSON array', json([1]), /^not a JSON object$/],
    ['a JSON string', json('item'), /^not a JSON object$/],
    ['no entity', json({ id: 'i1', fields: {} }), /^entity must be "user" or "item"$/],
    [
      'an unknown entity',
      json({ entity: 'shop', id: 's1', fields: {} }),
      /^entity must be "user" or "item"$/,
    ],
    ['no id', json({ entity: 'item', fields: {} }), /^id must be a non-empty string$/],
    [
      'an empty id',
      json({ entity: 'item', id: '', fields: {} }),
      /^id must be a non-empty string$/,
    ],
    [
      'a numeric id',
      json({ entity: 'item', id: 7, fields: {} }),
      /^id must be a non-empty string$/,
    ],
    ['no fields', json({ entity: 'item', id: 'i1' }), /^fields must be an object$/],
    ['null fields', json({ entity: 'item', id: 'i1', fields: null }), /^fields must be an object$/],
    ['array fields', json({ entity: 'item', id: 'i1', fields: [1] }), /^fields must be an object$/],
    [
      'a string timestamp',
      json({ entity: 'item', id: 'i1', fields: {}, timestamp: '1700000000000' }),
      /^timestamp must be a finite number >= 0/,
    ],
    [
      'a negative timestamp',
      json({ entity: 'item', id: 'i1', fields: {}, timestamp: -1 }),
      /^timestamp must be a finite number >= 0/,
    ],
    [
      'a null timestamp',
      json({ entity: 'item', id: 'i1', fields: {}, timestamp: null }),
      /^timestamp must be a finite number >= 0/,
    ],
    [
      'an infinite timestamp',
      Buffer.from('{"entity":"item","id":"i1","fields":{},"timestamp":1e999}'),
      /^timestamp must be a finite number >= 0/,
    ],
  ])('refuses %s with the reason', (_, value, reason) => {
    const parsed = parseFeatureUpdate(value, KAFKA_TS);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });

  it.each([['-1'], [''], [undefined], ['abc']])(
    'refuses a message without timestamp when the Kafka timestamp is %p',
    (kafkaTs) => {
      const parsed = parseFeatureUpdate(json({ entity: 'item', id: 'i1', fields: {} }), kafkaTs);
      expect(parsed).toEqual({
        ok: false,
        reason: 'no timestamp, and the Kafka message timestamp is not usable',
      });
    },
  );

  it('applies fields named like Object.prototype members as own fields', () => {
    const parsed = parseFeatureUpdate(
      Buffer.from(
        '{"entity":"item","id":"toString","fields":{"constructor":1,"toString":"t","hasOwnProperty":true},"timestamp":5}',
      ),
      KAFKA_TS,
    );
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.update.id).toBe('toString');
    expect(Object.keys(parsed.update.fields)).toEqual([
      'constructor',
      'toString',
      'hasOwnProperty',
    ]);
    expect(Object.getPrototypeOf(parsed.update.fields)).toBe(Object.prototype);
  });

  it('reads the envelope and timestamp only as own members', () => {
    expect(
      parseFeatureUpdate(
        Buffer.from('{"__proto__":{"entity":"item","id":"i1","fields":{},"timestamp":5}}'),
        KAFKA_TS,
      ),
    ).toEqual({ ok: false, reason: 'entity must be "user" or "item"' });
    const parsed = parseFeatureUpdate(
      Buffer.from('{"entity":"item","id":"i1","fields":{"a":1},"__proto__":{"timestamp":5}}'),
      KAFKA_TS,
    );
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.update.timestamp).toBe(Number(KAFKA_TS));
  });

  it('turns -0 into 0, as Redis stores it (JSON.stringify), so the cache agrees', () => {
    const parsed = parseFeatureUpdate(
      Buffer.from('{"entity":"item","id":"i1","fields":{"a":-0},"timestamp":5}'),
      KAFKA_TS,
    );
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(Object.is(parsed.update.fields.a, 0)).toBe(true);
  });
});
