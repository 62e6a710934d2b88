import { escapeXml, formatTick, niceTicks, throughputLatencySvg } from './throughput-chart';

const options = {
  title: 'feed <3000>',
  xLabel: 'throughput (candidates/s)',
  yLabel: 'p99 latency (ms)',
};
const count = (svg: string, pattern: RegExp) => (svg.match(pattern) ?? []).length;

describe('throughput against p99 chart', () => {
  it('puts ticks at round numbers covering the maximum', () => {
    expect(niceTicks(96_000)).toEqual([0, 20_000, 40_000, 60_000, 80_000, 100_000]);
    expect(niceTicks(12)).toEqual([0, 2.5, 5, 7.5, 10, 12.5]);
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(niceTicks(NaN)).toEqual([0, 1]);
    expect(formatTick(120_000)).toBe('120k');
    expect(formatTick(2_500_000)).toBe('2.5M');
    expect(formatTick(7.5)).toBe('7.5');
  });

  it('draws a well-formed picture: axes, labelled ticks, one labelled point per step', () => {
    const svg = throughputLatencySvg(
      [
        { label: 'c=1', x: 40_000, y: 80 },
        { label: 'c=2', x: 70_000, y: 90 },
        { label: 'c=4', x: 96_000, y: 160 },
        { label: 'c=8', x: NaN, y: NaN },
      ],
      options,
    );
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trim().endsWith('</svg>')).toBe(true);
    expect(count(svg, /class="axis /g)).toBe(2);
    expect(count(svg, /class="axis-label"/g)).toBe(2);
    expect(svg).toContain('>throughput (candidates/s)</text>');
    expect(svg).toContain('>p99 latency (ms)</text>');
    expect(count(svg, /class="tick x-tick"/g)).toBe(6); // 0..100k by 20k
    expect(count(svg, /class="tick y-tick"/g)).toBe(5); // 0..200 by 50
    expect(svg).toContain('>100k</text>');
    // The step without a successful request has no point.
    expect(count(svg, /<circle class="point"/g)).toBe(3);
    expect(svg.match(/class="point-label"[^>]*>([^<]*)</g)?.map((t) => t.split('>')[1])).toEqual([
      'c=1<',
      'c=2<',
      'c=4<',
    ]);
    expect(svg).toContain('feed &#60;3000&#62;');
    // Every point lies inside the plot area.
    for (const [, cx, cy] of svg.matchAll(/cx="([\d.]+)" cy="([\d.]+)"/g)) {
      expect(+cx).toBeGreaterThanOrEqual(84);
      expect(+cx).toBeLessThanOrEqual(760 - 36);
      expect(+cy).toBeGreaterThanOrEqual(56);
      expect(+cy).toBeLessThanOrEqual(480 - 64);
    }
    // Open and close tags balance (a crude well-formedness check without an XML parser).
    expect(count(svg, /<text/g)).toBe(count(svg, /<\/text>/g));
  });

  it('says so when no step succeeded instead of drawing nothing', () => {
    const svg = throughputLatencySvg([{ label: '50/s', x: 0, y: NaN }], options);
    expect(svg).toContain('no step had a successful request');
    expect(count(svg, /<circle/g)).toBe(0);
    expect(escapeXml(`a<b & "c" 'd'`)).toBe('a&#60;b &#38; &#34;c&#34; &#39;d&#39;');
  });
});
