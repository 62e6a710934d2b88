import { join } from 'node:path';
import { InferenceSession } from 'onnxruntime-node';
import { checkSessionInputs, randomFeeds, readRawModelSpecs } from './raw-feeds';

const bundle = join(__dirname, '../../models/feed/v1');

describe('raw feeds built like the bundle', () => {
  const [ctr, mtl] = readRawModelSpecs([join(bundle, 'ctr.onnx'), join(bundle, 'mtl.onnx')]);

  it("reads each model's inputs and per-column id ranges from pipeline.yaml", () => {
    expect(ctr.inputs.map((i) => [i.name, i.dtype, i.idBounds.length])).toEqual([
      ['sparse_ids', 'int64', 26],
      ['dense', 'float32', 13],
    ]);
    expect(ctr.inputs[0].idBounds[0]).toBe(1000); // hash user.id, 1000 buckets
    expect(ctr.inputs[0].idBounds[3]).toBe(8); // bucketize user.age, 7 boundaries
    expect(mtl.inputs[0].idBounds[0]).toBe(500);
    expect(ctr.inputs[1].idBounds.every((b) => b === 0)).toBe(true);
  });

  it('draws ids inside each column range, deterministically', () => {
    const feeds = randomFeeds(mtl, 200, 5);
    const ids = feeds.sparse_ids.data as BigInt64Array;
    expect(feeds.sparse_ids.dims).toEqual([200, 26]);
    ids.forEach((id, i) => {
      expect(id).toBeGreaterThanOrEqual(0n);
      expect(id).toBeLessThan(BigInt(mtl.inputs[0].idBounds[i % 26]));
    });
    expect(new Set(ids).size).toBeGreaterThan(100);
    expect(randomFeeds(mtl, 200, 5).dense.data).toEqual(feeds.dense.data);
  });

  it('accepts the real session and rejects a model file the bundle does not declare', async () => {
    const session = await InferenceSession.create(ctr.file);
    expect(() => checkSessionInputs(ctr, session)).not.toThrow();
    expect(() => checkSessionInputs({ ...ctr, inputs: ctr.inputs.slice(1) }, session)).toThrow(
      /declares inputs \[dense\], model has \[dense,sparse_ids\]/,
    );
    await session.release();
    expect(() => readRawModelSpecs([join(bundle, 'other.onnx')])).toThrow(
      /declares no model with file/,
    );
  });
});
