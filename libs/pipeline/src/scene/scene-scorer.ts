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
  // All or nothing, before any tensor is built: a request one model's queue refuses now is
  // refused by all (the checks and the score calls below share one turn of the event loop, so no
  // queue changes in between). Otherwise, under overload, the models that took it would score
  // rows whose answer is already an error, and each refusal would cost a tensor build.
  for (const model of scene.models) engine.admit(model.id, rows);
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
  return new ScoredScene(scene.fusion.evaluate(columns, rows), scene.models, results);
}

/**
 * A scene's scores, its outputs named on first read. A class, not an object literal with a getter:
 * each such literal's getter is a new closure, so V8 gives each object a hidden class of its own
 * (kept in the old generation) whose descriptors hold the closure, and with it the whole context
 * of the call that made it (the request's frame and rows, its feeds, the engine's results) stayed
 * reachable from the old generation until the next mark-compact: every scavenge promoted the
 * requests that had answered since the last. Measured on golden parts (512 fresh candidates
 * scored 600 times): scavenges of 6-9 ms that kept ~3.3 MB each, against ~1-2 ms that keep nothing
 * (README: Architecture).
 */
class ScoredScene implements SceneScores {
  private named: Record<string, Float32Array> | undefined;

  constructor(
    readonly scores: Float32Array,
    private readonly models: readonly SceneModel[],
    private readonly results: readonly OutputTensors[],
  ) {}

  get outputs(): Record<string, Float32Array> {
    return (this.named ??= nameOutputs(this.models, this.results));
  }
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
