import { FeatureFrame } from '../transforms/feature-frame';
import { PipelineMetrics } from '../pipeline.metrics';

interface Warnings {
  warn(message: string): void;
}

/**
 * The frame's onBadValue for one request: counts each unusable value once (a feature read by
 * several columns is reported by each) and logs it, throttled, naming the request, source,
 * entity and feature. The set of values seen is made only when a request has one.
 */
export function badValueReport(
  metrics: PipelineMetrics,
  warnings: Warnings,
  labels: { scene: string; version: string },
  request: { requestId?: string; userId: string; itemIds: readonly string[] },
): NonNullable<FeatureFrame['onBadValue']> {
  let seen: Set<string> | undefined;
  return (source, layer, row, feature) => {
    const id = source === 'item' ? request.itemIds[row] : source === 'user' ? request.userId : '-';
    const key = `${source}\u0000${layer}\u0000${id}\u0000${feature}`;
    seen ??= new Set();
    if (seen.has(key)) return;
    seen.add(key);
    metrics.badValues.inc({ ...labels, source, reason: 'wrong_type' });
    const next =
      layer === 'request' && source !== 'context' ? 'stored value or default' : 'default';
    warnings.warn(
      `requestId=${request.requestId ?? '-'}: ${layer} ${source} ${id} feature ${feature} is unusable (wrong type, or not finite in a column); ${next} used`,
    );
  };
}
