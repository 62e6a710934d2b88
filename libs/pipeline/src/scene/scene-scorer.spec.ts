import { resolveFusionInputs } from './scene-scorer';

describe('resolveFusionInputs', () => {
  const models = [
    { name: 'ctr', outputs: ['ctr'] },
    { name: 'mtl', outputs: ['ctr', 'cvr'] },
  ];

  it('resolves each <model>.<output> to its model index and output name, in order', () => {
    expect(resolveFusionInputs(models, ['mtl.cvr', 'ctr.ctr', 'mtl.ctr'])).toEqual([
      { model: 1, output: 'cvr' },
      { model: 0, output: 'ctr' },
      { model: 1, output: 'ctr' },
    ]);
  });

  it('refuses a name that is no model output', () => {
    expect(() => resolveFusionInputs(models, ['ctr.cvr'])).toThrow("'ctr.cvr'");
    expect(() => resolveFusionInputs(models, ['toString.constructor'])).toThrow();
  });
});
