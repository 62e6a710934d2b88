/**
 * The typed form of a scene's `traffic.yaml` (or of a run-time override of it), produced only by
 * `readTrafficConfig`. Its JSON is itself a valid traffic config: `JSON.stringify` of a
 * TrafficConfig reads back to the same TrafficConfig, which is how overrides are stored.
 * Percentages and shares are of all users, from 0 to 100, in steps of 0.01.
 */
export interface TrafficConfig {
  /** The version every user gets unless an experiment or the canary claims them. */
  stable: string;
  canary?: CanaryConfig;
  /** In precedence order: the first experiment whose arm holds a user serves that user. */
  experiments: ExperimentConfig[];
  shadow?: ShadowConfig;
}

export interface CanaryConfig {
  version: string;
  /** Share of the users no experiment claimed; below 100, so stable always has a comparison. */
  percent: number;
  guardrail: GuardrailConfig;
}

/**
 * When the canary is rolled back: over the last `window` seconds, once both canary and stable
 * have `minRequests` outcomes, any set limit crossed rolls it back. The error-rate limits also
 * wait for `minErrors` canary errors, so a handful of failures never decides.
 */
export interface GuardrailConfig {
  /** Seconds of outcomes compared. */
  window: number;
  /** Outcomes each of canary and stable needs in the window before anything is decided. */
  minRequests: number;
  /** Canary errors the window needs before an error-rate limit is checked. */
  minErrors: number;
  /** Rolled back when canary error rate - stable error rate exceeds this (0-1). */
  maxErrorRateDelta?: number;
  /** Rolled back when canary error rate exceeds this times the stable error rate. */
  maxErrorRatio?: number;
  /** Rolled back when canary p99 latency exceeds this times the stable p99. */
  maxP99Ratio?: number;
}

export interface ExperimentConfig {
  name: string;
  /** Hashed with the user id; a different salt per experiment keeps experiments independent. */
  salt: string;
  /** Laid out in order over the experiment's 10,000 buckets; shares sum to 100 at most. */
  arms: ArmConfig[];
}

export interface ArmConfig {
  name: string;
  version: string;
  share: number;
}

export interface ShadowConfig {
  version: string;
  /** Share of requests (by user) also scored by the shadow; default 100. */
  percent: number;
  /** Items compared; absent: as many as the response returned. */
  topK?: number;
}

/** The guardrail a canary gets when traffic.yaml names none. */
export const DEFAULT_GUARDRAIL: Readonly<GuardrailConfig> = Object.freeze({
  window: 300,
  minRequests: 100,
  minErrors: 5,
  maxErrorRateDelta: 0.02,
  maxP99Ratio: 1.5,
});

/** The same config without its canary: what a rollback leaves serving. */
export function withoutCanary(config: TrafficConfig): TrafficConfig {
  const rest = { ...config };
  delete rest.canary;
  return rest;
}
