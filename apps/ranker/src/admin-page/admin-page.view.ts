import type { ErrorDetail } from '@app/common';

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

export type VersionState = 'loading' | 'warming' | 'serving' | 'failed' | 'draining';

export interface VersionView {
  version: string;
  state: VersionState;
  /** Why the version failed, each with its YAML path where it has one; empty unless failed. */
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
  stable: string;
  canary?: { version: string; share: number };
  experiments: ExperimentView[];
  /** Scores a share of the requests off the response path; never answers a caller. */
  shadow?: { version: string; share: number };
}

/** An A/B experiment: users are bucketed by a hash of their id salted per experiment. */
export interface ExperimentView {
  name: string;
  arms: { arm: string; version: string; share: number }[];
}

export interface CanaryHealthView {
  version: string;
  /** The window the figures cover. */
  windowSeconds: number;
  stable: ArmHealthView;
  canary: ArmHealthView;
  limits: GuardrailLimitsView;
  guardrail: GuardrailStateView;
}

export interface ArmHealthView {
  requests: number;
  errorRate: number;
  p99Ms: number;
}

/** The canary is rolled back once it crosses either limit with at least `minRequests`. */
export interface GuardrailLimitsView {
  /** Largest error rate the canary may have above stable's, as a fraction (0.01 = 1 point). */
  maxErrorRateIncrease: number;
  /** Largest canary p99 as a multiple of stable's. */
  maxP99Ratio: number;
  minRequests: number;
}

export type GuardrailStateView =
  { state: 'ok' } | { state: 'rolled back'; reason: string; at: Date };

/** How the shadow version's ranking of the same requests differed from what was served. */
export interface ShadowDiffView {
  version: string;
  /** Requests scored by both. */
  requests: number;
  /** Requests the shadow failed to score (never seen by a caller). */
  errors: number;
  k: number;
  /** Mean rank correlation of the two top-K lists, -1 to 1. */
  rankCorrelation: number;
  /** Mean share of the served top-K that the shadow's top-K also holds, 0 to 1. */
  overlapAtK: number;
  meanScoreDelta: number;
  maxScoreDelta: number;
}
