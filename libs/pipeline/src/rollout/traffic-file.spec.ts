import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFile,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  loadTrafficFile,
  MAX_TRAFFIC_FILE_BYTES,
  readTrafficYaml,
  TRAFFIC_FILE,
} from './traffic-file';

const FIXTURE = join(__dirname, 'fixtures/traffic.yaml');
const VERSIONS = ['v1', 'v2', 'v3', 'v4', 'v5'];

describe('loadTrafficFile', () => {
  let root: string;
  let scene: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'traffic-'));
    scene = join(root, 'feed');
    await mkdir(scene);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('is undefined for a scene without traffic.yaml', async () => {
    expect(await loadTrafficFile(scene, VERSIONS)).toBeUndefined();
  });

  it('reads the example with the sha256 of its bytes', async () => {
    await copyFile(FIXTURE, join(scene, TRAFFIC_FILE));
    const file = await loadTrafficFile(scene, VERSIONS);
    expect(file?.errors).toEqual([]);
    expect(file?.config?.stable).toBe('v1');
    expect(file?.path).toBe(join(scene, TRAFFIC_FILE));
    const digest = createHash('sha256')
      .update(await readFile(FIXTURE))
      .digest('hex');
    expect(file?.digest).toBe(digest);
  });

  it('refuses a 1 GB file without reading it', async () => {
    const path = join(scene, TRAFFIC_FILE);
    await writeFile(path, 'stable: v1\n');
    await truncate(path, 2 ** 30); // sparse: costs no disk
    const file = await loadTrafficFile(scene, VERSIONS);
    expect(file?.config).toBeUndefined();
    expect(file?.errors).toEqual([
      { path: TRAFFIC_FILE, message: `larger than ${MAX_TRAFFIC_FILE_BYTES} bytes` },
    ]);
  });

  it('refuses a folder, and a FIFO without blocking on it', async () => {
    await mkdir(join(scene, TRAFFIC_FILE));
    expect((await loadTrafficFile(scene, VERSIONS))?.errors).toEqual([
      { path: TRAFFIC_FILE, message: 'is not a regular file' },
    ]);
    await rm(join(scene, TRAFFIC_FILE), { recursive: true });
    execFileSync('mkfifo', [join(scene, TRAFFIC_FILE)]);
    expect((await loadTrafficFile(scene, VERSIONS))?.errors).toEqual([
      { path: TRAFFIC_FILE, message: 'is not a regular file' },
    ]);
  });

  it('refuses a link out of the scene folder, and follows one inside it (a ConfigMap mount)', async () => {
    const outside = join(root, 'secret.txt');
    await writeFile(outside, 'password: hunter2\n');
    await symlink(outside, join(scene, TRAFFIC_FILE));
    const refused = await loadTrafficFile(scene, VERSIONS);
    expect(refused?.errors).toEqual([
      { path: TRAFFIC_FILE, message: 'is a link that resolves outside the scene folder' },
    ]);
    expect(JSON.stringify(refused)).not.toContain('hunter2');

    await rm(join(scene, TRAFFIC_FILE));
    await mkdir(join(scene, '..data'));
    await copyFile(FIXTURE, join(scene, '..data', TRAFFIC_FILE));
    await symlink(join('..data', TRAFFIC_FILE), join(scene, TRAFFIC_FILE));
    expect((await loadTrafficFile(scene, VERSIONS))?.errors).toEqual([]);
  });

  it('reports schema problems with their paths', async () => {
    await writeFile(
      join(scene, TRAFFIC_FILE),
      'stable: v9\ncanary: { version: v2, percent: 101 }\n',
    );
    const file = await loadTrafficFile(scene, VERSIONS);
    expect(file?.errors.map((e) => e.path)).toEqual(['stable', 'canary.percent']);
  });
});

describe('readTrafficYaml', () => {
  it.each([
    ['bad syntax', 'stable: v1\ncanary: [\n', /^traffic\.yaml:\d+$/],
    ['a duplicate key', 'stable: v1\nstable: v2\n', 'traffic.yaml:2'],
    ['two documents', 'stable: v1\n---\nstable: v2\n', 'traffic.yaml:2'],
    ['an unknown tag', 'stable: !!js/function v1\n', 'traffic.yaml:1'],
  ])('refuses %s, naming the line', (_, text, path) => {
    const { config, errors } = readTrafficYaml(text, VERSIONS);
    expect(config).toBeUndefined();
    expect(errors[0].path).toEqual(typeof path === 'string' ? path : expect.stringMatching(path));
  });

  it('refuses an alias bomb', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const name of ['b', 'c', 'd', 'e', 'f']) {
      const prev = levels.length === 1 ? 'a' : String.fromCharCode(name.charCodeAt(0) - 1);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
    }
    const { config, errors } = readTrafficYaml(`${levels.join('\n')}\n`, VERSIONS);
    expect(config).toBeUndefined();
    expect(errors).toEqual([
      { path: TRAFFIC_FILE, message: expect.stringMatching(/resource exhaustion/) },
    ]);
  });

  it('takes an anchor used once or twice', () => {
    const text =
      'stable: &s v1\nexperiments:\n  - { name: e, salt: s, arms: [{ name: a, version: *s, share: 5 }] }\n';
    expect(readTrafficYaml(text, VERSIONS).errors).toEqual([]);
  });
});
