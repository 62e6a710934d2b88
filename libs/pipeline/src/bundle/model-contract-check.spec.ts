/**
 * checkModelContract on metadata as a loaded session reports it: each mismatch between the
 * bundle's declaration and the model is named with its pipeline.yaml path.
 */
import { ModelMetadata } from '@app/scoring';
import { ModelSpec } from './bundle-definition';
import { checkModelContract } from './model-contract-check';

const metadata = (outputs: ModelMetadata['outputs']): ModelMetadata => ({
  inputs: [{ name: 'dense', dtype: 'float32', shape: ['batch', 2] }],
  outputs,
});

const model = (extra: Partial<ModelSpec> = {}): ModelSpec => ({
  name: 'ctr',
  file: 'ctr.onnx',
  intraOpThreads: 1,
  inputs: [
    {
      name: 'dense',
      dtype: 'float32',
      columns: [
        { op: 'identity', feature: { source: 'user', name: 'age' } },
        { op: 'identity', feature: { source: 'item', name: 'price' } },
      ],
    },
  ],
  outputs: ['ctr'],
  ...extra,
});

describe('checkModelContract', () => {
  const score = { name: 'ctr', dtype: 'float32', shape: ['batch', 1] };

  it('accepts a model that matches its declaration', () => {
    expect(checkModelContract(model(), metadata([score]))).toEqual([]);
    expect(checkModelContract(model({ maxRunRows: 256 }), metadata([score]))).toEqual([]);
  });

  it('refuses a declared output that is not one score per row', () => {
    expect(checkModelContract(model(), metadata([{ ...score, shape: ['batch', 3] }]))).toEqual([
      {
        path: 'models.ctr.outputs[0]',
        message: 'output shape [batch, 3] is not one score per row',
      },
    ]);
  });

  it('refuses runs in parts when any output, declared or not, has no batch dimension first', () => {
    const outputs = [
      { ...score, shape: [-1, 1] },
      { name: 'table', dtype: 'float32', shape: [1000, 16] },
      { name: 'temperature', dtype: 'float32', shape: [] },
    ];
    const errors = checkModelContract(model({ maxRunRows: 256 }), metadata(outputs));
    expect(errors.map((e) => e.path)).toEqual(['models.ctr.maxRunRows', 'models.ctr.maxRunRows']);
    expect(errors[0].message).toMatch(/^output 'table' has shape \[1000, 16\]: runs in parts need/);
    expect(errors[1].message).toMatch(/^output 'temperature' has shape \[\]/);
    // Whole batches (maxRunRows 0 or absent) take such a model.
    expect(checkModelContract(model({ maxRunRows: 0 }), metadata(outputs))).toEqual([]);
    expect(checkModelContract(model(), metadata(outputs))).toEqual([]);
  });
});
