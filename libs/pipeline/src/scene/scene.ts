import { BundleSpec } from '../bundle/bundle-definition';
import { CompiledFusion } from '../fusion/fusion-compiler';
import { TensorBuilder } from '../transforms/tensor-builder';

export interface SceneModel {
  name: string;
  /** Engine id: `<scene>/<version>/<model>`. */
  id: string;
  tensors: TensorBuilder;
  outputs: readonly string[];
}

/** A validated, loaded bundle version: everything the rank path needs, compiled once. */
export interface Scene {
  readonly spec: BundleSpec;
  readonly dir: string;
  readonly models: readonly SceneModel[];
  readonly fusion: CompiledFusion;
}
