/** A feature value as stored and as sent by callers; the bundle's transforms decide how it is used. */
export type FeatureValue = string | number | boolean;

/** One entity's features by name. */
export type FeatureRow = Readonly<Record<string, FeatureValue>>;

export type FeatureEntity = 'user' | 'item';

export function isFeatureValue(value: unknown): value is FeatureValue {
  return (
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}
