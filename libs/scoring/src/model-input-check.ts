import { ModelInputError } from '@app/common';
import { elementCount, InputFeeds, ModelMetadata } from './tensor-types';

/**
 * Checks feeds against the model's declared inputs before inference, so a mismatch is a typed
 * error naming the input rather than an opaque onnxruntime failure.
 */
export function checkFeeds(modelId: string, metadata: ModelMetadata, feeds: InputFeeds): void {
  const problems: { path: string; message: string }[] = [];
  // The engine batches along the first dimension: every input must have the same rows.
  let rows: { input: string; count: number } | undefined;
  for (const input of metadata.inputs) {
    const feed = feeds[input.name];
    if (!feed) {
      problems.push({ path: input.name, message: 'missing' });
      continue;
    }
    if (feed.dtype !== input.dtype) {
      problems.push({
        path: input.name,
        message: `dtype ${feed.dtype}, model expects ${input.dtype}`,
      });
    }
    const problem = shapeProblem(input.shape, feed.dims);
    if (problem) problems.push({ path: input.name, message: problem });
    else if (rows && feed.dims[0] !== rows.count) {
      problems.push({
        path: input.name,
        message: `${feed.dims[0]} rows, input '${rows.input}' has ${rows.count}`,
      });
    } else rows ??= { input: input.name, count: feed.dims[0] };
    const expected = elementCount(feed.dims);
    if (feed.data.length !== expected) {
      problems.push({
        path: input.name,
        message: `${feed.data.length} elements for dims [${feed.dims.join(', ')}]`,
      });
    }
  }
  for (const name of Object.keys(feeds)) {
    if (!metadata.inputs.some((input) => input.name === name)) {
      problems.push({ path: name, message: 'not an input of the model' });
    }
  }
  if (problems.length > 0) {
    throw new ModelInputError(
      `model ${modelId}: ${problems.map((p) => `input '${p.path}' ${p.message}`).join('; ')}`,
      problems,
    );
  }
}

function shapeProblem(
  shape: readonly (number | string)[],
  dims: readonly number[],
): string | undefined {
  if (shape.length === 0) return undefined;
  if (shape.length !== dims.length)
    return `rank ${dims.length}, model expects rank ${shape.length}`;
  for (let i = 0; i < shape.length; i++) {
    const want = shape[i];
    if (typeof want === 'number' && want >= 0 && want !== dims[i]) {
      return `dims [${dims.join(', ')}], model expects [${shape.join(', ')}]`;
    }
  }
  return undefined;
}
