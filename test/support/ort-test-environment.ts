/**
 * Jest environment for specs that run onnxruntime-node. Jest gives each spec its own realm,
 * but the native binding hands back output typed arrays from Node's main realm, and
 * onnxruntime-common (loaded inside the spec's realm) rejects them by `instanceof`
 * ("A float32 tensor's data must be type of function Float32Array()"). Sharing the host's
 * typed-array constructors makes both sides agree. jest.config.js makes it the default.
 */
import { TestEnvironment } from 'jest-environment-node';

const SHARED = [
  'ArrayBuffer',
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
] as const;

export default class OrtTestEnvironment extends TestEnvironment {
  constructor(...args: ConstructorParameters<typeof TestEnvironment>) {
    super(...args);
    const host = globalThis as unknown as Record<string, unknown>;
    const sandbox = this.global as unknown as Record<string, unknown>;
    for (const name of SHARED) sandbox[name] = host[name];
  }
}
