import { RequestTooLargeError } from '@app/common';
import { OutputTensors, ScoreOptions, ScoringEngine } from '@app/scoring';
import { FeatureFrame } from '../transforms/feature-frame';
import { BuiltInputs } from '../transforms/tensor-builder';
import { FusionInput, Scene, SceneModel } from './scene';

export interface SceneScores {
  /** Fused score per candidate, in candidate order. */
  scores: Float32Array;
  /**
   * Each `<model>.<output>`, one value per candidate. Named on first read (dry run, debug,
   * specs): the rank path never builds these names.
   */
  readonly outputs: Record<string, Float32Array>;
}

/**
 * Builds every model's tensors (in the engine's buffers), scores the models concurrently and fuses
 * their outputs. The buffers go back to the engine once every model's score has settled, not at
 * the first failure: the engine may still be copying another model's rows. A request larger than
 * a model's queue is refused before any tensor is built (see checkFits).
 */
export async function scoreScene(
  scene: Scene,
  engine: ScoringEngine,
  frame: FeatureFrame,
  options: ScoreOptions = {},
): Promise<SceneScores> {
  const rows = frame.itemIds.length;
  checkFits(scene, rows);
  const buffer = (byteLength: number) => engine.tensorBuffer(byteLength);
  // Every model's inputs are built before any is sent: one equal to another is copied from it.
  const built: BuiltInputs = new Map();
  const feeds = scene.models.map((model) => model.tensors.build(frame, buffer, built));
  const scoring = scene.models.map((model, m) => engine.score(model.id, feeds[m], options));
  void Promise.allSettled(scoring).then(() => {
    for (const f of feeds) engine.recycle(f);
  });
  const results = await Promise.all(scoring);
  const { fusionInputs } = scene;
  const columns = new Array<Float32Array>(fusionInputs.length);
  for (let v = 0; v < fusionInputs.length; v++) {
    const { model, output } = fusionInputs[v];
    columns[v] = results[model][output].data;
  }
  const scores = scene.fusion.evaluate(columns, rows);
  let named: Record<string, Float32Array> | undefined;
  return {
    scores,
    get outputs() {
      return (named ??= nameOutputs(scene.models, results));
    },
  };
}

/**
 * Throws RequestTooLargeError (413) when `candidates` exceed a model's `maxQueueRows`: the engine
 * would refuse that model's rows every time, so the others are not scored for nothing. The
 * error names the field, the limit and the bundle setting behind it.
 */
export function checkFits(scene: Scene, candidates: number): void {
  for (const model of scene.models) {
    if (candidates <= model.maxRows) continue;
    const { scene: name, version } = scene.spec;
    const setting = `models.${model.name}.batching.maxQueueRows`;
    const limit = `scene ${name} version ${version} takes at most ${model.maxRows} candidates per request (${setting})`;
    throw new RequestTooLargeError(
      `${candidates} candidates, but ${limit}`,
      model.id,
      candidates,
      model.maxRows,
      [{ path: 'candidates', message: `${limit}, got ${candidates}` }],
    );
  }
}

/** Resolves each fusion variable to its model index and output name, once per bundle. */
export function resolveFusionInputs(
  models: readonly Pick<SceneModel, 'name' | 'outputs'>[],
  variables: readonly string[],
): FusionInput[] {
  return variables.map((variable) => {
    const dot = variable.indexOf('.');
    const [name, output] = [variable.slice(0, dot), variable.slice(dot + 1)];
    const model = models.findIndex((m) => m.name === name && m.outputs.includes(output));
    if (model < 0) throw new Error(`fusion variable '${variable}' is not a model output`);
    return { model, output };
  });
}

function nameOutputs(
  models: readonly SceneModel[],
  results: readonly OutputTensors[],
): Record<string, Float32Array> {
  const outputs: Record<string, Float32Array> = {};
  models.forEach((model, m) => {
    for (const name of model.outputs) outputs[`${model.name}.${name}`] = results[m][name].data;
  });
  return outputs;
}
