import { ErrorDetail } from '@app/common';
import { ModelMetadata } from '@app/scoring';
import { ModelSpec } from './bundle-definition';

/**
 * Compares what a bundle declares for a model with what the ONNX file itself says: input names,
 * dtypes, column counts, outputs of width 1, and, for runs in parts (`maxRunRows`), every output
 * batched along its first dimension. Errors carry the pipeline.yaml path.
 */
export function checkModelContract(model: ModelSpec, metadata: ModelMetadata): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  const path = `models.${model.name}`;
  for (const declared of model.inputs) {
    const actual = metadata.inputs.find((i) => i.name === declared.name);
    const at = `${path}.inputs.${declared.name}`;
    if (!actual) {
      errors.push({
        path: at,
        message: `model has no input '${declared.name}' (inputs: ${names(metadata.inputs)})`,
      });
      continue;
    }
    if (actual.dtype !== declared.dtype) {
      errors.push({
        path: `${at}.dtype`,
        message: `model input is ${actual.dtype}, bundle declares ${declared.dtype}`,
      });
    }
    if (actual.shape.length !== 2) {
      errors.push({
        path: at,
        message: `model input has shape [${actual.shape.join(', ')}]; expected [batch, columns]`,
      });
    } else if (
      typeof actual.shape[1] === 'number' &&
      actual.shape[1] >= 0 &&
      actual.shape[1] !== declared.columns.length
    ) {
      errors.push({
        path: `${at}.columns`,
        message: `${declared.columns.length} columns declared, model expects ${actual.shape[1]}`,
      });
    }
  }
  for (const actual of metadata.inputs) {
    if (!model.inputs.some((i) => i.name === actual.name)) {
      errors.push({
        path: `${path}.inputs`,
        message: `model input '${actual.name}' is not declared`,
      });
    }
  }
  model.outputs.forEach((output, index) => {
    const actual = metadata.outputs.find((o) => o.name === output);
    const at = `${path}.outputs[${index}]`;
    if (!actual) {
      errors.push({
        path: at,
        message: `model has no output '${output}' (outputs: ${names(metadata.outputs)})`,
      });
    } else if (actual.dtype !== 'float32') {
      errors.push({ path: at, message: `output is ${actual.dtype}; scores must be float32` });
    } else if (actual.shape.length > 2 || (actual.shape.length === 2 && actual.shape[1] !== 1)) {
      errors.push({
        path: at,
        message: `output shape [${actual.shape.join(', ')}] is not one score per row`,
      });
    }
  });
  if (model.maxRunRows !== undefined && model.maxRunRows > 0) {
    // Parts' outputs are joined along the first dimension: an output without a batch dimension
    // (declared or not, the engine receives every output) would fail every batch larger than
    // maxRunRows, which a small dry run would not show.
    for (const actual of metadata.outputs) {
      if (!isBatchedOutput(actual.shape)) {
        errors.push({
          path: `${path}.maxRunRows`,
          message: `output '${actual.name}' has shape [${actual.shape.join(', ')}]: runs in parts need every output to have the batch as its first dimension (or maxRunRows 0)`,
        });
      }
    }
  }
  return errors;
}

/** A first dimension that is the batch: symbolic (a name, or -1), never a fixed size or absent. */
function isBatchedOutput(shape: readonly (number | string)[]): boolean {
  if (shape.length === 0) return false;
  const first = shape[0];
  return typeof first === 'string' || first < 0;
}

function names(specs: { name: string }[]): string {
  return specs.map((s) => s.name).join(', ');
}
