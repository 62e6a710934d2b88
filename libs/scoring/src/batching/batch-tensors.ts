import { WireTensor } from '../worker/worker-protocol';
import { OutputTensors, rowWidth } from '../tensor-types';
import { Slice } from './pending-request';
import { TensorBufferPool } from './tensor-buffer-pool';

/**
 * Joins the slices of a batch into one tensor per input. A batch that is exactly one whole
 * request hands over that request's own buffers; otherwise each slice is one block copy into a
 * buffer from `buffers` (longer than the tensor: `dims` say how much of it is filled).
 */
export function assembleFeeds(
  slices: readonly Slice[],
  rows: number,
  buffers: TensorBufferPool,
): Record<string, WireTensor> {
  const first = slices[0];
  const whole = slices.length === 1 && first.start === 0 && first.end === first.request.rows;
  const feeds: Record<string, WireTensor> = {};
  for (const [name, feed] of Object.entries(first.request.feeds)) {
    const width = rowWidth(feed.dims);
    const tail = feed.dims.slice(1);
    // The worker reads as much of a buffer as `dims` say: an engine buffer longer than the
    // tensor goes as it is.
    if (whole && feed.data.byteOffset === 0) {
      feeds[name] = {
        dtype: feed.dtype,
        buffer: feed.data.buffer as ArrayBuffer,
        dims: [rows, ...tail],
      };
      continue;
    }
    const length = rows * width;
    const out =
      feed.dtype === 'int64'
        ? new BigInt64Array(buffers.take(length * 8), 0, length)
        : new Float32Array(buffers.take(length * 4), 0, length);
    let at = 0;
    for (const { request, start, end } of slices) {
      const source = request.feeds[name].data;
      if (out instanceof BigInt64Array)
        out.set((source as BigInt64Array).subarray(start * width, end * width), at);
      else out.set((source as Float32Array).subarray(start * width, end * width), at);
      at += (end - start) * width;
    }
    feeds[name] = { dtype: feed.dtype, buffer: out.buffer as ArrayBuffer, dims: [rows, ...tail] };
  }
  return feeds;
}

/** Copies each slice's rows of every output into its request's output arrays. */
export function scatterOutputs(
  outputs: Record<string, WireTensor>,
  slices: readonly Slice[],
): void {
  const first = slices[0];
  const whole = slices.length === 1 && first.start === 0 && first.end === first.request.rows;
  let offset = 0;
  for (const { request, start, end } of slices) {
    if (!request.settled) {
      request.outputs ??= {};
      for (const [name, wire] of Object.entries(outputs)) {
        const data = new Float32Array(wire.buffer);
        const width = rowWidth(wire.dims);
        if (whole) {
          request.outputs[name] = { data, dims: wire.dims };
          continue;
        }
        const target = (request.outputs[name] ??= {
          data: new Float32Array(request.rows * width),
          dims: [request.rows, ...wire.dims.slice(1)],
        }) as OutputTensors[string];
        target.data.set(
          data.subarray(offset * width, (offset + end - start) * width),
          start * width,
        );
      }
    }
    offset += end - start;
  }
}
