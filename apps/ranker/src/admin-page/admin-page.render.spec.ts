import fc from 'fast-check';
import { renderAdminPage } from './admin-page.render';
import { AdminPageView, SceneView, VALIDATION_CHECKS, VersionView } from './admin-page.view';
import { renderLoginPage } from './login-page.render';

const passed = (golden: 'pass' | 'skipped' = 'pass'): VersionView['validation'] => [
  { check: 'schema', outcome: 'pass', messages: [] },
  { check: 'model contract', outcome: 'pass', messages: [] },
  { check: 'dry run', outcome: 'pass', messages: [] },
  { check: 'golden', outcome: golden, messages: golden === 'skipped' ? ['no golden.jsonl'] : [] },
];

/** A scene in the middle of everything: a canary rolled back, a failed version, A/B, shadow. */
function busyScene(name = 'feed', text = (s: string) => s): SceneView {
  return {
    scene: name,
    versions: [
      {
        version: text('v6'),
        state: 'incomplete',
        reasons: [{ message: text('no READY file yet') }],
        validation: VALIDATION_CHECKS.map((check) => ({
          check,
          outcome: 'pending',
          messages: [],
        })),
      },
      {
        version: text('v4'),
        state: 'failed',
        reasons: [
          {
            path: text('models.ctr.inputs.dense'),
            message: text('expects 13 columns, model has 12'),
          },
          {
            path: text('golden.jsonl:3'),
            message: text('candidates[0] (i1): expected 0.5, got 0.1'),
          },
        ],
        validation: [
          { check: 'schema', outcome: 'pass', messages: [] },
          { check: 'model contract', outcome: 'fail', messages: [text('dense: 13 vs 12 columns')] },
          { check: 'dry run', outcome: 'pending', messages: [] },
          { check: 'golden', outcome: 'fail', messages: [text('1 of 4 requests off')] },
        ],
      },
      { version: text('v3'), state: 'draining', reasons: [], validation: passed() },
      { version: text('v2'), state: 'ready', reasons: [], validation: passed('skipped') },
      { version: text('v1'), state: 'serving', reasons: [], validation: passed() },
      { version: text('v5'), state: 'warming', reasons: [], validation: passed() },
    ],
    traffic: {
      origin: {
        from: 'override',
        by: text('alice'),
        at: new Date('2025-03-04T05:00:00Z'),
        reason: text('hold v1'),
        fileChangedSince: true,
      },
      problems: [
        { source: 'file', path: text('canary.percent'), message: text('must be below 100') },
      ],
      stable: text('v1'),
      canary: { version: text('v3'), share: 0.05 },
      experiments: [
        {
          name: text('ranker-exp-7'),
          arms: [
            { arm: text('control'), version: text('v1'), share: 0.5 },
            { arm: text('treatment'), version: text('v2'), share: 0.5 },
          ],
        },
      ],
      shadow: { version: text('v5'), share: 0.1 },
    },
    canary: {
      version: text('v3'),
      stableVersion: text('v1'),
      stable: { requests: 12_000, errorRate: 0.001, p99Ms: 41.25 },
      canary: { requests: 640, errorRate: 0.0625, p99Ms: 88 },
      limits: {
        window: 300,
        minRequests: 500,
        minErrors: 5,
        maxErrorRateDelta: 0.01,
        maxErrorRatio: 3,
        maxP99Ratio: 1.5,
      },
      guardrail: {
        state: 'rolled back',
        reason: text('error rate 6.25 % > stable 0.1 % + 1 pt'),
        at: new Date('2025-03-04T05:06:07Z'),
      },
    },
    shadow: {
      version: text('v5'),
      topK: 50,
      against: [
        {
          primary: text('v1'),
          comparisons: 5_321,
          failures: [{ reason: text('timed_out'), count: 2 }],
          nonFiniteScores: 0,
          rankCorrelation: 0.8123,
          overlapAtK: 0.9,
          meanAbsDelta: 0.01234,
          maxAbsDelta: 0.2,
        },
      ],
    },
  };
}

const quietScene: SceneView = {
  scene: 'news',
  versions: [{ version: 'v1', state: 'serving', reasons: [], validation: passed() }],
  traffic: { origin: { from: 'file' }, problems: [], stable: 'v1', experiments: [] },
};

const view = (scenes: SceneView[]): AdminPageView => ({
  generatedAt: new Date('2025-03-04T05:07:00Z'),
  replica: 'ranker-7d9f-abc',
  scenes,
});

/** What a person reads: the text outside the tags (and the style sheet), entities decoded. */
function visibleText(page: string): string {
  return page
    .replace(/<style>[\s\S]*?<\/style>/g, '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

/** The section of the page about one scene, as text. */
function sceneText(page: string, scene: string): string {
  const text = visibleText(page);
  const start = text.indexOf(`Scene ${scene} Versions`);
  expect(start).toBeGreaterThanOrEqual(0);
  const next = text.indexOf(' Scene ', start + 1);
  return text.slice(start, next < 0 ? undefined : next);
}

/** The page's markup with every attribute value and all text taken out. */
const skeleton = (page: string) =>
  (page.match(/<[^>]*>/g) ?? []).map((tag) => tag.replace(/"[^"]*"/g, '""')).join('');

describe('renderAdminPage', () => {
  it('renders a complete document with the replica and the time it was generated', () => {
    const page = renderAdminPage(view([quietScene]));
    expect(page).toMatch(/^<!doctype html>\s*<html lang="en">/);
    expect(page.trimEnd().endsWith('</html>')).toBe(true);
    const text = visibleText(page);
    expect(text).toContain('Replica ranker-7d9f-abc · generated 2025-03-04 05:07:00 UTC');
    expect(text).toContain('Log out');
    // no external asset, no script
    expect(page).not.toMatch(/<script|<link|src=|@import|url\(/i);
  });

  it('lists every version of every scene with its state and traffic role', () => {
    const text = visibleText(renderAdminPage(view([busyScene(), quietScene])));
    const overview = text.slice(
      text.indexOf('Scene Version State Traffic'),
      text.indexOf('Scene feed'),
    );
    expect(overview).toBe(
      'Scene Version State Traffic ' +
        'feed v6 incomplete — ' +
        'feed v4 failed — ' +
        'feed v3 draining canary 5 % ' +
        'feed v2 ready ranker-exp-7/treatment 50 % ' +
        'feed v1 serving stable, ranker-exp-7/control 50 % ' +
        'feed v5 warming shadow 10 % ' +
        'news v1 serving stable ',
    );
  });

  it.each([
    [
      'each version validation result and every reason a version failed',
      'Version State Schema Model contract Dry run Golden ' +
        'v6 incomplete pending pending pending pending no READY file yet ' +
        'v4 failed pass fail dense: 13 vs 12 columns pending fail 1 of 4 requests off ' +
        'models.ctr.inputs.dense : expects 13 columns, model has 12 ' +
        'golden.jsonl:3 : candidates[0] (i1): expected 0.5, got 0.1 ' +
        'v3 draining pass pass pass pass ' +
        'v2 ready pass pass pass skipped no golden.jsonl ' +
        'v1 serving pass pass pass pass',
    ],
    [
      'the traffic split: who set it, stable, canary, problems, experiments with arms and shares, shadow',
      'Traffic split Set by override by alice at 2025-03-04 05:00:00 UTC: hold v1 ' +
        '(traffic.yaml changed since) Stable v1 Canary v3 takes 5 % ' +
        'Shadow v5 scores 10 % of requests off the response path ' +
        'Refused traffic configuration; the last valid split stays in force: ' +
        'file: canary.percent : must be below 100 ' +
        'Experiment Arm Version Share ' +
        'ranker-exp-7 control v1 50 % ranker-exp-7 treatment v2 50 %',
    ],
    [
      'canary health against stable, the limits, and a rollback with reason and time',
      'Canary health Canary v3 against stable v1 over the last 300 s. ' +
        'Stable Canary Limit ' +
        'Requests 12,000 640 judged from 500 requests each ' +
        'Error rate 0.1 % 6.25 % at most stable + 1 pt and 3 × stable, once the canary has 5 errors ' +
        'p99 latency 41.3 ms 88 ms at most 1.5 × stable ' +
        'Guardrail: rolled back at 2025-03-04 05:06:07 UTC: error rate 6.25 % > stable 0.1 % + 1 pt',
    ],
    [
      'the shadow differences',
      'Shadow differences Shadow v5 against the served ranking, top 50. ' +
        'Against Compared No comparison Non-finite scores Rank correlation Overlap@50 ' +
        'Mean |Δ score| Max |Δ score| ' +
        'v1 5,321 2 (timed_out 2) 0 0.812 90 % 0.0123 0.2',
    ],
  ])('shows %s', (_what, expected) => {
    expect(sceneText(renderAdminPage(view([busyScene()])), 'feed')).toContain(expected);
  });

  it.each([
    ['healthy', 'Guardrail: healthy'],
    ['collecting', 'Guardrail: collecting , too few requests to judge'],
  ] as const)('says when the canary is %s', (state, expected) => {
    const scene = busyScene();
    scene.canary!.guardrail = { state };
    const feed = sceneText(renderAdminPage(view([scene])), 'feed');
    expect(feed).toContain(expected);
    expect(feed).not.toContain('rolled back');
  });

  it('names limits that are not set, where the traffic comes from, and a shadow not compared yet', () => {
    const scene = busyScene();
    scene.canary!.limits = { window: 60, minRequests: 20, minErrors: 1 };
    scene.traffic!.origin = { from: 'default' };
    scene.traffic!.problems = [];
    scene.shadow = { version: 'v5', against: [] };
    const feed = sceneText(renderAdminPage(view([scene])), 'feed');
    expect(feed).toContain('Set by default (no traffic.yaml): the newest valid version Stable v1');
    expect(feed).not.toContain('Refused');
    expect(feed).toContain(
      'Error rate 0.1 % 6.25 % not checked p99 latency 41.3 ms 88 ms not checked',
    );
    expect(feed).toContain('over the last 60 s');
    expect(feed).toContain(
      'Shadow v5 against the served ranking, whole responses. No request compared yet.',
    );
    scene.traffic!.origin = { from: 'file' };
    expect(sceneText(renderAdminPage(view([scene])), 'feed')).toContain(
      'Set by traffic.yaml Stable v1',
    );
  });

  it('says clearly when there is no canary, no experiment, no shadow', () => {
    const news = sceneText(renderAdminPage(view([quietScene])), 'news');
    expect(news).toBe(
      'Scene news Versions Version State Schema Model contract Dry run Golden ' +
        'v1 serving pass pass pass pass ' +
        'Traffic split Set by traffic.yaml Stable v1 Canary No canary. Shadow No shadow version. No experiments. ' +
        'Canary health No canary. Shadow differences No shadow version. ',
    );
  });

  it('says when no scene is loaded, and when a scene has no serving version', () => {
    expect(visibleText(renderAdminPage(view([])))).toContain('Scenes No scene is loaded.');
    const failedOnly: SceneView = {
      scene: 'apps',
      versions: [{ version: 'v1', state: 'failed', reasons: [{ message: 'x' }], validation: [] }],
    };
    const text = visibleText(renderAdminPage(view([failedOnly])));
    expect(text).toContain('apps v1 failed —');
    expect(text).toContain(
      'v1 failed not reported not reported not reported not reported x ' +
        'Traffic split No version serves this scene.',
    );
  });

  it('shows figures that are not numbers as n/a', () => {
    const scene = busyScene();
    scene.canary!.stable = { requests: 0, errorRate: NaN, p99Ms: NaN };
    const feed = sceneText(renderAdminPage(view([scene])), 'feed');
    expect(feed).toContain('Requests 0 640');
    expect(feed).toContain('Error rate n/a 6.25 %');
    expect(feed).toContain('p99 latency n/a 88 ms');
  });
});

describe('escaping', () => {
  const hostile = `<script>alert("x")</script> & 'quoted' "double" <img src=x onerror=alert(1)>`;

  it('escapes hostile scene names, versions, reasons and messages', () => {
    const page = renderAdminPage({
      ...view([busyScene(hostile, (s) => `${s}${hostile}`)]),
      replica: hostile,
    });
    expect(page).not.toMatch(/<script|<img/i);
    expect(page).toContain(
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;',
    );
    const text = visibleText(page);
    expect(text).toContain(`Replica ${hostile}`);
    expect(text).toContain(`Scene ${hostile} Versions`);
    expect(text).toContain(
      `models.ctr.inputs.dense${hostile} : expects 13 columns, model has 12${hostile}`,
    );
    expect(text).toContain(`error rate 6.25 % > stable 0.1 % + 1 pt${hostile}`);
    expect(text).toContain(`override by alice${hostile}`);
    expect(text).toContain(`canary.percent${hostile} : must be below 100${hostile}`);
    // the hostile scene name sits in an attribute too, and cannot leave it
    expect(skeleton(page)).toBe(skeleton(renderAdminPage(view([busyScene('x')]))));
  });

  it('never lets any string change the markup', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string({ unit: 'grapheme' }),
        fc.string({ unit: 'binary' }),
        (name, word, reason) => {
          const tampered = (s: string) => `${s}${word}`;
          const scene = busyScene(name, tampered);
          scene.versions[0].reasons.push({ message: reason });
          const page = renderAdminPage({ ...view([scene]), replica: word });
          const plain = busyScene('x');
          plain.versions[0].reasons.push({ message: 'x' });
          expect(skeleton(page)).toBe(skeleton(renderAdminPage(view([plain]))));
          const shown = name.replace(/\s+/g, ' ');
          expect(visibleText(page)).toContain(`Scene ${shown} Versions`.replace(/\s+/g, ' '));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('renderLoginPage', () => {
  it('shows the token form', () => {
    const page = renderLoginPage();
    expect(page).toContain('<form class="login" method="post" action="/admin/login">');
    expect(page).toMatch(/<input\s+id="token"\s+name="token"\s+type="password"/);
    expect(visibleText(page)).toContain('Sign in Admin token ( RANKER_ADMIN_TOKEN ) Sign in');
    expect(page).not.toContain('role="alert"');
  });

  it('shows an error above the form, escaped', () => {
    const page = renderLoginPage('wrong token <b>&</b>');
    expect(page).toContain(
      '<p class="error" role="alert">wrong token &lt;b&gt;&amp;&lt;/b&gt;</p>',
    );
  });
});
