import { parseNotice } from './reload-broadcast';

describe('parseNotice (a reload notice received from the channel)', () => {
  it('reads a notice for one scene or for all', () => {
    expect(parseNotice('{"origin":"h:1:a","scene":"feed","retryFailed":true}')).toEqual({
      origin: 'h:1:a',
      scene: 'feed',
      retryFailed: true,
    });
    expect(parseNotice('{"origin":"h:1:a","retryFailed":false}')).toEqual({
      origin: 'h:1:a',
      retryFailed: false,
    });
  });

  it.each([
    ['not json', 'not JSON'],
    ['[1]', 'not a JSON object'],
    ['null', 'not a JSON object'],
    ['{"retryFailed":false}', 'origin must be a string of 1-200 characters'],
    [`{"origin":"${'x'.repeat(201)}","retryFailed":false}`, 'origin must be'],
    ['{"origin":"o","scene":"../etc","retryFailed":false}', 'scene must be a folder name'],
    ['{"origin":"o","scene":".hidden","retryFailed":false}', 'scene must be a folder name'],
    ['{"origin":"o","scene":7,"retryFailed":false}', 'scene must be a folder name'],
    ['{"origin":"o","scene":"feed"}', 'retryFailed must be a boolean'],
    ['{"origin":"o","scene":"feed","retryFailed":"yes"}', 'retryFailed must be a boolean'],
  ])('refuses %s', (text, reason) => {
    const result = parseNotice(text);
    expect(typeof result).toBe('string');
    expect(result).toContain(reason);
  });
});
