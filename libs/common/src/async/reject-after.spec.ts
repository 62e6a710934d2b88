import { rejectAfter } from './reject-after';

describe('rejectAfter', () => {
  it('answers with the promise when it settles first, either way', async () => {
    await expect(rejectAfter(Promise.resolve(7), 1000)).resolves.toBe(7);
    await expect(rejectAfter(Promise.reject(new Error('down')), 1000)).rejects.toThrow('down');
  });

  it('rejects naming the wait when the promise is later', async () => {
    await expect(rejectAfter(new Promise(() => undefined), 20)).rejects.toThrow(
      'no answer within 20 ms',
    );
  });
});
