import type { IHeaders } from 'kafkajs';

type HeaderValue = IHeaders[string];

/**
 * A received message's headers as they were sent, fit to be produced again. kafkajs 2.2 decodes
 * each header with `obj[name] === undefined ? value : [obj[name], value]`, so a header named like
 * an Object.prototype member (`constructor`, `toString`, `__proto__`) comes out as an array led
 * by that inherited member, which kafkajs then cannot encode: a dead letter copying it would fail
 * every send. A null value (other clients send them) cannot be encoded by kafkajs either. Only
 * the Buffer and string values are kept, in order; a header left with none is left out.
 */
export function receivedHeaders(headers: IHeaders | undefined): IHeaders {
  const out: IHeaders = {};
  for (const name of Object.keys(headers ?? {})) {
    const values = valuesOf(headers![name]);
    if (values.length === 0) continue;
    // A data property even for `__proto__`, so the name is a header like any other.
    Object.defineProperty(out, name, {
      value: values.length === 1 ? values[0] : values,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The text of header `name`, the last value of a repeated one; undefined if absent or null. */
export function headerText(headers: IHeaders | undefined, name: string): string | undefined {
  if (headers === undefined || !Object.hasOwn(headers, name)) return undefined;
  const values = valuesOf(headers[name]);
  const last = values[values.length - 1];
  if (last === undefined) return undefined;
  return Buffer.isBuffer(last) ? last.toString('utf8') : last;
}

function valuesOf(value: HeaderValue): (Buffer | string)[] {
  const all: unknown[] = Array.isArray(value) ? value : [value];
  return all.filter((v): v is Buffer | string => Buffer.isBuffer(v) || typeof v === 'string');
}
