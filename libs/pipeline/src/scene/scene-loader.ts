import { BundleInvalidError, ErrorDetail, ExecutionProviderUnavailableError } from '@app/common';
import { ModelLoadOptions, ScoringEngine } from '@app/scoring';
import { basename, dirname } from 'node:path';
import { compileFusion } from '../fusion/fusion-compiler';
import { Scene, SceneModel } from './scene';
import { resolveFusionInputs, scoreScene } from './scene-scorer';
import { FeatureValues } from '../transforms/feature-values';
import { ItemRowCache } from '../transforms/item-row-cache';
import { TensorBuilder } from '../transforms/tensor-builder';
import { BundleSpec, ModelSpec } from '../bundle/bundle-definition';
import { checkModelContract } from '../bundle/model-contract-check';
import { dryRunFrame } from './dry-run-frame';
import { checkGolden } from './golden-check';
import { BundleFiles, BundleLimits } from './bundle-files';
import { PIPELINE_FILE } from './spec-text';
import { readSpecOffThread } from './spec-thread';

export { MAX_YAML_ALIASES, PIPELINE_FILE } from './spec-text';

export interface LoadBundleOptions {
  /** Score golden.jsonl (default true). */
  golden?: boolean;
  /** BUNDLES_DIR: no file may resolve outside it; by default the folder above the scene folder. */
  root?: string;
  limits?: BundleLimits;
  /**
   * Which load of this version this is, when the same version is loaded again (its files changed)
   * while an earlier load still serves: engine ids then read `<scene>/<version>#<n>/<model>`, so
   * the new models never replace the serving ones. 1 (the default) keeps `<scene>/<version>/<model>`.
   */
  generation?: number;
  /**
   * Start each model's instances one after another (ModelLoadOptions.staggeredStart): for loads
   * beside models that serve traffic.
   */
  staggeredStart?: boolean;
}

/**
 * Loads `<root>/<scene>/<version>/`: parses and validates pipeline.yaml, loads each model into the
 * engine, checks the models against their declared inputs and outputs, scores a dry run and
 * the golden requests, if the bundle has them.
 * Any failure unloads what was loaded and throws BundleInvalidError with the YAML path. A schema
 * problem does not hide the others: the models whose own sections are sound are still loaded and
 * checked against their declarations, and every problem found is reported together.
 */
export async function loadBundle(
  dir: string,
  engine: ScoringEngine,
  { golden = true, root, limits, generation = 1, staggeredStart = false }: LoadBundleOptions = {},
): Promise<Scene> {
  const files = new BundleFiles(dir, root, limits);
  const { spec, errors } = await readSpec(files);
  const loaded: string[] = [];
  try {
    const checked: { model: ModelSpec; id: string; maxRows: number }[] = [];
    for (const model of checkableModels(spec, errors)) {
      const found = await files.modelFile(model.file);
      if ('problem' in found) {
        errors.push({ path: `models.${model.name}.file`, message: found.problem });
        continue;
      }
      const options = { ...loadOptions(spec, model, found.file, generation), staggeredStart };
      let metadata, maxRows;
      try {
        ({ metadata, maxRequestRows: maxRows } = await engine.load(options));
        loaded.push(options.id);
      } catch (error) {
        const key =
          error instanceof ExecutionProviderUnavailableError ? 'executionProviders' : 'file';
        errors.push({
          path: `models.${model.name}.${key}`,
          message: `cannot load ${model.file}: ${(error as Error).message}`,
        });
        continue;
      }
      errors.push(...checkModelContract(model, metadata));
      checked.push({ model, id: options.id, maxRows });
    }
    if (errors.length > 0) throw new BundleInvalidError(dir, errors);
    // One set of feature readers for the bundle: a value overflowing any model's float column
    // is refused for every model, so all of them see the same features. One item side too:
    // what the models read alike of each item is computed, kept and looked up once, and shared
    // with any loaded version of the same features and inputs.
    const inputs = spec.models.map((m) => m.inputs);
    const values = new FeatureValues(spec.features, inputs.flat());
    const { items, shared: itemsShared } = ItemRowCache.forInputs(
      JSON.stringify([spec.features, inputs]),
    );
    const models: SceneModel[] = checked.map(({ model, id, maxRows }) => ({
      name: model.name,
      id,
      tensors: new TensorBuilder(model.inputs, values, items),
      outputs: model.outputs,
      maxRows,
    }));
    const fusion = compileFusion(spec.fusion);
    const fusionInputs = resolveFusionInputs(models, fusion.variables);
    const scene: Scene = { spec, dir, models, fusion, fusionInputs, items, itemsShared };
    await dryRun(scene, engine);
    if (golden) await checkGolden(scene, engine, files);
    return scene;
  } catch (error) {
    await Promise.all(loaded.map((id) => engine.unload(id).catch(() => undefined)));
    throw error;
  }
}

function loadOptions(
  spec: BundleSpec,
  model: ModelSpec,
  file: string,
  generation: number,
): ModelLoadOptions {
  const version = generation > 1 ? `${spec.version}#${generation}` : spec.version;
  return {
    id: `${spec.scene}/${version}/${model.name}`,
    file,
    labels: { model: `${spec.scene}/${model.name}`, version: spec.version },
    instances: model.instances,
    session: {
      intraOpThreads: model.intraOpThreads,
      ...(model.maxRunRows !== undefined && { maxRunRows: model.maxRunRows }),
      ...(model.graphOptimizationLevel && { graphOptimizationLevel: model.graphOptimizationLevel }),
      ...(model.executionProviders && { executionProviders: model.executionProviders }),
    },
    batching: model.batching,
    warmup: model.warmup,
  };
}

/**
 * The models worth loading to find more problems: none while the bundle's identity is in doubt
 * (engine ids are built from scene and version, and must never touch a serving version's), else
 * those whose own section read cleanly.
 */
function checkableModels(spec: BundleSpec, errors: readonly ErrorDetail[]): ModelSpec[] {
  const broken = (path: string) =>
    errors.some((e) => e.path === path || e.path?.startsWith(`${path}.`));
  if (broken('scene') || broken('version')) return [];
  return spec.models.filter((model) => !broken(`models.${model.name}`));
}

async function readSpec(files: BundleFiles): Promise<{ spec: BundleSpec; errors: ErrorDetail[] }> {
  const { dir } = files;
  await files.checkFolder();
  const text = await files.readText(
    PIPELINE_FILE,
    files.limits.maxYamlBytes,
    'BUNDLES_MAX_YAML_BYTES',
  );
  if (text === undefined)
    throw new BundleInvalidError(dir, [{ path: PIPELINE_FILE, message: 'not found' }]);
  const read = await readSpecOffThread(text);
  if (!read.ok) throw new BundleInvalidError(dir, read.errors);
  const { spec, errors } = read.reading;
  if (spec.version !== basename(dir))
    errors.push({
      path: 'version',
      message: `'${spec.version}' differs from its folder '${basename(dir)}'`,
    });
  if (spec.scene !== basename(dirname(dir)))
    errors.push({
      path: 'scene',
      message: `'${spec.scene}' differs from its folder '${basename(dirname(dir))}'`,
    });
  return { spec, errors };
}

/** Scores a few synthetic candidates built from the declared defaults; any NaN/Inf fails the bundle. */
async function dryRun(scene: Scene, engine: ScoringEngine): Promise<void> {
  let result;
  try {
    result = await scoreScene(scene, engine, dryRunFrame(scene));
  } catch (error) {
    throw new BundleInvalidError(scene.dir, [
      { path: 'models', message: `dry run failed: ${(error as Error).message}` },
    ]);
  }
  for (const [name, values] of Object.entries(result.outputs)) {
    if (values.some((v) => !Number.isFinite(v))) {
      throw new BundleInvalidError(scene.dir, [
        { path: `models.${name.split('.')[0]}`, message: `dry run produced NaN/Inf in ${name}` },
      ]);
    }
  }
  if (result.scores.some((v) => !Number.isFinite(v))) {
    throw new BundleInvalidError(scene.dir, [
      { path: 'fusion', message: 'dry run produced a NaN/Inf score' },
    ]);
  }
}
