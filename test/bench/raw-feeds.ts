/**
 * Random inputs for raw onnxruntime that look like the bundle's own: every model file is read
 * next to its bundle's pipeline.yaml, and each input column gets values in the range its
 * transform produces (hash and cross ids below their bucket count, bucketize ids up to the
 * number of boundaries, dense values in [-1, 1)). So raw runs exercise the same embedding rows
 * and shapes as the service, without the service's feature path.
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { InferenceSession } from 'onnxruntime-node';
import { Tensor } from 'onnxruntime-node';
import { parse } from 'yaml';

export type RawDtype = 'int64' | 'float32';

export interface RawInputSpec {
  name: string;
  dtype: RawDtype;
  /** Per column: ids are drawn from [0, bound); 0 means a dense value in [-1, 1). */
  idBounds: number[];
}

export interface RawModelSpec {
  file: string;
  inputs: RawInputSpec[];
}

export interface RawFeed {
  dtype: RawDtype;
  data: BigInt64Array | Float32Array;
  dims: number[];
}

interface YamlColumn {
  op: string;
  buckets?: number;
  boundaries?: number[];
}
interface YamlModel {
  file: string;
  inputs: Record<string, { dtype: string; columns: YamlColumn[] }>;
}

function idBound(column: YamlColumn): number {
  if (column.op === 'hash' || column.op === 'cross') return column.buckets ?? 1;
  if (column.op === 'bucketize') return (column.boundaries?.length ?? 0) + 1;
  return 0;
}

/** The input layout of each model file, from the pipeline.yaml of the bundle it lives in. */
export function readRawModelSpecs(files: readonly string[]): RawModelSpec[] {
  return files.map((file) => {
    const yamlFile = join(dirname(file), 'pipeline.yaml');
    const bundle = parse(readFileSync(yamlFile, 'utf8')) as { models?: Record<string, YamlModel> };
    const model = Object.values(bundle.models ?? {}).find((m) => m.file === basename(file));
    if (model === undefined) throw new Error(`${yamlFile} declares no model with file ${file}`);
    const inputs = Object.entries(model.inputs).map(([name, input]): RawInputSpec => {
      if (input.dtype !== 'int64' && input.dtype !== 'float32')
        throw new Error(`${file}: input ${name} has dtype ${input.dtype}, not int64/float32`);
      // Float inputs are drawn dense whatever their columns compute: only id ranges matter.
      const bounds = input.columns.map((c) => (input.dtype === 'int64' ? idBound(c) : 0));
      return { name, dtype: input.dtype, idBounds: bounds };
    });
    return { file, inputs };
  });
}

/** Fails unless the session's inputs are exactly the spec's, so no benchmark feeds a wrong shape. */
export function checkSessionInputs(spec: RawModelSpec, session: InferenceSession): void {
  const declared = spec.inputs.map((i) => i.name).sort();
  const actual = [...session.inputNames].sort();
  if (declared.join() !== actual.join())
    throw new Error(`${spec.file}: bundle declares inputs [${declared}], model has [${actual}]`);
}

/** Deterministic feeds of `rows` rows (a seeded LCG: the same seed gives the same rows). */
export function randomFeeds(spec: RawModelSpec, rows: number, seed = 1): Record<string, RawFeed> {
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const feeds: Record<string, RawFeed> = {};
  for (const input of spec.inputs) {
    const width = input.idBounds.length;
    const dims = [rows, width];
    if (input.dtype === 'int64') {
      const data = new BigInt64Array(rows * width);
      // Low words through an Int32Array view: ids are small and non-negative.
      const low = new Int32Array(data.buffer);
      for (let i = 0; i < rows * width; i++)
        low[2 * i] = Math.floor(next() * Math.max(1, input.idBounds[i % width]));
      feeds[input.name] = { dtype: 'int64', data, dims };
    } else {
      const data = new Float32Array(rows * width);
      for (let i = 0; i < data.length; i++) data[i] = next() * 2 - 1;
      feeds[input.name] = { dtype: 'float32', data, dims };
    }
  }
  return feeds;
}

/** randomFeeds as onnxruntime tensors, ready for `session.run`. */
export function randomTensors(spec: RawModelSpec, rows: number, seed = 1): Record<string, Tensor> {
  const tensors: Record<string, Tensor> = {};
  for (const [name, f] of Object.entries(randomFeeds(spec, rows, seed)))
    tensors[name] = new Tensor(f.dtype, f.data, f.dims);
  return tensors;
}
