/**
 * Guards the committed example models and demo data: they must be exactly what the
 * generator produces (so nobody hand-edits a binary), load in onnxruntime with the
 * declared interface, produce usable probabilities, and keep production-like cost.
 */
import { mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join, relative } from 'path';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { onnx } from 'onnx-proto';
import { MODELS_ROOT, OUTPUTS, generateAll } from './generate';
import { Prng } from './prng';

const CTR_PATH = join(MODELS_ROOT, 'feed/v1/ctr.onnx');
const MTL_PATH = join(MODELS_ROOT, 'feed/v1/mtl.onnx');
const FIELDS = 26;
const DENSE = 13;
const BATCH = 256;

/** int64 fields decode as Long when the `long` package is present, as number otherwise. */
function toNumber(v: number | { toNumber(): number }): number {
  return typeof v === 'number' ? v : v.toNumber();
}

function randomFeeds(vocab: number, seed: string): Record<string, Tensor> {
  const rng = Prng.fromKey(seed);
  const ids = new BigInt64Array(BATCH * FIELDS);
  for (let i = 0; i < ids.length; i++) ids[i] = BigInt(rng.int(0, vocab - 1));
  const dense = new Float32Array(BATCH * DENSE);
  for (let i = 0; i < dense.length; i++) dense[i] = rng.next();
  return {
    sparse_ids: new Tensor('int64', ids, [BATCH, FIELDS]),
    dense: new Tensor('float32', dense, [BATCH, DENSE]),
  };
}

function stats(values: Float32Array): { mean: number; sd: number } {
  let sum = 0;
  for (const v of values) sum += v;
  const mean = sum / values.length;
  let sq = 0;
  for (const v of values) sq += (v - mean) ** 2;
  return { mean, sd: Math.sqrt(sq / values.length) };
}

/** Scores are probabilities: finite, strictly inside (0,1), and not one constant. */
function expectProbabilities(values: Float32Array): { mean: number; sd: number } {
  expect(values).toHaveLength(BATCH);
  for (const v of values) {
    expect(Number.isFinite(v)).toBe(true);
    expect(v).toBeGreaterThan(0);
    expect(v).toBeLessThan(1);
  }
  const s = stats(values);
  expect(s.mean).toBeGreaterThan(0.01);
  expect(s.mean).toBeLessThan(0.5);
  expect(s.sd).toBeGreaterThan(0.01);
  return s;
}

function expectInterface(session: InferenceSession, outputs: string[]): void {
  expect(session.inputNames).toEqual(['sparse_ids', 'dense']);
  expect(session.outputNames).toEqual(outputs);
  expect(session.inputMetadata).toEqual([
    { name: 'sparse_ids', isTensor: true, type: 'int64', shape: ['batch', FIELDS] },
    { name: 'dense', isTensor: true, type: 'float32', shape: ['batch', DENSE] },
  ]);
  expect(session.outputMetadata).toEqual(
    outputs.map((name) => ({ name, isTensor: true, type: 'float32', shape: ['batch', 1] })),
  );
}

describe('model generator', () => {
  it('regenerates every committed file byte for byte', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ranker-models-'));
    try {
      const written = generateAll(dir);
      expect(written.map((p) => relative(dir, p))).toEqual(OUTPUTS.map(([rel]) => rel));
      for (const path of written) {
        const committed = readFileSync(join(MODELS_ROOT, relative(dir, path)));
        expect(readFileSync(path).equals(committed)).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes well-formed demo feature rows', () => {
    const lines = readFileSync(join(MODELS_ROOT, 'demo/features.jsonl'), 'utf8')
      .trimEnd()
      .split('\n');
    const rows = lines.map((l) => JSON.parse(l) as { entity: string; id: string });
    expect(rows.filter((r) => r.entity === 'user')).toHaveLength(200);
    expect(rows.filter((r) => r.entity === 'item')).toHaveLength(5000);
    expect(rows[0].id).toBe('u1');
    expect(rows[rows.length - 1].id).toBe('i5000');
  });

  it('serves the CTR model with the declared interface and spread-out scores', async () => {
    const session = await InferenceSession.create(CTR_PATH);
    try {
      expectInterface(session, ['ctr']);
      const out = await session.run(randomFeeds(1000, 'spec/ctr'));
      expect(out.ctr.dims).toEqual([BATCH, 1]);
      expectProbabilities(out.ctr.data as Float32Array);
    } finally {
      await session.release();
    }
  });

  it('serves the MTL model with cvr below ctr', async () => {
    const session = await InferenceSession.create(MTL_PATH);
    try {
      expectInterface(session, ['ctr', 'cvr']);
      const out = await session.run(randomFeeds(500, 'spec/mtl'));
      const ctr = expectProbabilities(out.ctr.data as Float32Array);
      const cvr = expectProbabilities(out.cvr.data as Float32Array);
      expect(cvr.mean).toBeLessThan(ctr.mean);
    } finally {
      await session.release();
    }
  });

  it('keeps the CTR model at production cost: 0.25-0.5 M MAC per row', () => {
    const model = onnx.ModelProto.decode(readFileSync(CTR_PATH));
    expect(toNumber(model.irVersion)).toBe(8);
    expect(model.opsetImport.map((o) => toNumber(o.version))).toEqual([17]);
    expect(model.producerName).toBe('ranker-model-generator');

    const graph = model.graph as onnx.GraphProto;
    const dims = new Map(graph.initializer.map((t) => [t.name, (t.dims ?? []).map(toNumber)]));
    // Per row, a Gemm costs in*out MACs = the element count of its weight; Gather is a copy.
    let macs = 0;
    for (const node of graph.node.filter((n) => n.opType === 'Gemm')) {
      const weight = dims.get(node.input?.[1]);
      if (!weight) throw new Error(`Gemm ${node.name} has no weight initializer`);
      macs += weight[0] * weight[1];
    }
    expect(macs).toBeGreaterThanOrEqual(250_000);
    expect(macs).toBeLessThanOrEqual(500_000);
  });
});
