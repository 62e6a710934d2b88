/**
 * Sum of every series of metric `name` in Prometheus text whose labels include `labels` (e.g.
 * `reason="MESSAGE_TOO_LARGE"`), 0 if none; an unlabelled series counts when `labels` is empty.
 */
export function metricSum(text: string, name: string, labels = ''): number {
  return text
    .split('\n')
    .filter((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && l.includes(labels))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** The same, read from a `/metrics` URL. */
export async function fetchMetricSum(url: string, name: string, labels = ''): Promise<number> {
  return metricSum(await (await fetch(url)).text(), name, labels);
}
