import {
  FeatureEntity,
  featureRecordProblem,
  FeatureRow,
  FeatureValue,
  isFeatureValue,
  ownValue,
} from '../feature-row';
import { TS_FIELD } from '../redis/feature-blob';

/**
 * One real-time feature update, the JSON value of a message on FEATURE_UPDATES_TOPIC:
 * `{"entity":"user"|"item","id":"...","fields":{"name":value,...},"timestamp":<ms>}`. The message
 * key should be `<entity>:<id>`, so one entity's updates stay ordered in one partition.
 * `timestamp` (ms since epoch) is optional and defaults to the Kafka message timestamp; a stored
 * row is only overwritten by an update with a newer timestamp.
 */
export interface FeatureUpdate {
  entity: FeatureEntity;
  id: string;
  fields: FeatureRow;
  timestamp: number;
}

/** A field dropped from an otherwise valid update; the rest of the update is applied. */
export interface BadField {
  name: string;
  reason: 'wrong_type' | 'reserved';
}

export type ParsedFeatureUpdate =
  { ok: true; update: FeatureUpdate; badFields: BadField[] } | { ok: false; reason: string };

/** Names a value may not use: the row's own timestamp, and a key that would not survive a copy. */
const RESERVED_FIELDS = new Set([TS_FIELD, '__proto__']);

/**
 * Validates one message value. A message that cannot be understood as an update is refused with
 * the reason (it belongs on the dead-letter topic); a field of the wrong type only drops that field.
 */
export function parseFeatureUpdate(
  value: Buffer | null,
  kafkaTimestamp: string | number | undefined,
): ParsedFeatureUpdate {
  if (value === null || value.length === 0) return refuse('empty message value');
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch (error) {
    return refuse(`not JSON (${(error as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    return refuse('not a JSON object');
  const message = parsed as Record<string, unknown>;
  const problem = featureRecordProblem(message);
  if (problem) return refuse(problem);
  const { entity, id, fields } = message as unknown as FeatureUpdate;
  const ownTimestamp = ownValue(message, 'timestamp');
  const timestamp = ownTimestamp === undefined ? kafkaTime(kafkaTimestamp) : ownTimestamp;
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp) || timestamp < 0) {
    return refuse(
      ownTimestamp === undefined
        ? 'no timestamp, and the Kafka message timestamp is not usable'
        : 'timestamp must be a finite number >= 0 (ms since epoch)',
    );
  }
  const row: Record<string, FeatureValue> = {};
  const badFields: BadField[] = [];
  for (const [name, fieldValue] of Object.entries(fields)) {
    if (RESERVED_FIELDS.has(name)) badFields.push({ name, reason: 'reserved' });
    // -0 is written to Redis as 0 (JSON.stringify), so the cache must hold 0 as well.
    else if (isFeatureValue(fieldValue)) row[name] = fieldValue === 0 ? 0 : fieldValue;
    else badFields.push({ name, reason: 'wrong_type' });
  }
  return { ok: true, update: { entity, id, fields: row, timestamp }, badFields };
}

/** kafkajs gives the message timestamp as a string of ms; -1 means the producer set none. */
function kafkaTime(timestamp: string | number | undefined): number {
  if (typeof timestamp === 'number') return timestamp;
  return timestamp === undefined || timestamp.trim() === '' ? NaN : Number(timestamp);
}

function refuse(reason: string): ParsedFeatureUpdate {
  return { ok: false, reason };
}
