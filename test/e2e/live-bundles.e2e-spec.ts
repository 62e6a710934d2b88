/**
 * Bundles shipped into a running ranker (HTTP app, real workers, temp BUNDLES_DIR polled every
 * 200 ms) while callers rank without pause: a good version starts serving with no restart and the
 * old one's models are released; broken and hostile versions are rejected with their reasons,
 * visible in the admin list, while the serving version goes on; no call fails throughout.
 */
import { ScoringEngine } from '@app/scoring';
import { WorkerScoringEngine } from '@app/scoring/testing';
import { open, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EXAMPLE_BUNDLE, writeVersion } from '../support/bundle-versions';
import { startLiveRanker } from './live-ranker';
import { RankerClient } from './ranker-client';
import { demoRankBody, SteadyTraffic } from './steady-traffic';

const TOKEN = 'live-bundles-spec-token-0123456789';

interface Row {
  version: string;
  state: string;
  reasons: { path?: string; message: string }[];
}

describe('live bundles (ranker app over HTTP, BUNDLES_DIR polled)', () => {
  let root: string;
  let ranker: RankerClient;
  let close: () => Promise<void>;
  let traffic: SteadyTraffic;

  const versions = async (): Promise<Row[]> =>
    (await ranker.admin('GET', '/scenes/feed', TOKEN)).body.versions;
  /** Polls the admin list until every one of `states` (version -> state) holds. */
  const untilStates = async (states: Record<string, string>): Promise<Row[]> => {
    for (const end = Date.now() + 60_000; ; await sleep(100)) {
      const rows = await versions();
      const holds = Object.entries(states).every(([version, state]) =>
        rows.some((r) => r.version === version && r.state === state),
      );
      if (holds) return rows;
      if (Date.now() > end)
        throw new Error(`states ${JSON.stringify(states)} not reached: ${JSON.stringify(rows)}`);
    }
  };
  const reasonsOf = (rows: Row[], version: string) =>
    rows.find((r) => r.version === version)!.reasons;
  const modelLoaded = (id: string) =>
    (ranker.app.get(ScoringEngine) as WorkerScoringEngine).pool(id) !== undefined;

  beforeAll(async () => {
    ({ root, ranker, close } = await startLiveRanker('ranker-live-', {
      RANKER_ADMIN_TOKEN: TOKEN,
    }));
    traffic = new SteadyTraffic(`${ranker.baseUrl}/v1/scenes/feed/rank`, 4, (caller, call) =>
      demoRankBody(caller * 1000 + call, 20),
    );
  });

  afterAll(async () => {
    await traffic?.stop();
    await close?.();
  });

  it('serves a version dropped into BUNDLES_DIR with no restart, then releases the old one', async () => {
    expect((await traffic.until('v1')).status).toBe(200);
    await writeVersion(root, 'feed', 'v2');
    await traffic.until('v2');
    const rows = await untilStates({ v2: 'serving', v1: 'available' });
    expect(rows.map((r) => r.state)).toEqual(['serving', 'available']);
    expect(modelLoaded('feed/v1/ctr')).toBe(false);
    expect(modelLoaded('feed/v2/ctr')).toBe(true);
    expect(await ranker.metric('ranker_bundle_swap_ms_count{scene="feed"}')).toBe(1);
  });

  it('rejects broken versions with their reasons while the current one serves', async () => {
    await writeVersion(root, 'feed', 'v3', {
      edit: (y) => (y.models.ctr.inputs.sparse_ids.columns[3].op = 'bucketise'),
    });
    await writeVersion(root, 'feed', 'v4', {
      edit: (y) => {
        const { sparse_ids, dense } = y.models.ctr.inputs;
        y.models.ctr.inputs = { sparse_ids, dense_features: dense };
      },
    });
    await writeVersion(root, 'feed', 'v5', {
      edit: async (_y, dir) => {
        const lines = (await readFile(join(dir, 'golden.jsonl'), 'utf8')).trim().split('\n');
        const first = JSON.parse(lines[0]);
        first.expected[0] += 0.01;
        lines[0] = JSON.stringify(first);
        await writeFile(join(dir, 'golden.jsonl'), `${lines.join('\n')}\n`);
      },
    });
    await writeVersion(root, 'feed', 'v6', {
      edit: (_y, dir) => writeFile(join(dir, 'mtl.onnx'), 'this is not an ONNX model'),
    });
    // Half-written: copied straight into place, READY not written yet.
    await writeVersion(root, 'feed', 'v7', { ready: false, via: 'in-place' });

    const rows = await untilStates({
      v7: 'incomplete',
      v6: 'failed',
      v5: 'failed',
      v4: 'failed',
      v3: 'failed',
      v2: 'serving',
    });
    expect(reasonsOf(rows, 'v7')[0].message).toMatch(/^no READY file: write it last/);
    expect(reasonsOf(rows, 'v6')).toEqual([
      { path: 'models.mtl.file', message: expect.stringMatching(/^cannot load mtl\.onnx/) },
    ]);
    expect(reasonsOf(rows, 'v5')).toEqual([
      {
        path: 'golden.jsonl:1',
        message: expect.stringMatching(/^candidates\[0\] \(.*\): expected/),
      },
    ]);
    expect(reasonsOf(rows, 'v4').map((r) => r.path)).toEqual(
      expect.arrayContaining(['models.ctr.inputs']),
    );
    expect(reasonsOf(rows, 'v3')).toEqual([
      {
        path: 'models.ctr.inputs.sparse_ids.columns[3].op',
        message: expect.stringContaining('bucketise'),
      },
    ]);
    expect(
      await ranker.metric('ranker_bundle_reloads_total{scene="feed",outcome="rejected"}'),
    ).toBe(4);
    expect(
      await ranker.metric('ranker_bundle_versions{scene="feed",version="v6",state="failed"}'),
    ).toBe(1);
    // Every failed version is loaded once: their files did not change.
    await sleep(600);
    expect(
      await ranker.metric('ranker_bundle_reloads_total{scene="feed",outcome="rejected"}'),
    ).toBe(4);
    for (const v of ['v3', 'v4', 'v5', 'v6', 'v7'])
      expect(['ctr', 'mtl'].some((m) => modelLoaded(`feed/${v}/${m}`))).toBe(false);
  });

  it('rejects hostile versions with a clear reason while the current one serves', async () => {
    await writeVersion(root, 'feed', 'v8', {
      edit: async (_y, dir) => {
        await rm(join(dir, 'ctr.onnx'));
        await symlink(join(EXAMPLE_BUNDLE, 'ctr.onnx'), join(dir, 'ctr.onnx'));
      },
    });
    await writeVersion(root, 'feed', 'v9', {
      edit: (y) => (y.fusion = 'ctr.ctr + process.exit'),
    });
    await writeVersion(root, 'feed', 'v10', {
      edit: async (_y, dir) => {
        const handle = await open(join(dir, 'golden.jsonl'), 'w');
        await handle.truncate(1_000_000_000); // sparse: 1 GB that costs no disk
        await handle.close();
      },
    });
    const rows = await untilStates({ v10: 'failed', v9: 'failed', v8: 'failed', v2: 'serving' });
    expect(reasonsOf(rows, 'v8')).toEqual([
      {
        path: 'models.ctr.file',
        message: expect.stringMatching(/^ctr\.onnx resolves to .*, outside the bundles folder/),
      },
    ]);
    expect(reasonsOf(rows, 'v9')).toEqual([
      { path: 'fusion', message: expect.stringContaining("'process.exit' is not a model output") },
    ]);
    expect(reasonsOf(rows, 'v10')).toEqual([
      {
        path: 'golden.jsonl',
        message:
          '1000000000 bytes, more than the 16777216 allowed (BUNDLES_MAX_GOLDEN_BYTES); not read',
      },
    ]);
  });

  it('a scene dropped in with traffic.yaml pinning its older version answers from that version from its first 200', async () => {
    // The scene is built under a hidden name (not a scene) and renamed in whole, traffic.yaml with it.
    const stage = join(root, '.news.incoming');
    await writeVersion(stage, 'news', 'v1');
    await writeVersion(stage, 'news', 'v2', {
      edit: (yaml, dir) => {
        yaml.fusion = 'pow(ctr.ctr, 0.5) * pow(mtl.ctr, 0.5) * (1 + mtl.cvr)';
        return rm(join(dir, 'golden.jsonl'));
      },
    });
    await writeFile(join(stage, 'news', 'traffic.yaml'), 'stable: v1\n');
    const seen: string[] = [];
    let served = 0;
    const asking = (async () => {
      for (const end = Date.now() + 60_000; served < 20 && Date.now() < end;) {
        const reply = await ranker.rank('news', demoRankBody(seen.length, 5));
        seen.push(
          reply.status === 200 ? `200 ${reply.body.version}` : `${reply.status} ${reply.body.code}`,
        );
        if (reply.status === 200) served++;
        else await sleep(5);
      }
    })();
    await sleep(50);
    await rename(join(stage, 'news'), join(root, 'news'));
    await asking;
    expect(served).toBe(20);
    // Before the scene is found: unknown; then held until its traffic is applied; then v1 only.
    expect(new Set(seen)).toEqual(
      new Set(
        ['404 SCENE_NOT_FOUND', '503 SCENE_NOT_READY', '200 v1'].filter((s) => seen.includes(s)),
      ),
    );
    expect(seen.filter((s) => s.startsWith('200')).every((s) => s === '200 v1')).toBe(true);
    expect(seen.indexOf('200 v1')).toBeGreaterThan(seen.lastIndexOf('404 SCENE_NOT_FOUND'));
  });

  it('failed no call while versions came and went', async () => {
    const replies = await traffic.stop();
    expect(traffic.failures).toEqual([]);
    expect(new Set(replies.map((r) => r.version))).toEqual(new Set(['v1', 'v2']));
    expect(replies.length).toBeGreaterThan(20);
  });
});
