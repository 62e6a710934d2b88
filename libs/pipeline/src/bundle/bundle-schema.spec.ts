import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { BundleInvalidError, ErrorDetail } from '@app/common';
import { parseBundleSpec } from './bundle-schema';
import { ColumnSpec } from './bundle-definition';

const EXAMPLE = join(__dirname, '../../../../models/feed/v1/pipeline.yaml');

/** A small valid spec; each broken case below changes one thing in a fresh copy. */
function validSpec() {
  return {
    scene: 'feed',
    version: 'v1',
    features: {
      user: { age: { type: 'number', default: 30 }, gender: { type: 'string', default: 'x' } },
      item: { category: { type: 'string', default: '' }, price: { type: 'number', default: 0 } },
      context: { hour: { type: 'number', default: 12 } },
    },
    models: {
      ctr: {
        file: 'ctr.onnx',
        inputs: {
          sparse_ids: {
            dtype: 'int64',
            columns: [
              { op: 'hash', feature: 'user.id', buckets: 100 },
              { op: 'cross', features: ['user.gender', 'item.category'], buckets: 100 },
              { op: 'bucketize', feature: 'user.age', boundaries: [18, 30, 50] },
            ],
          },
          dense: {
            dtype: 'float32',
            columns: [
              { op: 'standardize', feature: 'user.age', mean: 35, std: 12, clip: [-4, 4] },
              { op: 'log1p', feature: 'item.price' },
              { op: 'identity', feature: 'context.hour' },
              { op: 'identity', feature: 'item.price', clip: [0, 100] },
              { op: 'match', features: ['user.gender', 'item.category'] },
            ],
          },
        },
        outputs: ['ctr'],
      },
    },
    fusion: 'ctr.ctr',
    postprocess: { topK: 10 },
  };
}
type Spec = ReturnType<typeof validSpec> & Record<string, unknown>;

/** The details of the BundleInvalidError thrown for `spec`; fails the test if none is thrown. */
function detailsOf(spec: unknown): ErrorDetail[] {
  try {
    parseBundleSpec(spec, 'bundles/feed/v1');
  } catch (error) {
    expect(error).toBeInstanceOf(BundleInvalidError);
    return (error as BundleInvalidError).details;
  }
  throw new Error('expected parseBundleSpec to throw BundleInvalidError');
}

function broken(mutate: (spec: Spec) => void): ErrorDetail[] {
  const spec = structuredClone(validSpec()) as Spec;
  mutate(spec);
  return detailsOf(spec);
}

const dense = (s: Spec) => s.models.ctr.inputs.dense.columns as Record<string, unknown>[];
const sparse = (s: Spec) => s.models.ctr.inputs.sparse_ids.columns as Record<string, unknown>[];
const features = (s: Spec) => s.features as Record<string, Record<string, unknown>>;

describe('parseBundleSpec', () => {
  describe('the example bundle models/feed/v1/pipeline.yaml', () => {
    const spec = parseBundleSpec(parse(readFileSync(EXAMPLE, 'utf8')), EXAMPLE);

    it('names the scene and version', () => {
      expect(spec.scene).toBe('feed');
      expect(spec.version).toBe('v1');
      expect(spec.description).toMatch(/^Feed ranking example/);
    });

    it('declares two models with their files and outputs', () => {
      expect(
        spec.models.map((m) => [m.name, m.file, m.outputs, m.intraOpThreads, m.maxRunRows]),
      ).toEqual([
        ['ctr', 'ctr.onnx', ['ctr'], 1, 256],
        ['mtl', 'mtl.onnx', ['ctr', 'cvr'], 1, 256],
      ]);
    });

    it('gives each model 26 int64 id columns and 13 float32 dense columns', () => {
      for (const model of spec.models) {
        expect(model.inputs.map((i) => [i.name, i.dtype, i.columns.length])).toEqual([
          ['sparse_ids', 'int64', 26],
          ['dense', 'float32', 13],
        ]);
      }
    });

    it('turns feature names into typed references', () => {
      const [ctr, mtl] = spec.models;
      expect(ctr.inputs[0].columns[0]).toEqual<ColumnSpec>({
        op: 'hash',
        feature: { source: 'user', name: 'id' },
        buckets: 1000,
      });
      expect(mtl.inputs[0].columns[0]).toEqual<ColumnSpec>({
        op: 'hash',
        feature: { source: 'user', name: 'id' },
        buckets: 500,
      });
      expect(ctr.inputs[0].columns[21]).toEqual<ColumnSpec>({
        op: 'cross',
        features: [
          { source: 'user', name: 'gender' },
          { source: 'item', name: 'category' },
        ],
        buckets: 1000,
      });
      expect(ctr.inputs[1].columns[0]).toEqual<ColumnSpec>({
        op: 'standardize',
        feature: { source: 'user', name: 'age' },
        mean: 35,
        std: 12,
        clip: [-4, 4],
      });
      expect(ctr.inputs[1].columns[9]).toEqual<ColumnSpec>({
        op: 'match',
        features: [
          { source: 'user', name: 'fav_category' },
          { source: 'item', name: 'category' },
        ],
      });
      expect(mtl.inputs[1].columns).toEqual(ctr.inputs[1].columns);
    });

    it('keeps the declared features with their types and defaults', () => {
      expect(Object.keys(spec.features.user)).toHaveLength(6);
      expect(Object.keys(spec.features.item)).toHaveLength(8);
      expect(Object.keys(spec.features.context)).toHaveLength(6);
      expect(spec.features.user.age).toEqual({ type: 'number', default: 30 });
      expect(spec.features.user.city).toEqual({ type: 'string', default: '' });
      expect(spec.features.context.page).toEqual({ type: 'string', default: 'home' });
    });

    it('keeps the fusion text and the postprocess and golden settings', () => {
      expect(spec.fusion).toBe('pow(ctr.ctr, 0.7) * pow(mtl.ctr, 0.3) * (1 + 2 * mtl.cvr)');
      expect(spec.postprocess).toEqual({ topK: 100 });
      expect(spec.golden).toEqual({ tolerance: 1e-4 });
    });
  });

  describe('a valid spec', () => {
    it('parses without error', () => {
      const spec = parseBundleSpec(validSpec(), 'here');
      expect(spec.models[0].inputs.map((i) => i.columns.length)).toEqual([3, 5]);
    });

    it('defaults topK to 100 and golden tolerance to 1e-4 when omitted', () => {
      const raw: Record<string, unknown> = validSpec();
      delete raw.postprocess;
      expect(parseBundleSpec(raw, 'here')).toMatchObject({
        postprocess: { topK: 100 },
        golden: { tolerance: 1e-4 },
      });
    });

    it('accepts item.id and user.id without a declaration', () => {
      const spec = structuredClone(validSpec()) as Spec;
      sparse(spec).push({ op: 'hash', feature: 'item.id', buckets: 7 });
      expect(parseBundleSpec(spec, 'here').models[0].inputs[0].columns[3]).toEqual({
        op: 'hash',
        feature: { source: 'item', name: 'id' },
        buckets: 7,
      });
    });
  });

  describe('prototype names', () => {
    it('refuses a feature named __proto__ as YAML parses it, and keeps the declarations intact', () => {
      const spec = parse(
        `scene: feed\nversion: v1\nfeatures:\n  user:\n    __proto__: { type: number, default: 1 }\n` +
          `models:\n  ctr:\n    file: ctr.onnx\n    inputs:\n      dense:\n        dtype: float32\n` +
          `        columns: [{ op: identity, feature: user.type }]\n    outputs: [ctr]\nfusion: ctr.ctr\n`,
      );
      expect(detailsOf(spec)).toEqual([
        { path: 'features.user.__proto__', message: "'__proto__' is reserved" },
        {
          path: 'models.ctr.inputs.dense.columns[0].feature',
          message: "'user.type' is not declared under features.user",
        },
      ]);
    });

    it('accepts a declared feature named constructor', () => {
      const spec = structuredClone(validSpec()) as Spec;
      Object.defineProperty(features(spec).user, 'constructor', {
        value: { type: 'number', default: 2 },
        enumerable: true,
      });
      dense(spec)[2].feature = 'user.constructor';
      expect(parseBundleSpec(spec, 'here').models[0].inputs[1].columns[2]).toEqual({
        op: 'identity',
        feature: { source: 'user', name: 'constructor' },
      });
    });
  });

  describe('broken specs', () => {
    const cases: [string, (s: Spec) => void, string, RegExp][] = [
      [
        'an undeclared feature reference',
        (s) => (dense(s)[3].feature = 'item.nope'),
        'models.ctr.inputs.dense.columns[3].feature',
        /'item\.nope' is not declared under features\.item/,
      ],
      [
        'a reference to a name every object inherits (constructor)',
        (s) => (dense(s)[3].feature = 'user.constructor'),
        'models.ctr.inputs.dense.columns[3].feature',
        /'user\.constructor' is not declared under features\.user/,
      ],
      [
        'a reference to toString',
        (s) => (sparse(s)[1].features = ['user.toString', 'item.category']),
        'models.ctr.inputs.sparse_ids.columns[1].features[0]',
        /'user\.toString' is not declared under features\.user/,
      ],
      [
        'a feature reference without a source',
        (s) => (dense(s)[3].feature = 'price'),
        'models.ctr.inputs.dense.columns[3].feature',
        /must be <user\|item\|context>\.<feature>/,
      ],
      [
        'a feature reference with an unknown source',
        (s) => (dense(s)[3].feature = 'session.price'),
        'models.ctr.inputs.dense.columns[3].feature',
        /must be <user\|item\|context>\.<feature>/,
      ],
      [
        'an undeclared feature inside a cross',
        (s) => (sparse(s)[1].features = ['user.gender', 'item.colour']),
        'models.ctr.inputs.sparse_ids.columns[1].features[1]',
        /'item\.colour' is not declared/,
      ],
      [
        'context.id, which is not implicit',
        (s) => (dense(s)[2].feature = 'context.id'),
        'models.ctr.inputs.dense.columns[2].feature',
        /not declared under features\.context/,
      ],
      [
        'an unknown feature type',
        (s) => (features(s).user.age = { type: 'int', default: 30 }),
        'features.user.age.type',
        /must be one of number, string, got string "int"/,
      ],
      [
        'a number feature without a default',
        (s) => (features(s).item.price = { type: 'number' }),
        'features.item.price.default',
        /must be a number, got nothing/,
      ],
      [
        'a string feature with a number default',
        (s) => (features(s).user.gender = { type: 'string', default: 5 }),
        'features.user.gender.default',
        /must be a string/,
      ],
      [
        'an unknown feature source',
        (s) => (features(s).session = {}),
        'features.session',
        /unknown key/,
      ],
      [
        'a declared user.id',
        (s) => (features(s).user.id = { type: 'string', default: '' }),
        'features.user.id',
        /'id' is implicit for user features/,
      ],
      [
        'an unknown key in a feature declaration',
        (s) => (features(s).user.age = { type: 'number', default: 30, min: 0 }),
        'features.user.age.min',
        /unknown key \(allowed: type, default\)/,
      ],
      [
        'a fusion that does not parse',
        (s) => (s.fusion = 'ctr.ctr *'),
        'fusion',
        /unexpected end of expression at column 10/,
      ],
      [
        'a missing fusion',
        (s) => delete (s as Record<string, unknown>).fusion,
        'fusion',
        /must be a non-empty string, got nothing/,
      ],
      [
        'a fusion naming an unknown model output',
        (s) => (s.fusion = 'ctr.ctr * mtl.cvr'),
        'fusion',
        /'mtl\.cvr' is not a model output \(known: ctr\.ctr\)/,
      ],
      [
        'a fusion reaching for a global (process.exit)',
        (s) => (s.fusion = 'ctr.ctr + process.exit'),
        'fusion',
        /'process\.exit' is not a model output \(known: ctr\.ctr\)/,
      ],
      [
        'a fusion calling constructor()',
        (s) => (s.fusion = 'constructor(ctr.ctr)'),
        'fusion',
        /unknown function 'constructor'/,
      ],
      [
        'a fusion naming this',
        (s) => (s.fusion = 'this'),
        'fusion',
        /'this' must be <model>\.<output> or a function call/,
      ],
      [
        'a model file given as an absolute path',
        (s) => (s.models.ctr.file = '/etc/ctr.onnx'),
        'models.ctr.file',
        /must match/,
      ],
      [
        'a model file that is not .onnx',
        (s) => (s.models.ctr.file = 'ctr.pt'),
        'models.ctr.file',
        /must match/,
      ],
      [
        'a model file outside the bundle folder',
        (s) => (s.models.ctr.file = '../ctr.onnx'),
        'models.ctr.file',
        /must match/,
      ],
      [
        'a model without outputs',
        (s) => (s.models.ctr.outputs = []),
        'models.ctr.outputs',
        /at least 1 entry/,
      ],
      ['no models at all', (s) => (s.models = {} as Spec['models']), 'models', /at least one/],
      [
        'an unknown input dtype',
        (s) => (s.models.ctr.inputs.dense.dtype = 'float64'),
        'models.ctr.inputs.dense.dtype',
        /must be one of float32, int64/,
      ],
      [
        'a hash column in a float32 input',
        (s) => (dense(s)[0] = { op: 'hash', feature: 'user.age', buckets: 10 }),
        'models.ctr.inputs.dense.columns[0].op',
        /must be one of identity, log1p, standardize, match, bucketize, got string "hash"/,
      ],
      [
        'a standardize column in an int64 input',
        (s) => (sparse(s)[0] = { op: 'standardize', feature: 'user.age', mean: 0, std: 1 }),
        'models.ctr.inputs.sparse_ids.columns[0].op',
        /must be one of hash, cross, bucketize/,
      ],
      [
        'an unknown op',
        (s) => (dense(s)[1].op = 'sqrt'),
        'models.ctr.inputs.dense.columns[1].op',
        /must be one of/,
      ],
      [
        'bucketize boundaries that repeat',
        (s) => (sparse(s)[2].boundaries = [18, 30, 30]),
        'models.ctr.inputs.sparse_ids.columns[2].boundaries',
        /must be strictly increasing/,
      ],
      [
        'bucketize boundaries that decrease',
        (s) => (sparse(s)[2].boundaries = [50, 30]),
        'models.ctr.inputs.sparse_ids.columns[2].boundaries',
        /must be strictly increasing/,
      ],
      [
        'empty bucketize boundaries',
        (s) => (sparse(s)[2].boundaries = []),
        'models.ctr.inputs.sparse_ids.columns[2].boundaries',
        /at least 1 entry/,
      ],
      [
        'a boundary that is not a number',
        (s) => (sparse(s)[2].boundaries = [18, '30']),
        'models.ctr.inputs.sparse_ids.columns[2].boundaries[1]',
        /must be a number/,
      ],
      [
        'std: 0',
        (s) => (dense(s)[0].std = 0),
        'models.ctr.inputs.dense.columns[0].std',
        /must not be 0/,
      ],
      [
        'a clip with min above max',
        (s) => (dense(s)[0].clip = [4, -4]),
        'models.ctr.inputs.dense.columns[0].clip',
        /min must be <= max/,
      ],
      [
        'a clip with three values',
        (s) => (dense(s)[3].clip = [0, 1, 2]),
        'models.ctr.inputs.dense.columns[3].clip',
        /must be \[min, max\]/,
      ],
      [
        'zero hash buckets',
        (s) => (sparse(s)[0].buckets = 0),
        'models.ctr.inputs.sparse_ids.columns[0].buckets',
        /must be >= 1/,
      ],
      [
        'fractional hash buckets',
        (s) => (sparse(s)[0].buckets = 10.5),
        'models.ctr.inputs.sparse_ids.columns[0].buckets',
        /must be an integer/,
      ],
      [
        'more hash buckets than fit in 31 bits',
        (s) => (sparse(s)[0].buckets = 2 ** 31),
        'models.ctr.inputs.sparse_ids.columns[0].buckets',
        /must be <= 2147483647/,
      ],
      [
        'a cross of one feature',
        (s) => (sparse(s)[1].features = ['user.gender']),
        'models.ctr.inputs.sparse_ids.columns[1].features',
        /at least 2 entries/,
      ],
      [
        'a match of three features',
        (s) => (dense(s)[4].features = ['user.gender', 'item.category', 'item.category']),
        'models.ctr.inputs.dense.columns[4].features',
        /exactly two features/,
      ],
      [
        'an unknown key in a column',
        (s) => (sparse(s)[0].bucket = 10),
        'models.ctr.inputs.sparse_ids.columns[0].bucket',
        /unknown key \(allowed: op, feature, buckets\)/,
      ],
      [
        'an unknown key at the top level',
        (s) => (s.postprocesss = { topK: 5 }),
        'postprocesss',
        /unknown key/,
      ],
      [
        'an unknown key in a model',
        (s) => ((s.models.ctr as Record<string, unknown>).threads = 2),
        'models.ctr.threads',
        /unknown key/,
      ],
      [
        'an unknown key in postprocess',
        (s) => (s.postprocess = { topK: 10, topN: 5 } as Spec['postprocess']),
        'postprocess.topN',
        /unknown key \(allowed: topK\)/,
      ],
      ['topK: 0', (s) => (s.postprocess.topK = 0), 'postprocess.topK', /must be >= 1, got 0/],
      [
        'a fractional topK',
        (s) => (s.postprocess.topK = 2.5),
        'postprocess.topK',
        /must be an integer/,
      ],
      [
        'topK as a string',
        (s) => ((s.postprocess as Record<string, unknown>).topK = '10'),
        'postprocess.topK',
        /must be a number, got string "10"/,
      ],
      [
        'intraOpThreads out of range',
        (s) => ((s.models.ctr as Record<string, unknown>).intraOpThreads = 65),
        'models.ctr.intraOpThreads',
        /must be <= 64/,
      ],
      [
        'a negative maxRunRows',
        (s) => ((s.models.ctr as Record<string, unknown>).maxRunRows = -1),
        'models.ctr.maxRunRows',
        /must be >= 0/,
      ],
      [
        'a fractional maxRunRows',
        (s) => ((s.models.ctr as Record<string, unknown>).maxRunRows = 128.5),
        'models.ctr.maxRunRows',
        /must be an integer/,
      ],
      [
        'maxRunRows as a string',
        (s) => ((s.models.ctr as Record<string, unknown>).maxRunRows = '256'),
        'models.ctr.maxRunRows',
        /must be a number, got string "256"/,
      ],
      ['a scene with a slash', (s) => (s.scene = 'feed/x'), 'scene', /must match/],
      ['a missing version', (s) => (s.version = ''), 'version', /non-empty string/],
      [
        'a model name that is not an identifier',
        (s) => {
          s.models = { 'ctr-v2': s.models.ctr } as unknown as Spec['models'];
          s.fusion = '1';
        },
        'models.ctr-v2',
        /model name must match/,
      ],
    ];

    it.each(cases)('reports %s at its path', (_name, mutate, path, message) => {
      const details = broken(mutate);
      expect(details).toContainEqual({ path, message: expect.stringMatching(message) });
    });

    it('rejects a document that is not a mapping', () => {
      expect(detailsOf(['scene', 'feed'])).toContainEqual({
        path: '',
        message: 'must be a mapping, got a list',
      });
      expect(detailsOf(null).map((d) => d.path)).toEqual(
        expect.arrayContaining(['', 'scene', 'version', 'models', 'fusion']),
      );
    });

    it('reports several problems together, each with its path', () => {
      const details = broken((s) => {
        features(s).user.age = { type: 'int', default: 30 };
        dense(s)[3].feature = 'item.nope';
        dense(s)[0].std = 0;
        s.models.ctr.file = 'ctr.bin';
        s.fusion = 'ctr.ctr + mtl.cvr';
        s.postprocess.topK = 0;
        s.unexpected = true;
      });
      const paths = details.map((d) => d.path);
      expect(paths).toEqual(
        expect.arrayContaining([
          'features.user.age.type',
          'models.ctr.inputs.dense.columns[3].feature',
          'models.ctr.inputs.dense.columns[0].std',
          'models.ctr.file',
          'fusion',
          'postprocess.topK',
          'unexpected',
        ]),
      );
    });

    it('names the bundle and every problem in the error message', () => {
      const spec = structuredClone(validSpec()) as Spec;
      dense(spec)[0].std = 0;
      spec.postprocess.topK = 0;
      expect(() => parseBundleSpec(spec, 'bundles/feed/v1')).toThrow(
        'bundle bundles/feed/v1 is invalid: models.ctr.inputs.dense.columns[0].std: must not be 0; ' +
          'postprocess.topK: must be >= 1, got 0',
      );
    });

    it('reports an error with code BUNDLE_INVALID, status 422 and the bundle folder', () => {
      const spec = structuredClone(validSpec()) as Spec;
      spec.fusion = 'nope';
      try {
        parseBundleSpec(spec, 'bundles/feed/v1');
        throw new Error('did not throw');
      } catch (error) {
        expect(error).toMatchObject({
          code: 'BUNDLE_INVALID',
          status: 422,
          bundleDir: 'bundles/feed/v1',
        });
      }
    });
  });
});
