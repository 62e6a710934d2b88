import { Injectable } from '@nestjs/common';
import { ErrorDetail } from '@app/common';
import {
  GuardSnapshot,
  SceneListing,
  SceneRegistry,
  SceneTraffic,
  SceneTrafficControl,
  ShadowSummary,
  TrafficConfig,
  VersionListing,
} from '@app/pipeline';
import { access } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AdminPageSource } from './admin-page.source';
import {
  AdminPageView,
  CanaryHealthView,
  SceneView,
  ShadowDiffView,
  TrafficView,
  VALIDATION_CHECKS,
  ValidationCheck,
  ValidationView,
  VersionView,
} from './admin-page.view';

/** The bundle file the golden check reads (libs/pipeline's GOLDEN_FILE). */
const GOLDEN_FILE = 'golden.jsonl';

/**
 * The page from the same sources as `GET /v1/admin/scenes`: the scene registry's listing (every
 * version with its state and reasons) and the rollout (SceneTrafficControl: the traffic in force,
 * the canary's guard, the shadow summaries). Figures are this replica's own.
 */
@Injectable()
export class RegistryAdminPageSource extends AdminPageSource {
  constructor(
    private readonly registry: SceneRegistry,
    private readonly traffic: SceneTrafficControl,
  ) {
    super();
  }

  async view(): Promise<AdminPageView> {
    const scenes = await Promise.all(
      this.registry
        .list()
        .map((listing) => sceneView(listing, this.traffic.describe(listing.scene))),
    );
    scenes.sort((a, b) => a.scene.localeCompare(b.scene));
    return { generatedAt: new Date(), replica: hostname(), scenes };
  }
}

async function sceneView(
  listing: SceneListing,
  rollout: SceneTraffic | undefined,
): Promise<SceneView> {
  const traffic = trafficView(listing, rollout);
  const shadowVersion = rollout?.traffic.config.shadow;
  return {
    scene: listing.scene,
    versions: await Promise.all(listing.versions.map(versionView)),
    ...(traffic && { traffic }),
    ...(rollout?.guard && { canary: canaryView(rollout.guard) }),
    ...(shadowVersion && { shadow: shadowView(shadowVersion, rollout.shadows) }),
  };
}

async function versionView(v: VersionListing): Promise<VersionView> {
  return {
    version: v.version,
    state: v.state,
    reasons: v.reasons,
    validation: await validation(v),
  };
}

/**
 * The gate's checks as far as the listing tells them. A version that reached `warming` passed the
 * whole gate; a failed one failed the checks its reasons belong to (told from their paths), passed
 * those before the first of them and did not run the rest; the others have not been checked here.
 */
async function validation(v: VersionListing): Promise<ValidationView[]> {
  switch (v.state) {
    case 'warming':
    case 'ready':
    case 'serving':
    case 'draining':
      return passedGate(v.dir);
    case 'failed':
      return failedGate(v.reasons);
    case 'loading':
      return allPending('running');
    case 'available':
      return allPending('not loaded on this replica');
    case 'incomplete':
      return allPending('the folder is not complete');
  }
}

async function passedGate(dir: string): Promise<ValidationView[]> {
  const golden = await access(join(dir, GOLDEN_FILE)).then(
    () => true,
    () => false,
  );
  return VALIDATION_CHECKS.map((check) =>
    check === 'golden' && !golden
      ? { check, outcome: 'skipped', messages: [`no ${GOLDEN_FILE} in the bundle`] }
      : { check, outcome: 'pass', messages: [] },
  );
}

function failedGate(reasons: ErrorDetail[]): ValidationView[] {
  const failing = new Set(reasons.map(checkOf));
  const first = VALIDATION_CHECKS.findIndex((c) => failing.has(c));
  return VALIDATION_CHECKS.map((check, i): ValidationView => {
    if (failing.has(check)) {
      const count = reasons.filter((r) => checkOf(r) === check).length;
      return {
        check,
        outcome: 'fail',
        messages: [count === 1 ? '1 problem' : `${count} problems`],
      };
    }
    return i < first
      ? { check, outcome: 'pass', messages: [] }
      : { check, outcome: 'skipped', messages: ['not run'] };
  });
}

/** Which check a reason comes from, by the loader's paths and messages. */
export function checkOf(reason: ErrorDetail): ValidationCheck {
  if (reason.path?.startsWith(GOLDEN_FILE)) return 'golden';
  if (reason.message.startsWith('dry run')) return 'dry run';
  if (reason.path === 'models' || reason.path?.startsWith('models.')) return 'model contract';
  return 'schema';
}

const allPending = (why: string): ValidationView[] =>
  VALIDATION_CHECKS.map((check) => ({ check, outcome: 'pending', messages: [why] }));

function trafficView(
  listing: SceneListing,
  rollout: SceneTraffic | undefined,
): TrafficView | undefined {
  if (!rollout) {
    // The rollout has not read the scene yet: the registry's own rule serves.
    return listing.stable === null
      ? undefined
      : { origin: { from: 'default' }, problems: [], stable: listing.stable, experiments: [] };
  }
  const { config, source, problems, fileChangedSinceOverride } = rollout.traffic;
  const override = rollout.override;
  return {
    origin:
      source === 'override' && override
        ? {
            from: 'override',
            by: override.by,
            at: new Date(override.at),
            ...(override.reason !== undefined && { reason: override.reason }),
            fileChangedSince: fileChangedSinceOverride,
          }
        : { from: source === 'override' ? 'default' : source },
    problems: problems.flatMap(({ source, errors }) =>
      errors.map((e) => ({
        source,
        ...(e.path !== undefined && { path: e.path }),
        message: e.message,
      })),
    ),
    ...splitOf(config),
  };
}

/** traffic.yaml's percentages as the page's fractions. */
function splitOf(config: TrafficConfig): Omit<TrafficView, 'origin' | 'problems'> {
  return {
    stable: config.stable,
    ...(config.canary && {
      canary: { version: config.canary.version, share: config.canary.percent / 100 },
    }),
    experiments: config.experiments.map((e) => ({
      name: e.name,
      arms: e.arms.map((a) => ({ arm: a.name, version: a.version, share: a.share / 100 })),
    })),
    ...(config.shadow && {
      shadow: { version: config.shadow.version, share: config.shadow.percent / 100 },
    }),
  };
}

function canaryView(guard: GuardSnapshot): CanaryHealthView {
  const { window, minRequests, minErrors, maxErrorRateDelta, maxErrorRatio, maxP99Ratio } =
    guard.guardrail;
  const arm = (s: GuardSnapshot['canary']) => ({
    requests: s.requests,
    errorRate: s.requests > 0 ? s.errorRate : NaN,
    p99Ms: s.p99Ms ?? NaN,
  });
  return {
    version: guard.version,
    stableVersion: guard.stableVersion,
    stable: arm(guard.stable),
    canary: arm(guard.canary),
    limits: {
      window,
      minRequests,
      minErrors,
      ...(maxErrorRateDelta !== undefined && { maxErrorRateDelta }),
      ...(maxErrorRatio !== undefined && { maxErrorRatio }),
      ...(maxP99Ratio !== undefined && { maxP99Ratio }),
    },
    guardrail:
      guard.state === 'rolled_back' && guard.rollback
        ? { state: 'rolled back', reason: guard.rollback.reason, at: new Date(guard.rollback.at) }
        : { state: guard.state === 'healthy' ? 'healthy' : 'collecting' },
  };
}

function shadowView(
  shadow: NonNullable<TrafficConfig['shadow']>,
  summaries: ShadowSummary[],
): ShadowDiffView {
  return {
    version: shadow.version,
    ...(shadow.topK !== undefined && { topK: shadow.topK }),
    against: summaries
      .filter((s) => s.version === shadow.version)
      .map((s) => ({
        primary: s.primary,
        comparisons: s.comparisons,
        failures: Object.entries(s.failures).map(([reason, count]) => ({ reason, count })),
        nonFiniteScores: s.nonFiniteScores,
        rankCorrelation: s.meanRankCorrelation ?? NaN,
        overlapAtK: s.comparisons > 0 ? s.meanOverlapAtK : NaN,
        meanAbsDelta: s.meanAbsDelta ?? NaN,
        maxAbsDelta: s.maxAbsDelta ?? NaN,
      })),
  };
}
