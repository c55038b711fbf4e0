// Reads samples out of a Prometheus text exposition (GET /metrics), for tests that check what a scraper would see.

/** The value of the sample `name{labels}` (labels as written, in order, e.g. 'route="rpc"'); undefined when absent. */
export function sampleValue(text: string, name: string, labels = ''): number | undefined {
  const head = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((l) => l.startsWith(head));
  return line === undefined ? undefined : Number(line.slice(head.length));
}

/** GET {baseUrl}/metrics as text. */
export async function scrape(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  return res.text();
}

/**
 * A fresh scrape's value of the first `name{…}` sample whose labels contain `labels` (a substring, e.g.
 * 'route="rpc",outcome="failed"'); 0 when there is none yet. One GET per call: for polling with `until`.
 */
export async function metricNow(baseUrl: string, name: string, labels: string): Promise<number> {
  const line = (await scrape(baseUrl)).split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}
