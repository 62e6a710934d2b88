import { ScoreOptions, ScoringEngine } from '@app/scoring';
import { FeatureFrame } from '../transforms/feature-frame';
import { Scene } from './scene';

export interface SceneScores {
  /** Fused score per candidate, in candidate order. */
  scores: Float32Array;
  /** Each `<model>.<output>` used, one value per candidate. */
  outputs: Record<string, Float32Array>;
}

/** Builds every model's tensors, scores the models concurrently and fuses their outputs. */
export async function scoreScene(
  scene: Scene,
  engine: ScoringEngine,
  frame: FeatureFrame,
  options: ScoreOptions = {},
): Promise<SceneScores> {
  const rows = frame.itemIds.length;
  const results = await Promise.all(
    scene.models.map((model) => engine.score(model.id, model.tensors.build(frame), options)),
  );
  const outputs: Record<string, Float32Array> = {};
  scene.models.forEach((model, m) => {
    for (const name of model.outputs) outputs[`${model.name}.${name}`] = results[m][name].data;
  });
  const scores = scene.fusion.evaluate(
    scene.fusion.variables.map((v) => outputs[v]),
    rows,
  );
  return { scores, outputs };
}
