/** Element types the engine accepts for model inputs; ranking models take ids and dense floats. */
export type InputDtype = 'float32' | 'int64';

/** A model input as the pipeline builds it: rows x columns, row-major, in a plain ArrayBuffer. */
export interface InputTensor {
  dtype: InputDtype;
  data: Float32Array | BigInt64Array;
  dims: readonly number[];
}

export type InputFeeds = Record<string, InputTensor>;

/** Elements of a tensor of `dims` (1 for a scalar). */
export function elementCount(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

/** Elements of one row of a tensor of `dims` (rows first): the product of the other dimensions. */
export function rowWidth(dims: readonly number[]): number {
  let width = 1;
  for (let i = 1; i < dims.length; i++) width *= dims[i];
  return width;
}

/** Model outputs by name, each flattened to rows x width float32. */
export type OutputTensors = Record<string, { data: Float32Array; dims: readonly number[] }>;

export interface TensorSpec {
  name: string;
  dtype: string;
  /** Numbers for fixed dimensions, strings (or -1) for symbolic ones such as the batch. */
  shape: readonly (number | string)[];
}

export interface ModelMetadata {
  inputs: TensorSpec[];
  outputs: TensorSpec[];
}
