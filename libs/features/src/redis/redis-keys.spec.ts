import { fnv1a32 } from '@app/common';
import { RedisKeys } from './redis-keys';

describe('RedisKeys', () => {
  it('lays keys out as <prefix><entity>:<id> by default', () => {
    const keys = new RedisKeys('rk:');
    expect(keys.key('user', 'u1')).toBe('rk:user:u1');
    expect(keys.key('item', 'i 9')).toBe('rk:item:i 9');
  });

  it('adds a hash tag of fnv1a32(id) mod N with N slot buckets', () => {
    const keys = new RedisKeys('rk:', 256);
    expect(keys.key('item', 'i1')).toBe(`rk:item:{${fnv1a32('i1') % 256}}:i1`);
    const tags = new Set(
      Array.from({ length: 5000 }, (_, i) => /\{(\d+)\}/.exec(keys.key('item', `i${i}`))![1]),
    );
    expect(tags.size).toBe(256);
  });
});
