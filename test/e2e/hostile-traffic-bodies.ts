/**
 * fast-check generators of admin traffic bodies that must be refused: a valid traffic config
 * (trafficConfigArb, over SPEC_VERSIONS) with one to three poisons, each known to break a rule at
 * a known path: a bad value (hostile-values.ts) in any field, an unknown key (prototype names
 * among them) in any mapping, a mapping or list of another type, a required field missing, too
 * many entries, shares over 100, a duplicate name or salt, a bad or stale `expectedRevision`, a
 * bad `reason`.
 */
import { trafficConfigArb } from '@app/pipeline/testing';
import fc from 'fast-check';
import {
  anyValue,
  badDelta,
  badInt,
  badName,
  badPercent,
  badRatio,
  badSalt,
  badVersion,
  deep,
  longString,
  nanLike,
  notNumber,
  notString,
  PROTO,
  toJson,
} from './hostile-values';

type Obj = Record<string, unknown>;

/** A change that breaks the config, and the path its refusal must name. */
interface Poison {
  path: string;
  apply(config: Obj): void;
}

export interface PoisonedBody {
  /** The JSON text sent. */
  text: string;
  /** Paths a refusal may name: one of its details must be one of them or below one. */
  names: string[];
  /** What the body holds besides `expectedRevision` and `reason`: the config alone. */
  config: unknown;
}

// ---- where the poisons go ----

const ALLOWED: Record<string, string[]> = {
  root: ['stable', 'canary', 'experiments', 'shadow', 'expectedRevision', 'reason'],
  canary: ['version', 'percent', 'guardrail'],
  guardrail: [
    'window',
    'minRequests',
    'minErrors',
    'maxErrorRateDelta',
    'maxErrorRatio',
    'maxP99Ratio',
  ],
  experiment: ['name', 'salt', 'arms'],
  arm: ['name', 'version', 'share'],
  shadow: ['version', 'percent', 'topK'],
};
/** Paths as the API writes them (SpecReader.join). */
const join = (path: string, key: string | number) =>
  typeof key === 'number'
    ? `${path}[${key}]`
    : key === ''
      ? `${path}[""]`
      : path === ''
        ? key
        : `${path}.${key}`;

/** The value at `path` of `config` (segments as in join), or undefined. */
function at(config: Obj, segments: (string | number)[]): unknown {
  let value: unknown = config;
  for (const s of segments) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[s];
  }
  return value;
}
/** Sets an own property, `__proto__` included, without touching any prototype. */
function put(target: unknown, key: string | number, value: unknown): void {
  if (target === null || typeof target !== 'object') return;
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
const path = (segments: (string | number)[]) => segments.reduce<string>(join, '');

/** Every poison the config offers, each an arbitrary of its values. */
function poisonsOf(config: Obj): fc.Arbitrary<Poison>[] {
  const out: fc.Arbitrary<Poison>[] = [];
  /** `field` of the container at `where` set to a value of `values`. */
  const value = (where: (string | number)[], field: string, values: fc.Arbitrary<unknown>) =>
    out.push(
      values.map((v) => ({
        path: path([...where, field]),
        apply: (c: Obj) => put(at(c, where), field, v),
      })),
    );
  const remove = (where: (string | number)[], field: string) =>
    out.push(
      fc.constant({
        path: path([...where, field]),
        apply: (c: Obj) => {
          const container = at(c, where);
          if (container && typeof container === 'object') delete (container as Obj)[field];
        },
      }),
    );
  const unknownKey = (where: (string | number)[], kind: string) =>
    out.push(
      fc
        .tuple(
          fc
            .oneof(
              fc.constantFrom(...PROTO, ' ', 'Stable', 'stabel', 'version ', 'a.b', '\u0000'),
              fc.string({ maxLength: 20 }),
              longString(300),
            )
            .filter((k) => !ALLOWED[kind].includes(k)),
          anyValue,
        )
        .map(([key, v]) => ({
          path: path([...where, key]),
          apply: (c: Obj) => put(at(c, where), key, v),
        })),
    );
  /** The container at `where` replaced by something of another type. */
  const retype = (where: (string | number)[], list: boolean) =>
    out.push(
      fc
        .oneof(
          fc.constantFrom<unknown>(null, true, 0, 'x', list ? {} : [], list ? { a: 1 } : [1]),
          list ? fc.constant({ arms: [] }) : deep,
          nanLike,
        )
        .map((v) => ({
          path: path(where),
          apply: (c: Obj) => put(at(c, where.slice(0, -1)), where[where.length - 1], v),
        })),
    );

  unknownKey([], 'root');
  value([], 'stable', badVersion);
  remove([], 'stable');
  value([], 'expectedRevision', fc.oneof(notNumber, fc.constantFrom(-1, 1.5, 1e300, 2 ** 53)));
  value([], 'reason', fc.oneof(notString, longString(501)));
  retype(['experiments'], true);
  if (config.canary) {
    const c = ['canary'];
    unknownKey(c, 'canary');
    retype(c, false);
    value(c, 'version', fc.oneof(badVersion, fc.constant('v1')));
    value(c, 'percent', badPercent(100, 99.995));
    remove(c, 'version');
    remove(c, 'percent');
    const g = ['canary', 'guardrail'];
    unknownKey(g, 'guardrail');
    retype(g, false);
    value(g, 'window', badInt(9, 86_401));
    value(g, 'minRequests', badInt(0, 1e10));
    value(g, 'minErrors', badInt(0, 1e10));
    value(g, 'maxErrorRateDelta', badDelta);
    value(g, 'maxErrorRatio', badRatio);
    value(g, 'maxP99Ratio', badRatio);
    out.push(
      fc.constant({
        path: 'canary.guardrail',
        apply: (cfg: Obj) => {
          const guardrail = at(cfg, g) as Obj | undefined;
          if (guardrail && typeof guardrail === 'object')
            for (const key of ['maxErrorRateDelta', 'maxErrorRatio', 'maxP99Ratio'])
              delete guardrail[key];
        },
      }),
    );
  }
  if (config.shadow) {
    const s = ['shadow'];
    unknownKey(s, 'shadow');
    retype(s, false);
    value(s, 'version', fc.oneof(badVersion, fc.constant('v1')));
    value(s, 'percent', badPercent());
    value(s, 'topK', badInt(0, 100_001));
    remove(s, 'version');
  }
  const experiments = config.experiments as Obj[];
  out.push(
    fc.constant({
      path: 'experiments',
      apply: (c: Obj) =>
        put(
          c,
          'experiments',
          Array.from({ length: 17 }, (_, i) => ({
            name: `many${i}`,
            salt: `many-${i}`,
            arms: [{ name: 'a', version: 'v1', share: 1 }],
          })),
        ),
    }),
  );
  if (experiments.length > 1) {
    value(['experiments', 1], 'name', fc.constant(experiments[0].name));
    value(['experiments', 1], 'salt', fc.constant(experiments[0].salt));
  }
  experiments.forEach((experiment, i) => {
    const e = ['experiments', i];
    unknownKey(e, 'experiment');
    retype(e, false);
    value(e, 'name', badName);
    value(e, 'salt', badSalt);
    for (const field of ALLOWED.experiment) remove(e, field);
    const a = [...e, 'arms'];
    retype(a, true);
    value(e, 'arms', fc.constant([]));
    value(
      e,
      'arms',
      fc.constant(
        Array.from({ length: 17 }, (_, j) => ({ name: `a${j}`, version: 'v1', share: 1 })),
      ),
    );
    out.push(
      fc.constant({
        path: path(a),
        apply: (c: Obj) => {
          const arms = at(c, a);
          if (!Array.isArray(arms)) return;
          for (const arm of arms) put(arm, 'share', 100);
          if (arms.length === 1) arms.push({ name: 'zz', version: 'v1', share: 0.01 });
        },
      }),
    );
    const arms = experiment.arms as Obj[];
    if (arms.length > 1) value([...a, 1], 'name', fc.constant(arms[0].name));
    arms.forEach((_, j) => {
      const arm = [...a, j];
      unknownKey(arm, 'arm');
      retype(arm, false);
      value(arm, 'name', badName);
      value(arm, 'version', badVersion);
      value(arm, 'share', badPercent());
      for (const field of ALLOWED.arm) remove(arm, field);
    });
  });
  return out;
}

/** A valid config with one to three poisons, or only a stale expectedRevision (a 409). */
export const poisonedBody: fc.Arbitrary<PoisonedBody> = trafficConfigArb.chain((valid) => {
  const stale = fc.integer({ min: 1, max: 2 ** 31 }).map((revision) => ({
    text: toJson({ ...valid, expectedRevision: revision }),
    names: ['expectedRevision'],
    config: valid,
  }));
  const poisoned = fc
    .array(fc.oneof(...poisonsOf(valid as unknown as Obj)), { minLength: 1, maxLength: 3 })
    .map((poisons) => {
      const body = structuredClone(valid) as unknown as Obj;
      for (const poison of poisons) poison.apply(body);
      const text = toJson(body);
      const config = JSON.parse(text);
      if (config !== null && typeof config === 'object') {
        delete config.expectedRevision;
        delete config.reason;
      }
      return { text, names: poisons.map((p) => p.path), config };
    });
  return fc.oneof({ weight: 1, arbitrary: stale }, { weight: 12, arbitrary: poisoned });
});
