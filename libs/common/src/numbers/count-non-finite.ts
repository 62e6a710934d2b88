/** How many values are NaN or infinite (model outputs, fused scores). */
export function countNonFinite(values: Float32Array): number {
  let count = 0;
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) count++;
  return count;
}
