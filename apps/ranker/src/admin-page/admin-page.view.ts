import type { ErrorDetail } from '@app/common';
import type { GuardrailConfig } from '@app/pipeline';

/**
 * Everything the /admin status page shows, as plain data. The page renders only this, so the
 * scene registry and the rollout logic are mapped onto it in one place (an AdminPageSource)
 * and the renderer never reaches into either.
 *
 * Rates and shares are fractions (0.02 = 2 %), latencies milliseconds, times Dates.
 */
export interface AdminPageView {
  generatedAt: Date;
  /** The replica that answered (its host name): each replica reports its own state. */
  replica: string;
  scenes: SceneView[];
}

export interface SceneView {
  scene: string;
  /** Every version the registry knows of, newest first. */
  versions: VersionView[];
  /** Absent while no version of the scene serves. */
  traffic?: TrafficView;
  /** Absent when the scene has no canary. */
  canary?: CanaryHealthView;
  /** Absent when the scene has no shadow version. */
  shadow?: ShadowDiffView;
}

/** The registry's states (libs/pipeline VersionState), newest first on the page. */
export type VersionState =
  'incomplete' | 'available' | 'loading' | 'warming' | 'ready' | 'serving' | 'draining' | 'failed';

export interface VersionView {
  version: string;
  state: VersionState;
  /** Why the version failed or is incomplete, each with its YAML path where it has one. */
  reasons: ErrorDetail[];
  /** The load gate's checks, in the order they run. */
  validation: ValidationView[];
}

export type ValidationCheck = 'schema' | 'model contract' | 'dry run' | 'golden';
/** The page's columns, in the order the gate runs the checks. */
export const VALIDATION_CHECKS: readonly ValidationCheck[] = [
  'schema',
  'model contract',
  'dry run',
  'golden',
];
/** `skipped`: the check does not apply (golden without golden.jsonl); `pending`: not run yet. */
export type ValidationOutcome = 'pass' | 'fail' | 'skipped' | 'pending';

export interface ValidationView {
  check: ValidationCheck;
  outcome: ValidationOutcome;
  messages: string[];
}

export interface TrafficView {
  /** Where the split comes from: traffic.yaml, an override (who set it, when), or the default. */
  origin: TrafficOriginView;
  /** Sources found invalid (the split in force is then the last valid one), with their paths. */
  problems: TrafficProblemView[];
  stable: string;
  canary?: { version: string; share: number };
  experiments: ExperimentView[];
  /** Scores a share of the requests off the response path; never answers a caller. */
  shadow?: { version: string; share: number };
}

export type TrafficOriginView =
  | { from: 'file' }
  /** No traffic.yaml, no override: the newest valid version takes all traffic. */
  | { from: 'default' }
  | {
      from: 'override';
      by: string;
      at: Date;
      reason?: string;
      /** traffic.yaml changed since the override was written: the override still wins. */
      fileChangedSince: boolean;
    };

export interface TrafficProblemView {
  source: 'override' | 'file';
  path?: string;
  message: string;
}

/** An A/B experiment: users are bucketed by a hash of their id salted per experiment. */
export interface ExperimentView {
  name: string;
  arms: { arm: string; version: string; share: number }[];
}

export interface CanaryHealthView {
  version: string;
  stableVersion: string;
  stable: ArmHealthView;
  canary: ArmHealthView;
  limits: GuardrailLimitsView;
  guardrail: GuardrailStateView;
}

/** One arm over the guardrail's window; NaN where there is no figure yet (no requests). */
export interface ArmHealthView {
  requests: number;
  errorRate: number;
  p99Ms: number;
}

/**
 * The rollout's guardrail (traffic.yaml `canary.guardrail`): over the last `window` seconds, once
 * both arms have `minRequests`, any set limit crossed rolls the canary back; the error-rate limits
 * also wait for `minErrors` canary errors. An unset limit is not checked.
 */
export type GuardrailLimitsView = GuardrailConfig;

/** `collecting`: too few requests to judge yet; `healthy`: judged and within the limits. */
export type GuardrailStateView =
  | { state: 'collecting' }
  | { state: 'healthy' }
  | { state: 'rolled back'; reason: string; at: Date };

/** How the shadow version's rankings of the same requests differed from what was served. */
export interface ShadowDiffView {
  version: string;
  /** Items compared per request; absent: the whole response. */
  topK?: number;
  /** One row per version that served the compared requests (stable, canary, arms). */
  against: ShadowArmDiffView[];
}

/** Running figures since the replica started comparing; NaN where there is no figure. */
export interface ShadowArmDiffView {
  primary: string;
  comparisons: number;
  /** Shadow runs that produced no comparison, by reason (failed, timed out, shed). */
  failures: { reason: string; count: number }[];
  nonFiniteScores: number;
  /** Mean rank correlation of the two rankings, -1 to 1. */
  rankCorrelation: number;
  /** Mean share of the served top K that the shadow's top K also holds, 0 to 1. */
  overlapAtK: number;
  meanAbsDelta: number;
  maxAbsDelta: number;
}
