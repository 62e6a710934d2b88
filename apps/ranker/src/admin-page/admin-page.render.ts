import { ErrorDetail } from '@app/common';
import {
  AdminPageView,
  CanaryHealthView,
  SceneView,
  ShadowDiffView,
  TrafficView,
  VALIDATION_CHECKS,
  ValidationCheck,
  VersionView,
} from './admin-page.view';
import { count, decimal, millis, percent, points, utc } from './format';
import { Html, html } from './html';
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
      : s.versions.map(
          (v) =>
            html`<tr>
              <td>${s.scene}</td>
              <td>${v.version}</td>
              <td>${state(v)}</td>
              <td>${roles(v.version, s.traffic)}</td>
            </tr>`,
        ),
  );
  return html`<table aria-label="Scenes">
    <thead>
      <tr>
        <th>Scene</th>
        <th>Version</th>
        <th>State</th>
        <th>Traffic</th>
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
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
      html`<tr>
          <td>${v.version}</td>
          <td>${state(v)}</td>
          ${VALIDATION_CHECKS.map((c) => check(v, c))}
        </tr>
        ${
          v.reasons.length > 0 &&
          html`<tr>
            <td colspan="${2 + VALIDATION_CHECKS.length}">${reasons(v.reasons)}</td>
          </tr>`
        }`,
  );
  const checks = VALIDATION_CHECKS.map((c) => html`<th>${capitalised(c)}</th>`);
  return html`<table aria-label="Versions">
    <thead>
      <tr>
        <th>Version</th>
        <th>State</th>
        ${checks}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

function state(v: VersionView): Html {
  return html`<span class="state ${v.state}">${v.state}</span>`;
}

function check(v: VersionView, name: ValidationCheck): Html {
  const c = v.validation.find((r) => r.check === name);
  if (!c) return html`<td><span class="check pending">not reported</span></td>`;
  const messages = c.messages.map((m) => html`<div>${m}</div>`);
  return html`<td><span class="check ${c.outcome}">${c.outcome}</span>${messages}</td>`;
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
  return html`<table aria-label="Traffic split">
      <tbody>
        <tr>
          <th>Stable</th>
          <td>${t.stable}</td>
        </tr>
        <tr>
          <th>Canary</th>
          <td>
            ${t.canary ? `${t.canary.version} takes ${percent(t.canary.share)}` : html`<span class="empty">No canary.</span>`}
          </td>
        </tr>
        <tr>
          <th>Shadow</th>
          <td>
            ${t.shadow ? `${t.shadow.version} scores ${percent(t.shadow.share)} of requests off the response path` : html`<span class="empty">No shadow version.</span>`}
          </td>
        </tr>
      </tbody>
    </table>
    ${t.experiments.length === 0 ? html`<p class="empty">No experiments.</p>` : experiments(t)}`;
}

function experiments(t: TrafficView): Html {
  const rows = t.experiments.flatMap((e) =>
    e.arms.map(
      (a) =>
        html`<tr>
          <td>${e.name}</td>
          <td>${a.arm}</td>
          <td>${a.version}</td>
          <td class="num">${percent(a.share)}</td>
        </tr>`,
    ),
  );
  return html`<table aria-label="Experiments">
    <thead>
      <tr>
        <th>Experiment</th>
        <th>Arm</th>
        <th>Version</th>
        <th>Share</th>
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

function canary(c: CanaryHealthView): Html {
  const { stable, canary: can, limits, guardrail } = c;
  const verdict =
    guardrail.state === 'ok'
      ? html`<p>Guardrail: <span class="state ok">ok</span></p>`
      : html`<p>
          Guardrail: <span class="state rolled-back">rolled back</span> at ${utc(guardrail.at)}:
          <span class="error">${guardrail.reason}</span>
        </p>`;
  return html`<p>
      Canary <code>${c.version}</code> against stable over the last ${count(c.windowSeconds)} s.
    </p>
    <table aria-label="Canary health">
      <thead>
        <tr>
          <th></th>
          <th>Stable</th>
          <th>Canary</th>
          <th>Limit</th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <th>Requests</th>
          <td class="num">${count(stable.requests)}</td>
          <td class="num">${count(can.requests)}</td>
          <td>judged from ${count(limits.minRequests)} requests</td>
        </tr>
        <tr>
          <th>Error rate</th>
          <td class="num">${percent(stable.errorRate)}</td>
          <td class="num">${percent(can.errorRate)}</td>
          <td>at most stable + ${points(limits.maxErrorRateIncrease)}</td>
        </tr>
        <tr>
          <th>p99 latency</th>
          <td class="num">${millis(stable.p99Ms)}</td>
          <td class="num">${millis(can.p99Ms)}</td>
          <td>at most ${decimal(limits.maxP99Ratio, 2)} × stable</td>
        </tr>
      </tbody>
    </table>
    ${verdict}`;
}

function shadow(s: ShadowDiffView): Html {
  return html`<p>Shadow <code>${s.version}</code> against the served ranking, top ${count(s.k)}.</p>
    <table aria-label="Shadow differences">
      <tbody>
        <tr>
          <th>Requests compared</th>
          <td class="num">${count(s.requests)}</td>
        </tr>
        <tr>
          <th>Shadow errors</th>
          <td class="num">${count(s.errors)}</td>
        </tr>
        <tr>
          <th>Rank correlation of top ${count(s.k)}</th>
          <td class="num">${decimal(s.rankCorrelation)}</td>
        </tr>
        <tr>
          <th>Overlap@${count(s.k)}</th>
          <td class="num">${percent(s.overlapAtK)}</td>
        </tr>
        <tr>
          <th>Mean score delta</th>
          <td class="num">${decimal(s.meanScoreDelta, 4)}</td>
        </tr>
        <tr>
          <th>Max score delta</th>
          <td class="num">${decimal(s.maxScoreDelta, 4)}</td>
        </tr>
      </tbody>
    </table>`;
}

const capitalised = (s: string) => s[0].toUpperCase() + s.slice(1);
