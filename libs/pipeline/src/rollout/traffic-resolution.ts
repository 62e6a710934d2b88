import { ErrorDetail } from '@app/common';
import { TrafficConfig } from './traffic-config';
import { TrafficFile } from './traffic-file';
import { readTrafficConfig } from './traffic-schema';
import { TrafficOverrideState } from './traffic-store';

/** Where the traffic config in force came from. */
export type TrafficSource = 'override' | 'file' | 'default';

/** The traffic config a scene serves by, and why. */
export interface TrafficResolution {
  config: TrafficConfig;
  source: TrafficSource;
  /** The store's revision of the scene (0: never overridden). */
  revision: number;
  /**
   * True when the config in force is the one from before: the source that should be in force
   * is invalid, so what served keeps serving (see `problems`).
   */
  kept: boolean;
  /** Every source found invalid, with its problems (the admin API shows them). */
  problems: { source: 'override' | 'file'; errors: ErrorDetail[] }[];
  /** An override is set and traffic.yaml changed (or appeared, or went) since it was written. */
  fileChangedSinceOverride: boolean;
}

export interface TrafficResolutionInput {
  /** The versions the scene can serve now. */
  versions: Iterable<string>;
  /** The version serving when neither an override nor traffic.yaml says: the newest valid one. */
  newest: string;
  /** The scene's traffic.yaml, if it has one (loadTrafficFile). */
  file?: TrafficFile;
  /** The scene's override state (TrafficStore). */
  override?: TrafficOverrideState;
  /** What the scene served by until now. */
  previous?: TrafficResolution;
}

/**
 * Decides the traffic config a scene serves by. The rule:
 *
 * 1. An override, while one is set, wins over traffic.yaml, whatever the file says and however
 *    often it changes, until the override is cleared (admin API). Every replica reads the same
 *    Redis key, so all of them agree; file times (which differ between replicas) play no part.
 *    `fileChangedSinceOverride` tells the admin that the file moved underneath.
 * 2. Else traffic.yaml, when the scene has one.
 * 3. Else the default: the newest valid version serves everyone (as without rollout).
 *
 * The source that should be in force is validated against the versions the scene has now. When
 * it is invalid, what served before keeps serving (if its versions are all still there), so a
 * bad edit or an override naming a version that is gone disturbs nothing; failing that, the
 * next valid source in the order above serves. Pure.
 */
export function resolveTraffic(input: TrafficResolutionInput): TrafficResolution {
  const versions = new Set(input.versions);
  const { file, override, previous } = input;
  const problems: TrafficResolution['problems'] = [];
  const candidates: { source: TrafficSource; config?: TrafficConfig }[] = [];
  const consider = (source: 'override' | 'file', raw: unknown, errors: ErrorDetail[]) => {
    const reading = errors.length > 0 ? { errors } : readTrafficConfig(raw, versions);
    if (reading.errors.length > 0) problems.push({ source, errors: reading.errors });
    candidates.push({ source, config: reading.config });
  };
  if (override?.override || override?.errors)
    consider('override', override.override?.config, override.errors ?? []);
  if (file) consider('file', file.config, file.errors);
  candidates.push({ source: 'default', config: { stable: input.newest, experiments: [] } });

  const set = override?.override;
  const base = {
    revision: override?.revision ?? 0,
    problems,
    fileChangedSinceOverride: set !== undefined && set.fileDigest !== file?.digest,
  };
  const [wanted] = candidates;
  if (wanted.config) return { ...base, config: wanted.config, source: wanted.source, kept: false };
  const before = previous && readTrafficConfig(previous.config, versions).config;
  if (previous && before) return { ...base, config: before, source: previous.source, kept: true };
  const next = candidates.find((c) => c.config) as { source: TrafficSource; config: TrafficConfig };
  return { ...base, config: next.config, source: next.source, kept: false };
}
