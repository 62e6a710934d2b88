import { ErrorDetail } from '@app/common';
import {
  AdminPageView,
  CanaryHealthView,
  GuardrailLimitsView,
  SceneView,
  ShadowDiffView,
  TrafficOriginView,
  TrafficView,
  VALIDATION_CHECKS,
  ValidationCheck,
  VersionView,
} from './admin-page.view';
import { count, decimal, millis, percent, points, utc } from './format';
import { Html, html } from './html';
import { figure, headedRow, row, table } from './html-table';
import { renderPage } from './page-layout';

/** The status page for algorithm teams: a complete HTML document, every value escaped. */
export function renderAdminPage(view: AdminPageView): string {
  return renderPage(
    'Ranker status',
    html`<header>
        <h1>Ranker status</h1>
        <p>
          Replica <strong>${view.replica}</strong> · generated ${utc(view.generatedAt)} ·
          <a href="/admin">Refresh</a>
        </p>
        <form method="post" action="/admin/logout"><button type="submit">Log out</button></form>
      </header>
      <main>
        <h2>Scenes</h2>
        ${view.scenes.length === 0 ? html`<p class="empty">No scene is loaded.</p>` : overview(view.scenes)}
        ${view.scenes.map(scene)}
      </main>`,
  );
}

function overview(scenes: SceneView[]): Html {
  const rows = scenes.flatMap((s) =>
    s.versions.length === 0
      ? [
          html`<tr>
            <td>${s.scene}</td>
            <td colspan="3" class="empty">no version</td>
          </tr>`,
        ]
      : s.versions.map((v) => row(s.scene, v.version, state(v), roles(v.version, s.traffic))),
  );
  return table('Scenes', ['Scene', 'Version', 'State', 'Traffic'], rows);
}

function scene(s: SceneView): Html {
  return html`<section class="scene" aria-label="Scene ${s.scene}">
    <h2>Scene <code>${s.scene}</code></h2>
    <h3>Versions</h3>
    ${s.versions.length === 0 ? html`<p class="empty">No version.</p>` : versions(s.versions)}
    <h3>Traffic split</h3>
    ${s.traffic ? traffic(s.traffic) : html`<p class="empty">No version serves this scene.</p>`}
    <h3>Canary health</h3>
    ${s.canary ? canary(s.canary) : html`<p class="empty">No canary.</p>`}
    <h3>Shadow differences</h3>
    ${s.shadow ? shadow(s.shadow) : html`<p class="empty">No shadow version.</p>`}
  </section>`;
}

function versions(list: VersionView[]): Html {
  const rows = list.map(
    (v) =>
      html`${row(v.version, state(v), ...VALIDATION_CHECKS.map((c) => check(v, c)))}
      ${
        v.reasons.length > 0 &&
        html`<tr>
          <td colspan="${2 + VALIDATION_CHECKS.length}">${reasons(v.reasons)}</td>
        </tr>`
      }`,
  );
  return table('Versions', ['Version', 'State', ...VALIDATION_CHECKS.map(capitalised)], rows);
}

function state(v: VersionView): Html {
  return html`<span class="state ${v.state}">${v.state}</span>`;
}

function check(v: VersionView, name: ValidationCheck): Html {
  const c = v.validation.find((r) => r.check === name);
  if (!c) return html`<span class="check pending">not reported</span>`;
  const messages = c.messages.map((m) => html`<div>${m}</div>`);
  return html`<span class="check ${c.outcome}">${c.outcome}</span>${messages}`;
}

function reasons(list: ErrorDetail[]): Html {
  const items = list.map((r) =>
    r.path ? html`<li><code>${r.path}</code>: ${r.message}</li>` : html`<li>${r.message}</li>`,
  );
  return html`<ul class="reasons" aria-label="Reasons">
    ${items}
  </ul>`;
}

/** What share of the scene's traffic a version takes, and in which role. */
function roles(version: string, t: TrafficView | undefined): string {
  if (!t) return '—';
  const found: string[] = [];
  if (t.stable === version) found.push('stable');
  if (t.canary?.version === version) found.push(`canary ${percent(t.canary.share)}`);
  for (const e of t.experiments)
    for (const a of e.arms)
      if (a.version === version) found.push(`${e.name}/${a.arm} ${percent(a.share)}`);
  if (t.shadow?.version === version) found.push(`shadow ${percent(t.shadow.share)}`);
  return found.length > 0 ? found.join(', ') : '—';
}

function traffic(t: TrafficView): Html {
  const canary = t.canary
    ? `${t.canary.version} takes ${percent(t.canary.share)}`
    : html`<span class="empty">No canary.</span>`;
  const shadow = t.shadow
    ? `${t.shadow.version} scores ${percent(t.shadow.share)} of requests off the response path`
    : html`<span class="empty">No shadow version.</span>`;
  const split = table(
    'Traffic split',
    [],
    [
      headedRow('Set by', origin(t.origin)),
      headedRow('Stable', t.stable),
      headedRow('Canary', canary),
      headedRow('Shadow', shadow),
    ],
  );
  const arms = t.experiments.flatMap((e) =>
    e.arms.map((a) => row(e.name, a.arm, a.version, figure(percent(a.share)))),
  );
  const problems = t.problems.map((p) =>
    p.path
      ? html`<li>${p.source}: <code>${p.path}</code>: ${p.message}</li>`
      : html`<li>${p.source}: ${p.message}</li>`,
  );
  return html`${split}
  ${
    problems.length > 0 &&
    html`<p class="error">Refused traffic configuration; the last valid split stays in force:</p>
      <ul class="reasons" aria-label="Traffic problems">
        ${problems}
      </ul>`
  }
  ${arms.length === 0 ? html`<p class="empty">No experiments.</p>` : table('Experiments', ['Experiment', 'Arm', 'Version', 'Share'], arms)}`;
}

function origin(o: TrafficOriginView): Html | string {
  if (o.from === 'file') return 'traffic.yaml';
  if (o.from === 'default') return 'default (no traffic.yaml): the newest valid version';
  return html`override by <strong>${o.by}</strong> at
    ${utc(o.at)}${o.reason !== undefined && html`: ${o.reason}`}${
      o.fileChangedSince && html` <span class="error">(traffic.yaml changed since)</span>`
    }`;
}

function canary(c: CanaryHealthView): Html {
  const { stable, canary: can, limits, guardrail } = c;
  const verdict =
    guardrail.state === 'rolled back'
      ? html`<p>
          Guardrail: <span class="state rolled-back">rolled back</span> at ${utc(guardrail.at)}:
          <span class="error">${guardrail.reason}</span>
        </p>`
      : guardrail.state === 'healthy'
        ? html`<p>Guardrail: <span class="state healthy">healthy</span></p>`
        : html`<p>
            Guardrail: <span class="state collecting">collecting</span>, too few requests to judge
          </p>`;
  const health = table(
    'Canary health',
    ['', 'Stable', 'Canary', 'Limit'],
    [
      headedRow(
        'Requests',
        figure(count(stable.requests)),
        figure(count(can.requests)),
        `judged from ${count(limits.minRequests)} requests each`,
      ),
      headedRow(
        'Error rate',
        figure(percent(stable.errorRate)),
        figure(percent(can.errorRate)),
        errorLimit(limits),
      ),
      headedRow(
        'p99 latency',
        figure(millis(stable.p99Ms)),
        figure(millis(can.p99Ms)),
        limits.maxP99Ratio === undefined
          ? 'not checked'
          : `at most ${decimal(limits.maxP99Ratio, 2)} × stable`,
      ),
    ],
  );
  return html`<p>
      Canary <code>${c.version}</code> against stable <code>${c.stableVersion}</code> over the last
      ${count(limits.window)} s.
    </p>
    ${health} ${verdict}`;
}

function errorLimit(l: GuardrailLimitsView): string {
  const parts = [
    l.maxErrorRateDelta !== undefined && `stable + ${points(l.maxErrorRateDelta)}`,
    l.maxErrorRatio !== undefined && `${decimal(l.maxErrorRatio, 2)} × stable`,
  ].filter((p): p is string => typeof p === 'string');
  if (parts.length === 0) return 'not checked';
  return `at most ${parts.join(' and ')}, once the canary has ${count(l.minErrors)} errors`;
}

function shadow(s: ShadowDiffView): Html {
  const k = s.topK === undefined ? 'K' : count(s.topK);
  const rows = s.against.map((a) =>
    row(
      a.primary,
      figure(count(a.comparisons)),
      failures(a.failures),
      figure(count(a.nonFiniteScores)),
      figure(decimal(a.rankCorrelation)),
      figure(percent(a.overlapAtK)),
      figure(decimal(a.meanAbsDelta, 4)),
      figure(decimal(a.maxAbsDelta, 4)),
    ),
  );
  const head = [
    'Against',
    'Compared',
    'No comparison',
    'Non-finite scores',
    'Rank correlation',
    `Overlap@${k}`,
    'Mean |Δ score|',
    'Max |Δ score|',
  ];
  return html`<p>
      Shadow <code>${s.version}</code> against the served ranking,
      ${s.topK === undefined ? 'whole responses' : `top ${k}`}.
    </p>
    ${
      rows.length === 0
        ? html`<p class="empty">No request compared yet.</p>`
        : table('Shadow differences', head, rows)
    }`;
}

function failures(list: { reason: string; count: number }[]): string {
  const total = list.reduce((n, f) => n + f.count, 0);
  if (total === 0) return '0';
  return `${count(total)} (${list.map((f) => `${f.reason} ${count(f.count)}`).join(', ')})`;
}

const capitalised = (s: string) => s[0].toUpperCase() + s.slice(1);
