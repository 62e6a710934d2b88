import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SceneNotFoundError, SceneNotReadyError } from '@app/common';
import { ScoringEngine } from '@app/scoring';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadBundle, PIPELINE_FILE } from './scene-loader';
import { PipelineConfig } from '../pipeline.config';
import { Scene } from './scene';

export interface SceneStatus {
  scene: string;
  version: string;
}

/**
 * Holds the serving version of each scene. At boot it loads every bundle under BUNDLES_DIR in the
 * background (health/ready stays false until done) and serves, per scene, the newest version that
 * passed validation; a bundle that fails is logged with its YAML paths and never served.
 */
@Injectable()
export class SceneRegistry implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SceneRegistry.name);
  private readonly scenes = new Map<string, Scene>();
  private loading: Promise<void> | undefined;
  private loaded = false;

  constructor(
    private readonly engine: ScoringEngine,
    private readonly config: PipelineConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.loading = this.loadAll().then(() => {
      this.loaded = true;
    });
  }

  /** Resolves once the boot-time load has finished, whatever its outcome. */
  whenLoaded(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }

  get ready(): boolean {
    return this.loaded && this.scenes.size > 0;
  }

  status(): SceneStatus[] {
    return [...this.scenes.values()].map((s) => ({ scene: s.spec.scene, version: s.spec.version }));
  }

  get(scene: string): Scene {
    const found = this.scenes.get(scene);
    if (found) return found;
    if (!this.loaded) throw new SceneNotReadyError(`scene '${scene}' is still loading`);
    throw new SceneNotFoundError(scene);
  }

  /**
   * Models are released only after the HTTP server has closed and its in-flight requests have
   * finished (Nest runs this hook after disposing of the server), so a shutdown never fails a
   * request that was already being ranked.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.loading?.catch(() => undefined);
    const models = [...this.scenes.values()].flatMap((s) => s.models.map((m) => m.id));
    this.scenes.clear();
    await Promise.all(models.map((id) => this.engine.unload(id)));
  }

  private async loadAll(): Promise<void> {
    const root = resolve(this.config.BUNDLES_DIR);
    for (const scene of await subfolders(root)) {
      const versions = (await subfolders(join(root, scene))).sort(naturalOrder).reverse();
      for (const version of versions) {
        const dir = join(root, scene, version);
        if (!(await isFile(join(dir, PIPELINE_FILE)))) continue;
        try {
          const started = performance.now();
          this.scenes.set(scene, await loadBundle(dir, this.engine));
          this.logger.log(
            `scene ${scene} serves ${version} (loaded in ${Math.round(performance.now() - started)} ms)`,
          );
          break;
        } catch (error) {
          this.logger.error(`bundle ${scene}/${version} rejected: ${(error as Error).message}`);
        }
      }
    }
    if (this.scenes.size === 0) this.logger.error(`no valid bundle under ${root}`);
  }
}

async function subfolders(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

const naturalOrder = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
