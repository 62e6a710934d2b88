/**
 * Throughput against p99 latency as a standalone SVG (no browser, no library): one point per
 * step, labelled with its concurrency or rate, joined in step order, on axes from zero with
 * ticks at round numbers. The knee of the curve is where adding load stops adding throughput.
 */

export interface ChartPoint {
  label: string;
  /** Throughput. */
  x: number;
  /** p99 latency. */
  y: number;
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  width?: number;
  height?: number;
}

const MARGIN = { left: 84, right: 36, top: 56, bottom: 64 };

/** Round tick values from 0 covering `max`: steps of 1, 2, 2.5 or 5 x 10^k, about `target` of them. */
export function niceTicks(max: number, target = 5): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const raw = max / target;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let i = 0; ; i++) {
    const value = +(i * step).toPrecision(12);
    ticks.push(value);
    if (value >= max) return ticks;
  }
}

/** 1500 -> 1.5k, 120000 -> 120k, 2500000 -> 2.5M, 0.25 -> 0.25. */
export function formatTick(value: number): string {
  const trim = (v: number) => String(+v.toPrecision(3));
  if (Math.abs(value) >= 1e6) return `${trim(value / 1e6)}M`;
  if (Math.abs(value) >= 1e3) return `${trim(value / 1e3)}k`;
  return trim(value);
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function throughputLatencySvg(points: readonly ChartPoint[], options: ChartOptions): string {
  const width = options.width ?? 760;
  const height = options.height ?? 480;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const shown = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  const xTicks = niceTicks(Math.max(0, ...shown.map((p) => p.x)));
  const yTicks = niceTicks(Math.max(0, ...shown.map((p) => p.y)));
  const xMax = xTicks[xTicks.length - 1];
  const yMax = yTicks[yTicks.length - 1];
  const px = (x: number) => +(MARGIN.left + (x / xMax) * plotW).toFixed(1);
  const py = (y: number) => +(MARGIN.top + plotH - (y / yMax) * plotH).toFixed(1);
  const bottom = MARGIN.top + plotH;
  const right = MARGIN.left + plotW;

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text class="title" x="${width / 2}" y="28" text-anchor="middle" font-size="16">` +
      `${escapeXml(options.title)}</text>`,
  ];
  for (const t of xTicks) {
    const x = px(t);
    out.push(
      `<line class="grid" x1="${x}" y1="${MARGIN.top}" x2="${x}" y2="${bottom}" stroke="#e5e5e5"/>`,
      `<line class="tick x-tick" x1="${x}" y1="${bottom}" x2="${x}" y2="${bottom + 6}" stroke="black"/>`,
      `<text class="tick-label" x="${x}" y="${bottom + 20}" text-anchor="middle">${formatTick(t)}</text>`,
    );
  }
  for (const t of yTicks) {
    const y = py(t);
    out.push(
      `<line class="grid" x1="${MARGIN.left}" y1="${y}" x2="${right}" y2="${y}" stroke="#e5e5e5"/>`,
      `<line class="tick y-tick" x1="${MARGIN.left - 6}" y1="${y}" x2="${MARGIN.left}" y2="${y}" stroke="black"/>`,
      `<text class="tick-label" x="${MARGIN.left - 10}" y="${y + 4}" text-anchor="end">${formatTick(t)}</text>`,
    );
  }
  out.push(
    `<line class="axis x-axis" x1="${MARGIN.left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="black"/>`,
    `<line class="axis y-axis" x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${bottom}" stroke="black"/>`,
    `<text class="axis-label" x="${MARGIN.left + plotW / 2}" y="${height - 18}" text-anchor="middle">` +
      `${escapeXml(options.xLabel)}</text>`,
    `<text class="axis-label" x="20" y="${MARGIN.top + plotH / 2}" text-anchor="middle" ` +
      `transform="rotate(-90 20 ${MARGIN.top + plotH / 2})">${escapeXml(options.yLabel)}</text>`,
  );
  if (shown.length === 0) {
    out.push(
      `<text class="empty" x="${MARGIN.left + plotW / 2}" y="${MARGIN.top + plotH / 2}" ` +
        `text-anchor="middle" fill="#b00">no step had a successful request</text>`,
    );
  } else {
    const path = shown.map((p) => `${px(p.x)},${py(p.y)}`).join(' ');
    out.push(
      `<polyline class="series" points="${path}" fill="none" stroke="#1f77b4" stroke-width="2"/>`,
    );
    for (const p of shown) {
      // Labels near the right edge go left of their point, so they stay inside the picture.
      const left = px(p.x) > right - 48;
      out.push(
        `<circle class="point" cx="${px(p.x)}" cy="${py(p.y)}" r="4" fill="#1f77b4"/>`,
        `<text class="point-label" x="${px(p.x) + (left ? -7 : 7)}" y="${py(p.y) - 7}"` +
          `${left ? ' text-anchor="end"' : ''}>${escapeXml(p.label)}</text>`,
      );
    }
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
