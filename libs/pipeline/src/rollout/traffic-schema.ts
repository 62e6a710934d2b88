import { ErrorDetail } from '@app/common';
import { join, SpecReader } from '../bundle/spec-reader';
import {
  ArmConfig,
  CanaryConfig,
  DEFAULT_GUARDRAIL,
  ExperimentConfig,
  GuardrailConfig,
  ShadowConfig,
  TrafficConfig,
} from './traffic-config';
import { TrafficInvalidError } from './traffic-errors';

/** Experiment and arm names: they end up in response fields and metric labels. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const MAX_SALT_LENGTH = 256;
const MAX_EXPERIMENTS = 16;
const MAX_ARMS = 16;
const MAX_SHADOW_TOP_K = 100_000;
/** Versions listed in an error message; a scene with more says how many were left out. */
const LISTED_VERSIONS = 20;

/** A traffic config read as far as it goes. */
export interface TrafficConfigReading {
  /** Present only when `errors` is empty. */
  config?: TrafficConfig;
  /** Every problem found, with its path (`experiments[1].arms[0].share`). */
  errors: ErrorDetail[];
}

/**
 * Validates a parsed traffic config (traffic.yaml or the JSON of an override) against the
 * versions the scene has. Every problem is reported at once, each with its path: unknown keys,
 * types and ranges, shares over 100, duplicate names or salts, versions the scene lacks, and a
 * version given two roles that conflict (see README: the canary is neither stable nor an
 * experiment arm; the shadow serves no one).
 */
export function readTrafficConfig(raw: unknown, versions: Iterable<string>): TrafficConfigReading {
  const r = new VersionedReader(versions);
  const root = r.object(raw, '', ['stable', 'canary', 'experiments', 'shadow']) ?? {};
  const stable = r.version(root.stable, 'stable');
  const canary = root.canary === undefined ? undefined : readCanary(r, root.canary);
  const experiments = root.experiments === undefined ? [] : readExperiments(r, root.experiments);
  const shadow = root.shadow === undefined ? undefined : readShadow(r, root.shadow);
  checkRoles(r, { stable, canary, experiments, shadow });
  if (r.errors.length > 0 || stable === undefined) return { errors: r.errors };
  const config: TrafficConfig = { stable, experiments };
  if (canary) config.canary = canary;
  if (shadow) config.shadow = shadow;
  return { config, errors: [] };
}

/** `readTrafficConfig`, throwing TrafficInvalidError (naming `where`) on any problem. */
export function parseTrafficConfig(
  raw: unknown,
  versions: Iterable<string>,
  where: string,
): TrafficConfig {
  const { config, errors } = readTrafficConfig(raw, versions);
  if (!config) throw new TrafficInvalidError(where, errors);
  return config;
}

class VersionedReader extends SpecReader {
  private readonly versions: ReadonlySet<string>;

  constructor(versions: Iterable<string>) {
    super();
    this.versions = new Set(versions);
  }

  version(value: unknown, path: string): string | undefined {
    const text = this.string(value, path);
    if (text === undefined || this.versions.has(text)) return text;
    const known = [...this.versions].sort();
    const listed = known.slice(0, LISTED_VERSIONS).join(', ');
    const more =
      known.length > LISTED_VERSIONS ? ` and ${known.length - LISTED_VERSIONS} more` : '';
    return this.fail(
      path,
      `'${text}' is not a version of this scene (available: ${listed || 'none'}${more})`,
    );
  }

  /** A percentage of users: 0 to `max`, in steps of 0.01 (the buckets are 10,000). */
  percent(value: unknown, path: string, max = 100): number | undefined {
    const n = this.number(value, path, { min: 0, max });
    if (n !== undefined && Math.abs(n * 100 - Math.round(n * 100)) > 1e-9)
      return this.fail(path, `must be a multiple of 0.01, got ${n}`);
    return n;
  }

  list(value: unknown, path: string, { min, max }: { min: number; max: number }): unknown[] {
    const list = this.array(value, path, { min }) ?? [];
    if (list.length > max) {
      this.fail(path, `must have at most ${max} entries, got ${list.length}`);
      return [];
    }
    return list;
  }
}

function readCanary(r: VersionedReader, value: unknown): CanaryConfig | undefined {
  const obj = r.object(value, 'canary', ['version', 'percent', 'guardrail']);
  if (!obj) return undefined;
  const version = r.version(obj.version, 'canary.version');
  const percent = r.percent(obj.percent, 'canary.percent');
  if (percent === 100) {
    r.fail(
      'canary.percent',
      'must be below 100: a canary needs stable traffic to be compared with (to promote it, make it stable)',
    );
  }
  const guardrail =
    obj.guardrail === undefined ? { ...DEFAULT_GUARDRAIL } : readGuardrail(r, obj.guardrail);
  return version !== undefined && percent !== undefined && guardrail
    ? { version, percent, guardrail }
    : undefined;
}

const LIMITS = ['maxErrorRateDelta', 'maxErrorRatio', 'maxP99Ratio'] as const;

function readGuardrail(r: VersionedReader, value: unknown): GuardrailConfig | undefined {
  const path = 'canary.guardrail';
  const obj = r.object(value, path, ['window', 'minRequests', 'minErrors', ...LIMITS]);
  if (!obj) return undefined;
  const int = (key: string, fallback: number, min: number, max: number) =>
    obj[key] === undefined
      ? fallback
      : r.number(obj[key], join(path, key), { min, max, integer: true });
  const guardrail: Partial<GuardrailConfig> = {
    window: int('window', DEFAULT_GUARDRAIL.window, 10, 86_400),
    minRequests: int('minRequests', DEFAULT_GUARDRAIL.minRequests, 1, 1e9),
    minErrors: int('minErrors', DEFAULT_GUARDRAIL.minErrors, 1, 1e9),
  };
  const bounds = {
    maxErrorRateDelta: { min: 0, max: 1 },
    maxErrorRatio: { min: 1 },
    maxP99Ratio: { min: 1 },
  };
  for (const key of LIMITS) {
    if (obj[key] !== undefined) guardrail[key] = r.number(obj[key], join(path, key), bounds[key]);
  }
  if (LIMITS.every((key) => obj[key] === undefined))
    r.fail(path, `must set at least one of ${LIMITS.join(', ')}`);
  return Object.values(guardrail).every((v) => v !== undefined)
    ? (guardrail as GuardrailConfig)
    : undefined;
}

function readExperiments(r: VersionedReader, value: unknown): ExperimentConfig[] {
  const names = new Map<string, string>();
  const salts = new Map<string, string>();
  const experiments: ExperimentConfig[] = [];
  r.list(value, 'experiments', { min: 0, max: MAX_EXPERIMENTS }).forEach((item, i) => {
    const path = `experiments[${i}]`;
    const obj = r.object(item, path, ['name', 'salt', 'arms']);
    if (!obj) return;
    const name = unique(r, names, r.string(obj.name, `${path}.name`, NAME), `${path}.name`);
    const salt = r.string(obj.salt, `${path}.salt`);
    if (salt !== undefined && salt.length > MAX_SALT_LENGTH)
      r.fail(`${path}.salt`, `must be at most ${MAX_SALT_LENGTH} characters`);
    unique(r, salts, salt, `${path}.salt`, 'experiments with one salt would split users alike');
    const arms = readArms(r, obj.arms, `${path}.arms`);
    if (name !== undefined && salt !== undefined && arms) experiments.push({ name, salt, arms });
  });
  return experiments;
}

function readArms(r: VersionedReader, value: unknown, path: string): ArmConfig[] | undefined {
  const names = new Map<string, string>();
  const arms: ArmConfig[] = [];
  let total = 0;
  const list = r.list(value, path, { min: 1, max: MAX_ARMS });
  list.forEach((item, j) => {
    const armPath = `${path}[${j}]`;
    const obj = r.object(item, armPath, ['name', 'version', 'share']);
    if (!obj) return;
    const name = unique(r, names, r.string(obj.name, `${armPath}.name`, NAME), `${armPath}.name`);
    const version = r.version(obj.version, `${armPath}.version`);
    const share = r.percent(obj.share, `${armPath}.share`);
    total += share ?? 0;
    if (name !== undefined && version !== undefined && share !== undefined)
      arms.push({ name, version, share });
  });
  // Rounded to the 0.01 grid: 33.33 + 33.33 + 33.34 is 100, whatever floating point says.
  const sum = Math.round(total * 100) / 100;
  if (sum > 100) r.fail(path, `shares sum to ${sum}, over 100`);
  return arms.length === list.length && list.length > 0 ? arms : undefined;
}

function readShadow(r: VersionedReader, value: unknown): ShadowConfig | undefined {
  const obj = r.object(value, 'shadow', ['version', 'percent', 'topK']);
  if (!obj) return undefined;
  const version = r.version(obj.version, 'shadow.version');
  const percent = obj.percent === undefined ? 100 : r.percent(obj.percent, 'shadow.percent');
  const topK =
    obj.topK === undefined
      ? undefined
      : r.number(obj.topK, 'shadow.topK', { min: 1, max: MAX_SHADOW_TOP_K, integer: true });
  if (version === undefined || percent === undefined) return undefined;
  if (obj.topK !== undefined && topK === undefined) return undefined;
  return topK === undefined ? { version, percent } : { version, percent, topK };
}

/** Records `value` under `seen`, failing at `path` when an earlier entry has it already. */
function unique(
  r: VersionedReader,
  seen: Map<string, string>,
  value: string | undefined,
  path: string,
  why = '',
): string | undefined {
  if (value === undefined) return undefined;
  const first = seen.get(value);
  if (first !== undefined)
    return r.fail(path, `'${value}' is already used at ${first}${why ? `: ${why}` : ''}`);
  seen.set(value, path);
  return value;
}

/**
 * The roles a version may not combine: a canary that is stable compares stable with itself; a
 * canary that is also an arm would keep serving that arm after its rollback; a shadow that
 * serves traffic is not a shadow (it would be compared with itself). Stable may be an arm (the
 * usual control arm), and arms may share versions (an A/A test).
 */
function checkRoles(
  r: VersionedReader,
  config: Partial<Omit<TrafficConfig, 'experiments'>> & { experiments: ExperimentConfig[] },
): void {
  const { stable, canary, experiments, shadow } = config;
  if (canary && canary.version === stable)
    r.fail('canary.version', `'${stable}' is the stable version; a canary must be another one`);
  // A canary that is stable was reported above; its arms (stable's, the control) are fine.
  const canaryVersion = canary?.version === stable ? undefined : canary?.version;
  const armsOf = new Map<string, string>();
  experiments.forEach((experiment, i) =>
    experiment.arms.forEach((arm, j) => {
      const path = `experiments[${i}].arms[${j}].version`;
      if (!armsOf.has(arm.version)) armsOf.set(arm.version, path);
      if (arm.version === canaryVersion)
        r.fail(
          path,
          `'${arm.version}' is the canary; an arm must not serve it (a rollback would leave it serving)`,
        );
    }),
  );
  if (!shadow) return;
  const role =
    shadow.version === stable
      ? 'is the stable version'
      : shadow.version === canary?.version
        ? 'is the canary'
        : armsOf.has(shadow.version)
          ? `serves an arm (${armsOf.get(shadow.version)})`
          : undefined;
  if (role) r.fail('shadow.version', `'${shadow.version}' ${role}; a shadow must serve no traffic`);
}
