/**
 * Regenerates the example models and demo data, byte-for-byte reproducibly.
 *   npm run models:generate            -> writes under models/
 *   node -r @swc-node/register models/generator/generate.ts /tmp/x  -> writes under /tmp/x
 */
import { mkdirSync, writeFileSync } from 'fs';
import { dirname, join, resolve } from 'path';
import { buildCtrModel } from './ctr-model';
import { buildDemoFeatures } from './demo-features';
import { buildMtlModel } from './mtl-model';

/** Output paths relative to the models/ root, each with the function that builds its bytes. */
export const OUTPUTS: ReadonlyArray<readonly [string, () => Uint8Array]> = [
  ['feed/v1/ctr.onnx', buildCtrModel],
  ['feed/v1/mtl.onnx', buildMtlModel],
  ['demo/features.jsonl', buildDemoFeatures],
];

/** models/ of this repository, resolved from this file so the cwd does not matter. */
export const MODELS_ROOT = resolve(__dirname, '..');

export function generateAll(outDir: string): string[] {
  const written: string[] = [];
  for (const [relative, build] of OUTPUTS) {
    const path = join(outDir, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, build());
    written.push(path);
  }
  return written;
}

if (require.main === module) {
  const outDir = process.argv[2] ? resolve(process.argv[2]) : MODELS_ROOT;
  for (const path of generateAll(outDir)) console.log(`wrote ${path}`);
}
