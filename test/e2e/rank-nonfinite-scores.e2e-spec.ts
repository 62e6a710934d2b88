/**
 * Scores that are still not finite after fusion (ranker app over HTTP, a copy of the example
 * bundle with another fusion): they are ranked last in request order, marked `nonFinite` with
 * `score: null`, summed in `nonFiniteScores`, and counted per scene and version.
 *
 * The fusion `ctr.ctr / mtl.ctr + 1 / (1 - mtl.ctr)` is finite on the declared defaults (so the
 * loader's dry run accepts the bundle), but a huge item rating saturates both models: a rating of
 * 1e6 drives every output to 0 (0/0: NaN) and -1e30 drives the CTRs to 1 (1/0: +Infinity). The
 * ratings are valid float32 column values, so nothing in the features is refused.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { RankerClient } from './ranker-client';

const EXAMPLE = resolve(__dirname, '../../models/feed/v1');

interface Item {
  id: string;
  score: number | null;
  nonFinite?: true;
}

describe('non-finite fused scores (ranker app over HTTP, bundle with a partial fusion)', () => {
  let root: string;
  let ranker: RankerClient;

  const nonFiniteTotal = async () => {
    const text = await (await fetch(`${ranker.baseUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('ranker_rank_nonfinite_scores_total{scene="feed",version="v1"}'));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'ranker-nonfinite-'));
    const dir = join(root, 'feed', 'v1');
    await cp(EXAMPLE, dir, { recursive: true });
    await rm(join(dir, 'golden.jsonl')); // its expected scores are for the original fusion
    const file = join(dir, 'pipeline.yaml');
    const yaml = parse(await readFile(file, 'utf8'));
    yaml.fusion = 'ctr.ctr / mtl.ctr + 1 / (1 - mtl.ctr)';
    await writeFile(file, stringify(yaml));
    await writeFile(join(dir, 'READY'), ''); // written last: the folder is complete
    ranker = await RankerClient.start({ BUNDLES_DIR: root });
  });
  afterAll(async () => {
    await ranker?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('ranks finite scores first, then the non-finite ones in request order, marked and counted', async () => {
    const before = await nonFiniteTotal();
    const reply = await ranker.rank('feed', {
      user: { id: 'u1' },
      candidates: [
        { id: 'nan-1', features: { rating: 1e6 } },
        { id: 'i1' },
        { id: 'inf-1', features: { rating: -1e30 } },
        { id: 'i2' },
        { id: 'nan-2', features: { rating: 1e6 } },
        { id: 'i3' },
      ],
    });
    expect(reply.status).toBe(200);
    expect(reply.body.nonFiniteScores).toBe(3);
    const items: Item[] = reply.body.items;
    expect(items.map((i) => i.id).slice(3)).toEqual(['nan-1', 'inf-1', 'nan-2']);
    expect(new Set(items.slice(0, 3).map((i) => i.id))).toEqual(new Set(['i1', 'i2', 'i3']));
    for (const item of items.slice(0, 3)) {
      expect(Number.isFinite(item.score)).toBe(true);
      expect(item).not.toHaveProperty('nonFinite');
    }
    for (let i = 1; i < 3; i++) expect(items[i - 1].score!).toBeGreaterThanOrEqual(items[i].score!);
    for (const item of items.slice(3))
      expect(item).toEqual({ id: item.id, score: null, nonFinite: true });
    expect(await nonFiniteTotal()).toBe(before + 3);
  });

  it('leaves them out of topK while finite scores remain, and says how many there were', async () => {
    const reply = await ranker.rank('feed', {
      user: { id: 'u1' },
      candidates: [{ id: 'nan-1', features: { rating: 1e6 } }, { id: 'i1' }, { id: 'i2' }],
      topK: 2,
    });
    expect(reply.body.items.map((i: Item) => i.id).sort()).toEqual(['i1', 'i2']);
    expect(reply.body.nonFiniteScores).toBe(1);
  });

  it('carries no nonFiniteScores field when every score is finite', async () => {
    const reply = await ranker.rank('feed', { user: { id: 'u1' }, candidates: [{ id: 'i1' }] });
    expect(reply.status).toBe(200);
    expect(reply.body).not.toHaveProperty('nonFiniteScores');
    expect(Number.isFinite(reply.body.items[0].score)).toBe(true);
  });
});
