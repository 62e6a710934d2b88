/**
 * loadBundle with the real engine (worker threads, onnxruntime) on copies of the example bundle
 * models/feed/v1: each case breaks one thing and expects BundleInvalidError with the exact
 * pipeline.yaml path, and no model left loaded in the engine.
 */
import 'reflect-metadata';
import { BundleInvalidError, RequestTooLargeError } from '@app/common';
import { smallWorkerEngine, WorkerScoringEngine } from '@app/scoring/testing';
import { Logger } from '@nestjs/common';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  cp,
  mkdir,
  mkdtemp,
  open,
  readFile,
  rename,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { FeatureFrame } from '../transforms/feature-frame';
import { dryRunFrame } from './dry-run-frame';
import { scoreScene } from './scene-scorer';
import { LoadBundleOptions, loadBundle, MAX_YAML_ALIASES, PIPELINE_FILE } from './scene-loader';
import { checkGolden, GOLDEN_FILE, goldenFrame } from './golden-check';

const EXAMPLE = join(__dirname, '../../../../models/feed/v1');
const MODEL_IDS = ['feed/v1/ctr', 'feed/v1/mtl'];
const NO_GPU = !existsSync('/dev/nvidiactl');

// pipeline.yaml as plain data, loosely typed: each case edits one field of a fresh copy.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Yaml = Record<string, any>;

describe('loadBundle (real engine)', () => {
  let root: string;
  let engine: WorkerScoringEngine;
  let cases = 0;

  /** A fresh copy of the example bundle at `<tmp>/<n>/feed/v1`, with `edit` applied. */
  async function bundle(
    edit: (yaml: Yaml, dir: string) => Promise<void> | void = () => undefined,
  ): Promise<string> {
    const dir = join(root, String(++cases), 'feed', 'v1');
    await cp(EXAMPLE, dir, { recursive: true });
    const file = join(dir, PIPELINE_FILE);
    const yaml = parse(await readFile(file, 'utf8')) as Yaml;
    await edit(yaml, dir);
    await writeFile(file, stringify(yaml));
    return dir;
  }

  /** The details of the BundleInvalidError loading `dir` throws; fails if it loads. */
  async function errorDetails(dir: string, options?: LoadBundleOptions) {
    let error: unknown;
    try {
      await loadBundle(dir, engine, options);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BundleInvalidError);
    const invalid = error as BundleInvalidError;
    expect(invalid.code).toBe('BUNDLE_INVALID');
    expect(invalid.bundleDir).toBe(dir);
    for (const id of MODEL_IDS) expect(engine.pool(id)).toBeUndefined();
    return invalid.details;
  }

  /** The YAML paths of the BundleInvalidError loading `dir` throws; fails if it loads. */
  async function errorPaths(dir: string): Promise<string[]> {
    return (await errorDetails(dir)).map((d) => d.path ?? '');
  }

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    root = await mkdtemp(join(tmpdir(), 'ranker-bundle-spec-'));
    engine = smallWorkerEngine();
  });

  afterAll(async () => {
    await engine.onApplicationShutdown();
    await rm(root, { recursive: true, force: true });
  });

  it('loads the unmodified bundle: two models, finite fused scores', async () => {
    const dir = await bundle();
    const scene = await loadBundle(dir, engine);
    try {
      expect(scene.spec).toMatchObject({ scene: 'feed', version: 'v1' });
      expect(scene.models.map((m) => [m.name, m.id])).toEqual([
        ['ctr', 'feed/v1/ctr'],
        ['mtl', 'feed/v1/mtl'],
      ]);
      for (const id of MODEL_IDS) expect(engine.pool(id)?.live).toHaveLength(1);
      // How each model runs reaches the engine as pipeline.yaml says.
      for (const id of MODEL_IDS) expect(engine.pool(id)?.session.maxRunRows).toBe(256);
      const itemIds = Array.from({ length: 25 }, (_, i) => `item-${i}`);
      const frame: FeatureFrame = {
        userId: 'user-1',
        userRequest: { age: 27, gender: 'f', city: 'lyon', fav_category: 'books' },
        userStored: undefined,
        context: { hour: 21, device: 'ios', page: 'home' },
        itemIds,
        itemRequest: itemIds.map((_, i) => (i % 2 ? { price: i * 3.5 } : undefined)),
        itemStored: itemIds.map((_, i) => ({ category: i % 3 ? 'books' : 'games', rating: 4 })),
      };
      const { scores, outputs } = await scoreScene(scene, engine, frame);
      expect(scores).toHaveLength(itemIds.length);
      expect(Object.keys(outputs).sort()).toEqual(['ctr.ctr', 'mtl.ctr', 'mtl.cvr']);
      for (const values of [scores, ...Object.values(outputs)]) {
        expect(values).toHaveLength(itemIds.length);
        for (const v of values) expect(Number.isFinite(v)).toBe(true);
      }
      for (const v of scores) expect(v).toBeGreaterThan(0);
    } finally {
      await Promise.all(MODEL_IDS.map((id) => engine.unload(id)));
    }
  });

  it('shares the item side with a loaded version of the same features and inputs, only', async () => {
    // A default no other case uses: no item side of theirs may still be alive to share.
    const dir = await bundle((yaml) => {
      yaml.features.user.age.default = 31.25;
    });
    const other = await bundle((yaml) => {
      yaml.features.user.age.default = 31.25;
      yaml.features.item.price.default = 1;
    });
    const first = await loadBundle(dir, engine, { golden: false });
    const again = await loadBundle(dir, engine, { golden: false, generation: 2 });
    const changed = await loadBundle(other, engine, { golden: false, generation: 3 });
    try {
      expect(first.itemsShared).toBe(false);
      expect(again.items).toBe(first.items);
      expect(again.itemsShared).toBe(true);
      // Another default of an item feature: other kept values, another item side.
      expect(changed.items).not.toBe(first.items);
      expect(changed.itemsShared).toBe(false);
    } finally {
      for (const scene of [first, again, changed])
        await Promise.all(scene.models.map((m) => engine.unload(m.id)));
    }
  });

  describe('a model queue (maxQueueRows) smaller than a request', () => {
    it('loads (its dry run fits the queue) and refuses larger requests with REQUEST_TOO_LARGE at candidates', async () => {
      const dir = await bundle((yaml) => {
        yaml.models.ctr.batching = { maxQueueRows: 4 };
      });
      // Its golden requests (12 candidates) could never be scored: checked below.
      const scene = await loadBundle(dir, engine, { golden: false });
      try {
        expect(scene.models.map((m) => [m.name, m.maxRows])).toEqual([
          ['ctr', 4],
          ['mtl', 50_000],
        ]);
        const frame = (n: number) => dryRunFrame({ models: [] }, n);
        expect((await scoreScene(scene, engine, frame(4))).scores).toHaveLength(4);
        let error: unknown;
        await scoreScene(scene, engine, frame(5)).catch((e: unknown) => (error = e));
        expect(error).toBeInstanceOf(RequestTooLargeError);
        expect(error).toMatchObject({
          code: 'REQUEST_TOO_LARGE',
          status: 413,
          modelId: 'feed/v1/ctr',
          rows: 5,
          maxRows: 4,
          message:
            '5 candidates, but scene feed version v1 takes at most 4 candidates per request (models.ctr.batching.maxQueueRows)',
          details: [
            {
              path: 'candidates',
              message:
                'scene feed version v1 takes at most 4 candidates per request (models.ctr.batching.maxQueueRows), got 5',
            },
          ],
        });
      } finally {
        await Promise.all(MODEL_IDS.map((id) => engine.unload(id)));
      }
    });

    it('fails the bundle at the golden.jsonl line its own queue can never take', async () => {
      const dir = await bundle((yaml) => {
        yaml.models.mtl.batching = { maxQueueRows: 10 };
      });
      const details = await errorDetails(dir);
      expect(details[0]).toEqual({
        path: 'golden.jsonl:1',
        message:
          '12 candidates, but scene feed version v1 takes at most 10 candidates per request (models.mtl.batching.maxQueueRows)',
      });
    });
  });

  it('names models.ctr.file when the model file is not ONNX', async () => {
    const dir = await bundle((_, d) => writeFile(join(d, 'ctr.onnx'), 'not an onnx model'));
    expect(await errorPaths(dir)).toEqual(['models.ctr.file']);
  });

  it('names models.ctr.file when the model file is missing (and unloads the loaded mtl)', async () => {
    const dir = await bundle((_, d) => rm(join(d, 'ctr.onnx')));
    expect(await errorPaths(dir)).toEqual(['models.ctr.file']);
  });

  (NO_GPU ? it : it.skip)(
    'names models.ctr.executionProviders when no listed provider is available',
    async () => {
      const dir = await bundle((y) => {
        y.models.ctr.executionProviders = ['cuda'];
      });
      expect(await errorPaths(dir)).toEqual(['models.ctr.executionProviders']);
    },
  );

  it('names models.ctr.inputs.dense.dtype when the declared dtype differs from the model', async () => {
    const dir = await bundle((y) => {
      const columns = Array.from({ length: 13 }, () => ({
        op: 'hash',
        feature: 'user.id',
        buckets: 10,
      }));
      y.models.ctr.inputs = { ...y.models.ctr.inputs, dense: { dtype: 'int64', columns } };
    });
    expect(await errorPaths(dir)).toEqual(['models.ctr.inputs.dense.dtype']);
  });

  it('names models.ctr.inputs.dense.columns when a column is missing', async () => {
    const dir = await bundle((y) => {
      const dense = y.models.ctr.inputs.dense;
      y.models.ctr.inputs = {
        ...y.models.ctr.inputs,
        dense: { ...dense, columns: dense.columns.slice(0, 12) },
      };
    });
    expect(await errorPaths(dir)).toEqual(['models.ctr.inputs.dense.columns']);
  });

  it('reports a fusion typo together with a column-count mismatch in the same bundle', async () => {
    const dir = await bundle((y) => {
      y.fusion = 'pow(ctr.ctrr, 0.7) * (1 + 2 * mtl.cvr)';
      const dense = y.models.ctr.inputs.dense;
      y.models.ctr.inputs = {
        ...y.models.ctr.inputs,
        dense: { ...dense, columns: dense.columns.slice(0, 12) },
      };
    });
    expect(await errorPaths(dir)).toEqual(['fusion', 'models.ctr.inputs.dense.columns']);
  });

  it('does not load models of a bundle whose version differs from its folder', async () => {
    const dir = await bundle((y) => {
      y.version = 'v0';
      y.fusion = 'ctr.nope';
    });
    expect((await errorPaths(dir)).sort()).toEqual(['fusion', 'version']);
    expect(engine.pool('feed/v0/ctr')).toBeUndefined();
  });

  it('names models.ctr.outputs[0] when the model has no such output', async () => {
    const dir = await bundle((y) => {
      y.models.ctr.outputs = ['score'];
      y.fusion = (y.fusion as string).replace('ctr.ctr', 'ctr.score');
    });
    expect(await errorPaths(dir)).toEqual(['models.ctr.outputs[0]']);
  });

  it('names models.ctr.inputs when a model input is not declared', async () => {
    const dir = await bundle((y) => {
      y.models.ctr.inputs = { sparse_ids: y.models.ctr.inputs.sparse_ids };
    });
    expect(await errorPaths(dir)).toEqual(['models.ctr.inputs']);
  });

  it('names version when it differs from the folder name', async () => {
    const dir = await bundle((y) => {
      y.version = 'v2';
    });
    expect(await errorPaths(dir)).toEqual(['version']);
  });

  it('names the pipeline.yaml line of a YAML syntax error', async () => {
    const dir = await bundle();
    const file = join(dir, PIPELINE_FILE);
    await writeFile(file, `${await readFile(file, 'utf8')}\nbroken: [unclosed\n`);
    const paths = await errorPaths(dir);
    expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) expect(path).toMatch(/^pipeline\.yaml:/);
  });

  describe('golden.jsonl', () => {
    const goldenOf = (dir: string) => join(dir, GOLDEN_FILE);

    it('is checked when present: the example bundle matches its golden scores', async () => {
      const dir = await bundle();
      const lines = (await readFile(goldenOf(dir), 'utf8')).trim().split('\n');
      expect(lines.length).toBeGreaterThan(0);
      const scene = await loadBundle(dir, engine);
      expect(await checkGolden(scene, engine)).toBe(lines.length);
      await Promise.all(scene.models.map((m) => engine.unload(m.id)));
    });

    it('names the line and candidate of a score that drifted beyond the tolerance', async () => {
      const dir = await bundle();
      const lines = (await readFile(goldenOf(dir), 'utf8')).trim().split('\n');
      const second = JSON.parse(lines[1]);
      second.expected[3] += 0.01;
      lines[1] = JSON.stringify(second);
      await writeFile(goldenOf(dir), `${lines.join('\n')}\n`);
      expect(await errorPaths(dir)).toEqual(['golden.jsonl:2']);
    });

    it('names the line of a malformed golden request', async () => {
      const dir = await bundle();
      const lines = (await readFile(goldenOf(dir), 'utf8')).trim().split('\n');
      await writeFile(
        goldenOf(dir),
        `not json\n${lines[0]}\n{"user":{"id":"u1"},"candidates":[],"expected":[]}\n`,
      );
      expect(await errorPaths(dir)).toEqual(['golden.jsonl:1', 'golden.jsonl:3']);
    });

    it('checks a case of more candidates than a part holds, naming a drift by its index in the case', async () => {
      const dir = await bundle();
      const scene = await loadBundle(dir, engine, { golden: false });
      const lines = (await readFile(goldenOf(dir), 'utf8')).trim().split('\n');
      const base = JSON.parse(lines[0]);
      const n = 1300;
      const request = {
        user: base.user,
        context: base.context,
        candidates: Array.from({ length: n }, (_, c) => ({
          id: `big${c}`,
          features: { ...base.candidates[c % base.candidates.length].features, price: c / 10 },
        })),
      };
      const { scores } = await scoreScene(scene, engine, goldenFrame(request));
      const golden = { ...request, expected: Array.from(scores) };
      await writeFile(goldenOf(dir), `${JSON.stringify(golden)}\n`);
      expect(await checkGolden(scene, engine)).toBe(1);

      golden.expected[1100] += 0.5;
      await writeFile(goldenOf(dir), `${JSON.stringify(golden)}\n`);
      await expect(checkGolden(scene, engine)).rejects.toMatchObject({
        details: [
          {
            path: 'golden.jsonl:1',
            message: expect.stringMatching(/^candidates\[1100\] \(big1100\): expected /),
          },
        ],
      });
      await Promise.all(scene.models.map((m) => engine.unload(m.id)));
    });

    it('is optional', async () => {
      const dir = await bundle(async (_y, d) => rm(goldenOf(d)));
      const scene = await loadBundle(dir, engine);
      expect(await checkGolden(scene, engine)).toBe(0);
      await Promise.all(scene.models.map((m) => engine.unload(m.id)));
    });
  });

  describe('hostile bundle files', () => {
    /** A sparse file of `bytes` bytes: nothing is written, so it costs no disk. */
    async function sparse(file: string, bytes: number): Promise<void> {
      const handle = await open(file, 'w');
      await handle.truncate(bytes);
      await handle.close();
    }
    const GB = 1_000_000_000;

    it('refuses a model file that is a symlink out of the bundles folder', async () => {
      const outside = join(root, 'outside-ctr.onnx');
      await cp(join(EXAMPLE, 'ctr.onnx'), outside);
      const dir = await bundle(async (_y, d) => {
        await rm(join(d, 'ctr.onnx'));
        await symlink(outside, join(d, 'ctr.onnx'));
      });
      const details = await errorDetails(dir);
      expect(details).toEqual([
        {
          path: 'models.ctr.file',
          message: expect.stringMatching(/^ctr\.onnx resolves to .*outside the bundles folder/),
        },
      ]);
    });

    it('loads a model file linked from another version inside the bundles folder', async () => {
      const dir = await bundle(async (_y, d) => {
        const shared = join(d, '..', 'v0');
        await mkdir(shared);
        await rename(join(d, 'ctr.onnx'), join(shared, 'ctr.onnx'));
        await symlink('../v0/ctr.onnx', join(d, 'ctr.onnx'));
      });
      const scene = await loadBundle(dir, engine);
      await Promise.all(scene.models.map((m) => engine.unload(m.id)));
    });

    it('refuses a pipeline.yaml linked to a file outside, without quoting it', async () => {
      const dir = await bundle();
      await rm(join(dir, PIPELINE_FILE));
      await symlink('/etc/passwd', join(dir, PIPELINE_FILE));
      const details = await errorDetails(dir);
      expect(details).toEqual([
        { path: PIPELINE_FILE, message: expect.stringContaining('outside the bundles folder') },
      ]);
      expect(details[0].message).not.toContain('root:');
    });

    it('refuses a version folder that is a link out of the bundles folder', async () => {
      const real = await bundle();
      const outside = join(root, 'outside-v1');
      await rename(real, outside);
      await symlink(outside, real);
      expect(await errorDetails(real)).toEqual([
        { message: expect.stringMatching(/^the version folder resolves to .*outside/) },
      ]);
    });

    it('refuses a YAML alias bomb before it expands', async () => {
      const dir = await bundle();
      const lines = ['a: &a [x, x, x, x, x, x, x, x, x]'];
      let previous = 'a';
      for (const name of 'bcdefghi') {
        lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
        previous = name;
      }
      await writeFile(join(dir, PIPELINE_FILE), lines.join('\n'));
      expect(await errorDetails(dir)).toEqual([
        {
          path: PIPELINE_FILE,
          message: expect.stringContaining(`aliases may expand at most ${MAX_YAML_ALIASES} times`),
        },
      ]);
    });

    it.each([
      [PIPELINE_FILE, 1048576, 'BUNDLES_MAX_YAML_BYTES'],
      [GOLDEN_FILE, 16777216, 'BUNDLES_MAX_GOLDEN_BYTES'],
    ])('refuses a 1 GB %s from its size, without reading it', async (file, limit, setting) => {
      const dir = await bundle();
      await sparse(join(dir, file), GB);
      expect(await errorDetails(dir)).toEqual([
        {
          path: file,
          message: `${GB} bytes, more than the ${limit} allowed (${setting}); not read`,
        },
      ]);
    });

    it('refuses a 1 GB model file from its size by default, without loading it', async () => {
      const dir = await bundle();
      await sparse(join(dir, 'mtl.onnx'), GB);
      expect(await errorDetails(dir)).toEqual([
        {
          path: 'models.mtl.file',
          message: `mtl.onnx is ${GB} bytes, more than the 536870912 allowed (BUNDLES_MAX_MODEL_BYTES); not read`,
        },
      ]);
    });

    it('refuses a model file over BUNDLES_MAX_MODEL_BYTES without loading it', async () => {
      const dir = await bundle();
      const limits = { maxYamlBytes: 1 << 20, maxGoldenBytes: 1 << 20, maxModelBytes: 2_000_000 };
      expect(await errorDetails(dir, { limits })).toEqual([
        {
          path: 'models.ctr.file',
          message: expect.stringMatching(
            /^ctr\.onnx is \d+ bytes, more than the 2000000 allowed \(BUNDLES_MAX_MODEL_BYTES\)/,
          ),
        },
      ]);
    });

    it('refuses a pipeline.yaml that is a FIFO without waiting for a writer', async () => {
      const dir = await bundle();
      await rm(join(dir, PIPELINE_FILE));
      execFileSync('mkfifo', [join(dir, PIPELINE_FILE)]);
      expect(await errorDetails(dir)).toEqual([
        { path: PIPELINE_FILE, message: 'not a regular file' },
      ]);
    });
  });

  it('loads a second generation of a loaded version beside the first, under its own ids', async () => {
    const dir = await bundle();
    const first = await loadBundle(dir, engine);
    const second = await loadBundle(dir, engine, { generation: 2 });
    try {
      expect(second.models.map((m) => m.id)).toEqual(['feed/v1#2/ctr', 'feed/v1#2/mtl']);
      for (const id of [...MODEL_IDS, 'feed/v1#2/ctr', 'feed/v1#2/mtl'])
        expect(engine.pool(id)?.live.length).toBe(1);
    } finally {
      await Promise.all([...first.models, ...second.models].map((m) => engine.unload(m.id)));
    }
  });
});
