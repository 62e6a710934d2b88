import { Logger } from '@nestjs/common';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { checkFeeds } from './model-input-check';
import { readModelMetadata } from './onnx-metadata';
import { ModelLoadOptions, ScoringEngine } from './scoring-engine.port';
import { InputFeeds, ModelMetadata, OutputTensors } from './tensor-types';

interface LoadedModel {
  session: InferenceSession;
  metadata: ModelMetadata;
}

/**
 * Runs each model in one onnxruntime session on the calling thread. onnxruntime-node's run()
 * blocks the thread it runs on, so this engine blocks the event loop for the length of each
 * inference. It is the first, simple engine; the worker-thread engine replaces it in the service.
 */
export class InlineScoringEngine extends ScoringEngine {
  private readonly logger = new Logger(InlineScoringEngine.name);
  private readonly models = new Map<string, LoadedModel>();

  async load(options: ModelLoadOptions): Promise<ModelMetadata> {
    const session = await InferenceSession.create(options.file, {
      intraOpNumThreads: options.intraOpThreads ?? 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      executionProviders: ['cpu'],
    });
    const metadata = readModelMetadata(session);
    const previous = this.models.get(options.id);
    this.models.set(options.id, { session, metadata });
    if (previous) await previous.session.release();
    this.logger.log(`loaded ${options.id} from ${options.file} on cpu (inline)`);
    return metadata;
  }

  async score(modelId: string, feeds: InputFeeds): Promise<OutputTensors> {
    const model = this.models.get(modelId);
    if (!model) throw new Error(`model ${modelId} is not loaded`);
    checkFeeds(modelId, model.metadata, feeds);
    const ortFeeds: Record<string, Tensor> = {};
    for (const [name, feed] of Object.entries(feeds)) {
      ortFeeds[name] = new Tensor(feed.dtype, feed.data, feed.dims);
    }
    const results = await model.session.run(ortFeeds);
    const outputs: OutputTensors = {};
    for (const [name, value] of Object.entries(results)) {
      outputs[name] = { data: value.data as Float32Array, dims: value.dims };
    }
    return outputs;
  }

  async unload(modelId: string): Promise<void> {
    const model = this.models.get(modelId);
    this.models.delete(modelId);
    await model?.session.release();
  }
}
