/** One sample of a metric in Prometheus's text exposition: its labels and value. */
export interface MetricSample {
  labels: Record<string, string>;
  value: number;
}

/** Every sample of the metric `name` in a text exposition (what /dedup/metrics serves), with its labels. */
export function metricSamples(text: string, name: string): MetricSample[] {
  const found: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labels: Record<string, string> = {};
    for (const m of line.slice(line.indexOf('{') + 1, line.lastIndexOf('}')).matchAll(/(\w+)="([^"]*)"/g)) labels[m[1] as string] = m[2] as string;
    found.push({ labels, value: Number(line.slice(line.lastIndexOf(' ') + 1)) });
  }
  return found;
}
