import { readFile } from 'node:fs/promises';
import { FeatureEntity, featureRecordProblem, FeatureRow, isFeatureValue } from './feature-row';

export interface FeatureRecord {
  entity: FeatureEntity;
  id: string;
  fields: FeatureRow;
}

/**
 * Reads a JSON-lines feature file: one `{"entity":"user"|"item","id":"...","fields":{...}}` per
 * line. A bad line stops loading with its line number, so a broken seed file fails at boot.
 */
export async function readFeatureFile(path: string): Promise<FeatureRecord[]> {
  const text = await readFile(path, 'utf8');
  const records: FeatureRecord[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    records.push(parseFeatureLine(line, `${path}:${index + 1}`));
  });
  return records;
}

export function parseFeatureLine(line: string, where: string): FeatureRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    throw new Error(`${where}: not JSON (${(error as Error).message})`, { cause: error });
  }
  if (parsed === null || typeof parsed !== 'object') throw new Error(`${where}: not an object`);
  const problem = featureRecordProblem(parsed as Record<string, unknown>);
  if (problem) throw new Error(`${where}: ${problem}`);
  const record = parsed as FeatureRecord;
  for (const [name, value] of Object.entries(record.fields)) {
    // Kept as an own key by JSON.parse, but lost (or a prototype) once a row is copied.
    if (name === '__proto__') throw new Error(`${where}: fields.__proto__ is a reserved name`);
    if (!isFeatureValue(value))
      throw new Error(`${where}: fields.${name} must be a string, finite number or boolean`);
  }
  return { entity: record.entity, id: record.id, fields: record.fields };
}
