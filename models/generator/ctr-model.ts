/**
 * models/feed/v1/ctr.onnx: a CTR model sized like a production fine-ranking model
 * (26 sparse fields x 16-d embeddings + 13 dense -> MLP 512-256-128-1, ~0.77 MFLOP/row),
 * so throughput measured on it transfers to real bundles. The weights are random, not trained.
 */
import { dense, embedSparse } from './layers';
import { FLOAT, GraphBuilder, INT64, encodeModel } from './onnx-builder';

export const CTR_SPARSE_FIELDS = 26;
export const CTR_VOCAB = 1000;
export const CTR_EMBED_DIM = 16;
export const CTR_DENSE = 13;
export const CTR_HIDDEN = [512, 256, 128] as const;

/**
 * Chosen by sampling these exact weights: with uniform ids and dense in [0, 1), the output
 * mean is ~0.13 with p5-p95 ~0.05-0.26, like a real CTR model, rather than ~0.5 or saturated.
 */
const HEAD_BIAS = -2;
const HEAD_GAIN = 1;
const EMBED_SCALE = 1;

export function buildCtrModel(): Uint8Array {
  const g = new GraphBuilder();
  const ids = g.input('sparse_ids', INT64, ['batch', CTR_SPARSE_FIELDS]);
  const denseIn = g.input('dense', FLOAT, ['batch', CTR_DENSE]);

  const embedded = embedSparse(g, 'ctr', ids, {
    fields: CTR_SPARSE_FIELDS,
    vocab: CTR_VOCAB,
    dim: CTR_EMBED_DIM,
    scale: EMBED_SCALE,
  });
  let x = g.node('Concat', [embedded, denseIn], 'ctr.features', { axis: 1 });
  let width = CTR_SPARSE_FIELDS * CTR_EMBED_DIM + CTR_DENSE;
  CTR_HIDDEN.forEach((outDim, i) => {
    x = dense(g, `ctr.fc${i + 1}`, x, { inDim: width, outDim, activation: 'relu' });
    width = outDim;
  });
  dense(g, 'ctr.head', x, {
    inDim: width,
    outDim: 1,
    activation: 'sigmoid',
    bias: HEAD_BIAS,
    gain: HEAD_GAIN,
    outputName: 'ctr',
  });
  g.output('ctr', FLOAT, ['batch', 1]);

  return encodeModel(g, {
    graphName: 'feed_ctr_v1',
    docString:
      'Example feed CTR model for Ranker: sparse_ids int64 [batch,26] (hashed ids, each column ' +
      'in [0,1000)) + dense float32 [batch,13] -> ctr float32 [batch,1]. 26x16 embeddings, ' +
      'MLP 429-512-256-128-1. Random weights from models/generator (npm run models:generate); ' +
      'not trained, for benchmarks and tests only.',
    metadata: {
      scene: 'feed',
      version: 'v1',
      task: 'ctr',
      sparse_fields: String(CTR_SPARSE_FIELDS),
      sparse_vocab_per_field: String(CTR_VOCAB),
      dense_features: String(CTR_DENSE),
      generator: 'models/generator/ctr-model.ts',
      trained: 'false',
    },
  });
}
