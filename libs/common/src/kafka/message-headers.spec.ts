import type { IHeaders } from 'kafkajs';
import { deadLetterOf } from './dead-letter';
import { headerText, receivedHeaders } from './message-headers';

/* eslint-disable @typescript-eslint/no-require-imports -- kafkajs's own record codec, not exported */
const encodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0') as (record: {
  key: string;
  value: string;
  headers: IHeaders;
}) => { buffer: Buffer };
const decodeRecord = require('kafkajs/src/protocol/recordBatch/record/v0/decoder') as (
  decoder: unknown,
  context: object,
) => { headers: IHeaders };
const Decoder = require('kafkajs/src/protocol/decoder') as new (buffer: Buffer) => {
  readVarInt(): number;
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** What a consumer gets for a record sent with `headers`: kafkajs's own encode and decode. */
function roundTrip(headers: IHeaders): IHeaders {
  const decoder = new Decoder(encodeRecord({ key: 'k', value: 'v', headers }).buffer);
  decoder.readVarInt(); // the record's length
  return decodeRecord(decoder, { firstOffset: '0', firstTimestamp: '0', magicByte: 2 }).headers;
}

/** Headers with these own names (`__proto__` too), as a producer would send them. */
function sent(entries: [string, string | string[]][]): IHeaders {
  const headers: IHeaders = {};
  for (const [name, value] of entries)
    Object.defineProperty(headers, name, { value, enumerable: true, writable: true });
  return headers;
}

const texts = (headers: IHeaders) =>
  Object.keys(headers).map((name) => {
    const value = headers[name];
    const all = Array.isArray(value) ? value : [value];
    return [name, all.map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : v))];
  });

describe('receivedHeaders', () => {
  const names = sent([
    ['__proto__', 'p'],
    ['constructor', ['c1', 'c2']],
    ['toString', 't'],
    ['x-scene', 'feed'],
  ]);

  it('undoes kafkajs’s decoding of headers named like Object.prototype members', () => {
    const received = roundTrip(names);
    // What kafkajs 2.2 hands a consumer: each such header led by the inherited member.
    expect(Array.isArray(received.constructor)).toBe(true);
    expect((received.constructor as unknown as unknown[])[0]).toBe(Object);
    expect(texts(receivedHeaders(received))).toEqual([
      ['__proto__', ['p']],
      ['constructor', ['c1', 'c2']],
      ['toString', ['t']],
      ['x-scene', ['feed']],
    ]);
  });

  it('gives headers kafkajs can produce again, as they were sent (read back the same way)', () => {
    const copy = deadLetterOf(
      { key: null, value: null, headers: roundTrip(names), offset: '7' } as never,
      'why',
      'in',
      2,
    );
    expect(texts(receivedHeaders(roundTrip(copy.headers!)))).toEqual([
      ['__proto__', ['p']],
      ['constructor', ['c1', 'c2']],
      ['toString', ['t']],
      ['x-scene', ['feed']],
      ['x-dlq-reason', ['why']],
      ['x-original-topic', ['in']],
      ['x-original-partition', ['2']],
      ['x-original-offset', ['7']],
    ]);
  });

  it('leaves out null values (other clients send them; kafkajs cannot write them)', () => {
    const received = { a: null, b: [Buffer.from('1'), null, Buffer.from('2')], c: Buffer.from('') };
    expect(texts(receivedHeaders(received as unknown as IHeaders))).toEqual([
      ['b', ['1', '2']],
      ['c', ['']],
    ]);
  });
});

describe('headerText', () => {
  it('reads the last value of a header; absent, null and inherited names are undefined', () => {
    const received = roundTrip(sent([['x-request-id', ['r1', 'r2']]]));
    expect(headerText(received, 'x-request-id')).toBe('r2');
    expect(headerText(received, 'x-scene')).toBeUndefined();
    expect(headerText(received, 'constructor')).toBeUndefined();
    expect(
      headerText({ 'x-request-id': null } as unknown as IHeaders, 'x-request-id'),
    ).toBeUndefined();
    expect(headerText(roundTrip(sent([['constructor', 'c']])), 'constructor')).toBe('c');
  });
});
