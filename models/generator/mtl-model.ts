/**
 * models/feed/v1/mtl.onnx: a small two-task (CTR + CVR) model with the same inputs as the
 * CTR model, so bundles can exercise multi-output models and score fusion
 * (e.g. ctr * cvr). Shared bottom 429-256-128, one 128-64-1 tower per task. Random weights.
 */
import { dense, embedSparse } from './layers';
import { FLOAT, GraphBuilder, INT64, encodeModel } from './onnx-builder';

export const MTL_SPARSE_FIELDS = 26;
export const MTL_VOCAB = 500;
export const MTL_EMBED_DIM = 16;
export const MTL_DENSE = 13;

/**
 * Tower head biases: conversions are rarer than clicks, so cvr sits well below ctr.
 * Set by sampling these exact random weights on uniform inputs (the cvr tower's weights
 * happen to add ~+2 to its mean logit): mean ctr ~0.16, mean cvr ~0.05.
 */
const TOWERS = [
  { task: 'ctr', bias: -2 },
  { task: 'cvr', bias: -5 },
] as const;
const EMBED_SCALE = 1;

export function buildMtlModel(): Uint8Array {
  const g = new GraphBuilder();
  const ids = g.input('sparse_ids', INT64, ['batch', MTL_SPARSE_FIELDS]);
  const denseIn = g.input('dense', FLOAT, ['batch', MTL_DENSE]);

  const embedded = embedSparse(g, 'mtl', ids, {
    fields: MTL_SPARSE_FIELDS,
    vocab: MTL_VOCAB,
    dim: MTL_EMBED_DIM,
    scale: EMBED_SCALE,
  });
  const features = g.node('Concat', [embedded, denseIn], 'mtl.features', { axis: 1 });
  const inDim = MTL_SPARSE_FIELDS * MTL_EMBED_DIM + MTL_DENSE;
  const h1 = dense(g, 'mtl.shared1', features, { inDim, outDim: 256, activation: 'relu' });
  const shared = dense(g, 'mtl.shared2', h1, { inDim: 256, outDim: 128, activation: 'relu' });

  for (const { task, bias } of TOWERS) {
    const t = dense(g, `mtl.${task}.fc1`, shared, { inDim: 128, outDim: 64, activation: 'relu' });
    dense(g, `mtl.${task}.head`, t, {
      inDim: 64,
      outDim: 1,
      activation: 'sigmoid',
      bias,
      outputName: task,
    });
    g.output(task, FLOAT, ['batch', 1]);
  }

  return encodeModel(g, {
    graphName: 'feed_mtl_v1',
    docString:
      'Example feed multi-task model for Ranker: sparse_ids int64 [batch,26] (hashed ids, each ' +
      'column in [0,500)) + dense float32 [batch,13] -> ctr float32 [batch,1], cvr float32 ' +
      '[batch,1]. Shared bottom 429-256-128, towers 128-64-1. Random weights from ' +
      'models/generator (npm run models:generate); not trained, for benchmarks and tests only.',
    metadata: {
      scene: 'feed',
      version: 'v1',
      task: 'ctr,cvr',
      sparse_fields: String(MTL_SPARSE_FIELDS),
      sparse_vocab_per_field: String(MTL_VOCAB),
      dense_features: String(MTL_DENSE),
      generator: 'models/generator/mtl-model.ts',
      trained: 'false',
    },
  });
}
