import { ModelInputError } from '@app/common';
import { checkFeeds } from './model-input-check';
import { InputFeeds, InputTensor, ModelMetadata } from './tensor-types';

const metadata: ModelMetadata = {
  inputs: [
    { name: 'sparse_ids', dtype: 'int64', shape: ['batch', 3] },
    { name: 'dense', dtype: 'float32', shape: [-1, 2] },
  ],
  outputs: [{ name: 'ctr', dtype: 'float32', shape: ['batch', 1] }],
};

const ids = (rows: number, cols = 3): InputTensor => ({
  dtype: 'int64',
  data: new BigInt64Array(rows * cols),
  dims: [rows, cols],
});
const floats = (rows: number, cols = 2): InputTensor => ({
  dtype: 'float32',
  data: new Float32Array(rows * cols),
  dims: [rows, cols],
});

/** The ModelInputError thrown for `feeds`; fails the test if none is thrown. */
function errorOf(feeds: InputFeeds, meta = metadata): ModelInputError {
  try {
    checkFeeds('feed/v1/ctr', meta, feeds);
  } catch (error) {
    expect(error).toBeInstanceOf(ModelInputError);
    return error as ModelInputError;
  }
  throw new Error('expected checkFeeds to throw');
}

describe('checkFeeds', () => {
  it('accepts feeds that match the model, whatever the batch size', () => {
    for (const rows of [0, 1, 64]) {
      expect(() =>
        checkFeeds('feed/v1/ctr', metadata, { sparse_ids: ids(rows), dense: floats(rows) }),
      ).not.toThrow();
    }
  });

  it('names a missing input', () => {
    const error = errorOf({ sparse_ids: ids(4) });
    expect(error.details).toEqual([{ path: 'dense', message: 'missing' }]);
    expect(error.message).toBe("model feed/v1/ctr: input 'dense' missing");
    expect(error).toMatchObject({ code: 'MODEL_INPUT_INVALID', status: 500 });
  });

  it('names an input of the wrong dtype', () => {
    const wrong: InputTensor = { dtype: 'int64', data: new BigInt64Array(8), dims: [4, 2] };
    const error = errorOf({ sparse_ids: ids(4), dense: wrong });
    expect(error.details).toEqual([
      { path: 'dense', message: 'dtype int64, model expects float32' },
    ]);
  });

  it('names an input with the wrong number of columns', () => {
    const error = errorOf({ sparse_ids: ids(4, 2), dense: floats(4) });
    expect(error.details).toEqual([
      { path: 'sparse_ids', message: 'dims [4, 2], model expects [batch, 3]' },
    ]);
    expect(error.message).toContain("input 'sparse_ids' dims [4, 2]");
  });

  it('names an input of the wrong rank', () => {
    const flat: InputTensor = { dtype: 'float32', data: new Float32Array(8), dims: [8] };
    const error = errorOf({ sparse_ids: ids(4), dense: flat });
    expect(error.details).toEqual([{ path: 'dense', message: 'rank 1, model expects rank 2' }]);
  });

  it('names an input whose data does not fill its dims', () => {
    const short: InputTensor = { dtype: 'float32', data: new Float32Array(7), dims: [4, 2] };
    const error = errorOf({ sparse_ids: ids(4), dense: short });
    expect(error.details).toEqual([{ path: 'dense', message: '7 elements for dims [4, 2]' }]);
  });

  it('names a feed the model does not take', () => {
    const error = errorOf({ sparse_ids: ids(4), dense: floats(4), extra: floats(4) });
    expect(error.details).toEqual([{ path: 'extra', message: 'not an input of the model' }]);
    expect(error.message).toBe("model feed/v1/ctr: input 'extra' not an input of the model");
  });

  it('reports every problem together', () => {
    const error = errorOf({ sparse_ids: floats(4, 3), other: ids(1) });
    expect(error.details.map((d) => d.path)).toEqual(['sparse_ids', 'dense', 'other']);
  });

  it('accepts any dims when the model declares no shape', () => {
    const meta: ModelMetadata = {
      inputs: [{ name: 'x', dtype: 'float32', shape: [] }],
      outputs: [],
    };
    expect(() => checkFeeds('m', meta, { x: floats(3, 5) })).not.toThrow();
  });
});
