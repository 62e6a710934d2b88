/**
 * The two building blocks both example models share: a field-offset embedding lookup and a
 * fully connected layer. Weights are drawn from a per-tensor PRNG stream keyed by name.
 */
import { GraphBuilder, floatTensor, int64Tensor } from './onnx-builder';
import { Prng } from './prng';

export interface EmbeddingSpec {
  fields: number;
  vocab: number;
  dim: number;
  /** Values are uniform in [-scale, scale). */
  scale: number;
}

/**
 * ids [batch, fields] (each column in [0, vocab)) -> [batch, fields*dim].
 * One shared table with field f at rows f*vocab.. keeps the graph to a single Gather,
 * which is how exported production rankers usually look and is cheaper than 26 Gathers.
 */
export function embedSparse(
  g: GraphBuilder,
  prefix: string,
  ids: string,
  spec: EmbeddingSpec,
): string {
  const { fields, vocab, dim, scale } = spec;
  const offsets = Array.from({ length: fields }, (_, f) => f * vocab);
  const rng = Prng.fromKey(`${prefix}/embedding`);
  const table = new Float32Array(fields * vocab * dim);
  for (let i = 0; i < table.length; i++) table[i] = rng.uniform(-scale, scale);

  const offsetName = g.initializer(int64Tensor(`${prefix}.field_offsets`, [fields], offsets));
  const tableName = g.initializer(floatTensor(`${prefix}.embedding`, [fields * vocab, dim], table));
  const shapeName = g.initializer(int64Tensor(`${prefix}.flat_shape`, [2], [-1, fields * dim]));

  const global = g.node('Add', [ids, offsetName], `${prefix}.global_ids`);
  const gathered = g.node('Gather', [tableName, global], `${prefix}.embedded`, { axis: 0 });
  return g.node('Reshape', [gathered, shapeName], `${prefix}.embedded_flat`);
}

export type Activation = 'relu' | 'sigmoid';

export interface DenseSpec {
  inDim: number;
  outDim: number;
  activation: Activation;
  /** Constant bias; a negative one on the last layer sets the base rate of the output. */
  bias?: number;
  /** Multiplies the init range; lets the last layer choose how wide the outputs spread. */
  gain?: number;
  /** Name of the activation's output, when it must be a graph output such as "ctr". */
  outputName?: string;
}

/**
 * Gemm with W stored [out, in] and transB=1, as PyTorch exports nn.Linear.
 * ReLU layers use He-uniform (keeps activation scale through depth); the sigmoid head uses
 * Xavier-uniform so its logits stay O(1) instead of saturating.
 */
export function dense(g: GraphBuilder, name: string, input: string, spec: DenseSpec): string {
  const { inDim, outDim, activation } = spec;
  const base = activation === 'relu' ? Math.sqrt(6 / inDim) : Math.sqrt(6 / (inDim + outDim));
  const limit = base * (spec.gain ?? 1);
  const rng = Prng.fromKey(`${name}.weight`);
  const w = new Float32Array(outDim * inDim);
  for (let i = 0; i < w.length; i++) w[i] = rng.uniform(-limit, limit);
  const b = new Float32Array(outDim).fill(spec.bias ?? 0);

  const wName = g.initializer(floatTensor(`${name}.weight`, [outDim, inDim], w));
  const bName = g.initializer(floatTensor(`${name}.bias`, [outDim], b));
  const linear = g.node('Gemm', [input, wName, bName], `${name}.linear`, { transB: 1 });
  return g.node(
    activation === 'relu' ? 'Relu' : 'Sigmoid',
    [linear],
    spec.outputName ?? `${name}.out`,
  );
}
