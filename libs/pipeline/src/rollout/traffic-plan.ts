import { TrafficConfig } from './traffic-config';
import { bucketsOf, UserBuckets } from './user-bucket';

/** A shadow run asked for by a choice: score the same request with `version`, off the path. */
export interface ShadowChoice {
  readonly version: string;
  /** Items to compare; undefined: as many as the response returned. */
  readonly topK?: number;
}

/** Which version serves a user, and in which role. */
export interface TrafficChoice {
  readonly version: string;
  /** `stable`, `canary` or `<experiment>:<arm>`: what the response names as its arm. */
  readonly arm: string;
  /** Present when this user's requests are also scored by the shadow version. */
  readonly shadow?: ShadowChoice;
}

/** A choice made ahead of time, with and without the shadow, so `choose` allocates nothing. */
interface Outcome {
  plain: TrafficChoice;
  shadowed: TrafficChoice;
}

interface PlannedExperiment {
  name: string;
  buckets: UserBuckets;
  /** Upper bucket bound (exclusive) of each arm, cumulative in arm order. */
  bounds: number[];
  armNames: string[];
  outcomes: Outcome[];
}

/**
 * Picks, per user, the version that serves them, from a validated TrafficConfig. Pure and
 * deterministic: the same user gets the same choice from every replica and after every
 * restart, as long as the config is the same.
 *
 * Precedence: the experiments in their listed order (the first whose arm holds the user serves
 * them), then the canary, then stable. Experiments come first so that moving the canary never
 * moves users between experiment arms mid-experiment. Each experiment hashes the user id with its
 * own salt, so which arm a user holds in one experiment says nothing of the arm they hold in
 * another; an arm's `share` is of all users, and a later experiment or the canary is served
 * only to the users that no earlier one claimed.
 *
 * The canary takes `percent` of the users left by the experiments (salted `canary:<version>`:
 * raising the percent only adds users, and a new canary version draws new users). The shadow
 * is chosen independently of all that (salted `shadow:<version>`).
 */
export class TrafficPlan {
  private readonly experiments: PlannedExperiment[];
  private readonly canary?: { buckets: UserBuckets; bound: number; outcome: Outcome };
  private readonly stable: Outcome;
  private readonly shadow?: { buckets: UserBuckets; bound: number };

  constructor(readonly config: TrafficConfig) {
    const shadowChoice: ShadowChoice | undefined = config.shadow && {
      version: config.shadow.version,
      ...(config.shadow.topK !== undefined && { topK: config.shadow.topK }),
    };
    const outcome = (version: string, arm: string): Outcome => ({
      plain: { version, arm },
      shadowed: shadowChoice ? { version, arm, shadow: shadowChoice } : { version, arm },
    });
    this.stable = outcome(config.stable, 'stable');
    if (config.canary) {
      const { version, percent } = config.canary;
      this.canary = {
        buckets: new UserBuckets(`canary:${version}`),
        bound: bucketsOf(percent),
        outcome: outcome(version, 'canary'),
      };
    }
    if (config.shadow) {
      this.shadow = {
        buckets: new UserBuckets(`shadow:${config.shadow.version}`),
        bound: bucketsOf(config.shadow.percent),
      };
    }
    this.experiments = config.experiments.map((experiment) => {
      let total = 0;
      return {
        name: experiment.name,
        buckets: new UserBuckets(experiment.salt),
        bounds: experiment.arms.map((arm) => (total += bucketsOf(arm.share))),
        armNames: experiment.arms.map((arm) => arm.name),
        outcomes: experiment.arms.map((arm) =>
          outcome(arm.version, `${experiment.name}:${arm.name}`),
        ),
      };
    });
  }

  /** The version serving `userId`, the arm it serves as, and the shadow run if any. */
  choose(userId: string): TrafficChoice {
    const outcome = this.serving(userId);
    return this.shadow && this.shadow.buckets.bucketOf(userId) < this.shadow.bound
      ? outcome.shadowed
      : outcome.plain;
  }

  /**
   * The arm `userId` holds in experiment `name` whether or not an earlier experiment claimed
   * them first; undefined when the user falls in none of its arms or there is no such experiment.
   */
  armOf(name: string, userId: string): string | undefined {
    const experiment = this.experiments.find((e) => e.name === name);
    if (!experiment) return undefined;
    const arm = armIndex(experiment, experiment.buckets.bucketOf(userId));
    return arm < 0 ? undefined : experiment.armNames[arm];
  }

  /** Every version this plan may serve or shadow: the ones a registry must keep loaded. */
  versions(): Set<string> {
    const { stable, canary, experiments, shadow } = this.config;
    const all = new Set([stable, ...experiments.flatMap((e) => e.arms.map((a) => a.version))]);
    if (canary) all.add(canary.version);
    if (shadow) all.add(shadow.version);
    return all;
  }

  private serving(userId: string): Outcome {
    for (const experiment of this.experiments) {
      const arm = armIndex(experiment, experiment.buckets.bucketOf(userId));
      if (arm >= 0) return experiment.outcomes[arm];
    }
    if (this.canary && this.canary.buckets.bucketOf(userId) < this.canary.bound)
      return this.canary.outcome;
    return this.stable;
  }
}

function armIndex(experiment: PlannedExperiment, bucket: number): number {
  const { bounds } = experiment;
  for (let i = 0; i < bounds.length; i++) if (bucket < bounds[i]) return i;
  return -1;
}
