// Prometheus text exposition helpers (cold: runs per scrape, on the front thread).
import type { Histogram } from 'hdr-histogram-js';

export function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function labels(l: Record<string, string | number>): string {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${escapeLabel(String(v))}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

export class TextBuilder {
  private readonly lines: string[] = [];
  private readonly declared = new Set<string>();

  declare(name: string, type: 'counter' | 'gauge' | 'summary' | 'histogram', help: string): this {
    if (!this.declared.has(name)) {
      this.declared.add(name);
      this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    }
    return this;
  }

  sample(name: string, l: Record<string, string | number>, value: number): this {
    this.lines.push(`${name}${labels(l)} ${Number.isFinite(value) ? value : 0}`);
    return this;
  }

  /** A summary from an hdr histogram (values in the histogram's unit, exported in seconds via `scale`). */
  summary(name: string, help: string, l: Record<string, string | number>, h: Histogram, scale: number): this {
    this.declare(name, 'summary', help);
    for (const q of [0.5, 0.9, 0.99, 0.999]) {
      this.sample(name, { ...l, quantile: q }, h.totalCount ? h.getValueAtPercentile(q * 100) * scale : 0);
    }
    this.sample(`${name}_sum`, l, h.totalCount ? h.mean * h.totalCount * scale : 0);
    this.sample(`${name}_count`, l, h.totalCount);
    return this;
  }

  text(): string {
    return this.lines.join('\n') + '\n';
  }
}
