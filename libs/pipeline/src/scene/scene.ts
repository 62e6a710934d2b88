import { BundleSpec } from '../bundle/bundle-definition';
import { CompiledFusion } from '../fusion/fusion-compiler';
import { ItemRowCache } from '../transforms/item-row-cache';
import { TensorBuilder } from '../transforms/tensor-builder';

export interface SceneModel {
  name: string;
  /** Engine id: `<scene>/<version>/<model>`. */
  id: string;
  tensors: TensorBuilder;
  outputs: readonly string[];
  /** The most candidates one request may have for this model: its `batching.maxQueueRows`. */
  maxRows: number;
}

/** A fusion variable `<model>.<output>` resolved at load: where its column comes from. */
export interface FusionInput {
  /** Index into `Scene.models`. */
  model: number;
  output: string;
}

/** A validated, loaded bundle version: everything the rank path needs, compiled once. */
export interface Scene {
  readonly spec: BundleSpec;
  readonly dir: string;
  readonly models: readonly SceneModel[];
  readonly fusion: CompiledFusion;
  /** One per `fusion.variables`, in its order. */
  readonly fusionInputs: readonly FusionInput[];
  /** The item side its models share (see ItemRowCache). */
  readonly items: ItemRowCache;
  /** Whether `items` came from a version loaded before with the same features and inputs. */
  readonly itemsShared?: boolean;
}
