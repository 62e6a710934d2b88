import type { SceneRegistry } from '@app/pipeline';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RegistryAdminPageSource } from './registry-admin-page.source';

describe('RegistryAdminPageSource', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** A registry serving `scene -> version`, each from a bundle folder with or without golden.jsonl. */
  function registry(serving: [scene: string, version: string, golden: boolean][]): SceneRegistry {
    const folders = new Map<string, string>();
    for (const [scene, , golden] of serving) {
      const dir = mkdtempSync(join(tmpdir(), `admin-source-${scene}-`));
      dirs.push(dir);
      if (golden) writeFileSync(join(dir, 'golden.jsonl'), '');
      folders.set(scene, dir);
    }
    return {
      status: () => serving.map(([scene, version]) => ({ scene, version })),
      describe: (scene: string) => ({
        versions: serving
          .filter(([name]) => name === scene)
          .map(([, version]) => ({ version, dir: folders.get(scene)! })),
      }),
    } as unknown as SceneRegistry;
  }

  it('shows each serving version as stable, having passed the gate, sorted by scene', async () => {
    const before = Date.now();
    const view = await new RegistryAdminPageSource(
      registry([
        ['news', 'v3', false],
        ['feed', 'v1', true],
      ]),
    ).view();
    expect(view.replica).toBe(hostname());
    expect(view.generatedAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(view.scenes.map((s) => s.scene)).toEqual(['feed', 'news']);
    const [feed, news] = view.scenes;
    expect(feed).toEqual({
      scene: 'feed',
      versions: [
        {
          version: 'v1',
          state: 'serving',
          reasons: [],
          validation: [
            { check: 'schema', outcome: 'pass', messages: [] },
            { check: 'model contract', outcome: 'pass', messages: [] },
            { check: 'dry run', outcome: 'pass', messages: [] },
            { check: 'golden', outcome: 'pass', messages: [] },
          ],
        },
      ],
      traffic: { stable: 'v1', experiments: [] },
    });
    expect(news.versions[0].validation[3]).toEqual({
      check: 'golden',
      outcome: 'skipped',
      messages: ['no golden.jsonl in the bundle'],
    });
    expect(news.canary).toBeUndefined();
    expect(news.shadow).toBeUndefined();
  });

  it('shows no scene while none serves', async () => {
    expect((await new RegistryAdminPageSource(registry([])).view()).scenes).toEqual([]);
  });
});
