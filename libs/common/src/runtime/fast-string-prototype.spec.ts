import { setFlagsFromString } from 'node:v8';
import { restoreFastStringPrototype } from './fast-string-prototype';

setFlagsFromString('--allow-natives-syntax');
// Parsed after the flag is set: V8's own test of an object's property mode.
const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (
  o: object,
) => boolean;

describe('restoreFastStringPrototype', () => {
  it('puts String.prototype back into fast mode after a String subclass made it slow', () => {
    // What ioredis does when it loads: a subclass, defined and not yet used.
    class Tagged extends String {}
    expect(Tagged.name).toBe('Tagged');
    expect(hasFastProperties(String.prototype)).toBe(false);
    restoreFastStringPrototype();
    expect(hasFastProperties(String.prototype)).toBe(true);
    restoreFastStringPrototype();
    expect(hasFastProperties(String.prototype)).toBe(true);
  });

  it('leaves strings and their methods as they were', () => {
    restoreFastStringPrototype();
    expect('a,b'.split(',')).toEqual(['a', 'b']);
    expect('abc'.charCodeAt(1)).toBe(0x62);
    expect(Object.getOwnPropertyNames(String.prototype)).not.toContain('probed');
  });
});
