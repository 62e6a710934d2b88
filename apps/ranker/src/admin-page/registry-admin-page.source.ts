import { Injectable } from '@nestjs/common';
import { SceneRegistry } from '@app/pipeline';
import { access } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AdminPageSource } from './admin-page.source';
import { AdminPageView, SceneView, ValidationView } from './admin-page.view';

/** The bundle file the golden check reads (libs/pipeline's GOLDEN_FILE). */
const GOLDEN_FILE = 'golden.jsonl';

/**
 * The page from what the scene registry reports today: the version each scene serves, which
 * takes all of its traffic. The registry keeps no record of rejected versions and there is no
 * rollout yet, so the page shows no failed version, canary, experiment or shadow.
 */
@Injectable()
export class RegistryAdminPageSource extends AdminPageSource {
  constructor(private readonly registry: SceneRegistry) {
    super();
  }

  async view(): Promise<AdminPageView> {
    const scenes = await Promise.all(
      this.registry.status().map(({ scene, version }) => this.scene(scene, version)),
    );
    scenes.sort((a, b) => a.scene.localeCompare(b.scene));
    return { generatedAt: new Date(), replica: hostname(), scenes };
  }

  private async scene(scene: string, version: string): Promise<SceneView> {
    return {
      scene,
      versions: [
        {
          version,
          state: 'serving',
          reasons: [],
          validation: await servedValidation(this.servingDir(scene, version)),
        },
      ],
      traffic: { stable: version, experiments: [] },
    };
  }

  private servingDir(scene: string, version: string): string {
    const listed = this.registry.describe(scene)?.versions.find((v) => v.version === version);
    return listed?.dir ?? '';
  }
}

/**
 * A version serves only once it passed the whole gate; its golden check ran if the bundle has
 * golden requests and found nothing to check otherwise.
 */
async function servedValidation(dir: string): Promise<ValidationView[]> {
  const golden = await access(join(dir, GOLDEN_FILE)).then(
    () => true,
    () => false,
  );
  return [
    { check: 'schema', outcome: 'pass', messages: [] },
    { check: 'model contract', outcome: 'pass', messages: [] },
    { check: 'dry run', outcome: 'pass', messages: [] },
    golden
      ? { check: 'golden', outcome: 'pass', messages: [] }
      : { check: 'golden', outcome: 'skipped', messages: [`no ${GOLDEN_FILE} in the bundle`] },
  ];
}
