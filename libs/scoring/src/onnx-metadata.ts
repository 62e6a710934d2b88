import type { InferenceSession } from 'onnxruntime-node';
import { ModelMetadata, TensorSpec } from './tensor-types';

/** Reads input/output names, dtypes and shapes from a loaded session. */
export function readModelMetadata(session: InferenceSession): ModelMetadata {
  const toSpec = (meta: InferenceSession.ValueMetadata): TensorSpec =>
    meta.isTensor
      ? { name: meta.name, dtype: meta.type, shape: [...meta.shape] }
      : { name: meta.name, dtype: 'non-tensor', shape: [] };
  return { inputs: session.inputMetadata.map(toSpec), outputs: session.outputMetadata.map(toSpec) };
}
