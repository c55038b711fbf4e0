// The landing report as one self-contained HTML page (CLI process; cold): summary tables, the landed % bars, a CDF
// of slots-to-land per scenario and a timeline per route set, all inline SVG (report-svg.ts); no script, no fetch.
import type { LandingReport, ScenarioResult } from './report.js';
import { barsChart, cdfChart, esc, timelineChart } from './report-svg.js';
import type { Percentiles } from './stats.js';

const pct = (p: Percentiles, unit = ''): string => (p.p50 === null ? '-' : `${p.p50}${unit} / ${p.p90}${unit} / ${p.p99}${unit}`);

/** A stage's ms percentiles over its slot percentiles ('-' in reports from before issue #43). */
const stage = (x: { readonly ms: Percentiles; readonly slots: Percentiles } | undefined): string =>
  x === undefined ? '-' : `${pct(x.ms)}<br><span class="small">${pct(x.slots, ' sl')}</span>`;

function reasons(r: Record<string, number>): string {
  const e = Object.entries(r).sort((a, b) => b[1] - a[1]);
  return e.length === 0 ? '-' : e.map(([k, v]) => `${esc(k)}&nbsp;${v}`).join('<br>');
}

function via(r: Record<string, number>): string {
  const e = Object.entries(r);
  return e.length === 0 ? '-' : e.map(([k, v]) => `${esc(k)}&nbsp;${v}`).join(', ');
}

/** Each set against the best, with the interval, and "not significant" where it holds 0. */
function comparisonTable(s: ScenarioResult): string {
  const c = s.comparisons ?? [];
  if (c.length === 0) return '';
  const rows = c.map(
    (x) => `<tr><td>${esc(x.set)}</td><td>${esc(x.against)}</td><td>${x.diffPct > 0 ? '+' : ''}${x.diffPct}</td><td>${x.lo} to ${x.hi}</td><td>${x.significant ? 'significant' : '<b>not significant</b>'}</td></tr>`,
  );
  return `<table><thead><tr><th>set</th><th>against (best landed share)</th><th>difference, points</th><th>95% interval (Newcombe)</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** How the sets met the schedule: interleaved in the same slots or one after another. */
function interleaveLine(s: ScenarioResult): string {
  const i = s.interleave;
  if (i === undefined) return '<p class="small">route sets run one after another (a report from before issue #44)</p>';
  const how = s.sets.length === 1 ? 'one route set' : i.method === 'interleaved' ? `interleaved in the same slots (${i.assign.kind === 'random' ? `random, seed ${i.assign.seed}` : 'round robin'})` : 'one after another (--sequential)';
  const rc = s.runCounters;
  return `<p class="small">${s.sets.length === 1 ? how : `route sets ${how}`}; ${i.repeat} measured run${i.repeat > 1 ? 's merged' : ''}; ${i.slots} slots, every set present in ${i.slotsWithEverySet}${rc !== undefined ? `; the run's TPU counters: ${rc.copiesPerTx} copies read per tx, ${rc.duplicates} duplicates, ${esc(JSON.stringify(rc.validatorDrops))}` : ''}</p>`;
}

function summaryTable(s: ScenarioResult): string {
  const rows = s.sets.map((x) => {
    const f = x.figures;
    return `<tr><td><span class="sw" style="background:${x.colour}"></span>${esc(x.set.name)}</td><td>${f.sent}</td><td>${f.accepted}</td>
<td><b>${f.landedPct}%</b>${f.landedCi95 !== undefined ? `<br><span class="small">95%: ${f.landedCi95.lo}-${f.landedCi95.hi}%</span>` : ''}</td><td>${f.landedFailed}</td><td>${pct(f.slotsToLand)}</td><td>${pct(f.msToLand)}</td><td>${f.duplicates ?? '-'}</td>
<td>${f.copiesPerTx ?? (s.runCounters !== undefined ? `<span class="small">run: ${s.runCounters.copiesPerTx}</span>` : '-')}</td><td>${f.slotsPresent ?? '-'}</td><td>${via(f.landedVia)}${f.relayView.adaptive !== undefined && Object.keys(f.relayView.adaptive).length > 0 ? `<br><span class="small">adaptive: ${via(f.relayView.adaptive)}</span>` : ''}</td><td class="small">${reasons(f.dropReasons)}</td>
<td>${stage(f.toProcessed)}</td><td>${stage(f.toFinalized)}</td>
<td>${f.submitMs.p50 ?? '-'} / ${f.submitMs.p99 ?? '-'}</td><td>${f.benchLoopDelayMs.p99} / ${f.benchLoopDelayMs.max}</td></tr>`;
  });
  return `<table><thead><tr><th>route set</th><th>sent</th><th>accepted</th><th>landed</th><th>landed with error</th>
<th>slots-to-land p50 / p90 / p99</th><th>ms-to-land p50 / p90 / p99</th><th>duplicates</th><th>copies read per tx</th><th>slots present</th><th>landed via</th><th>drop reasons</th><th>to processed ms (slots) p50 / p90 / p99</th><th>to finalized ms (slots) p50 / p90 / p99</th><th>submit ms p50 / p99</th><th>bench loop delay ms p99 / max</th></tr></thead>
<tbody>${rows.join('')}</tbody></table>`;
}

export function renderHtml(r: LandingReport): string {
  const bars = barsChart(
    r.scenarios.map((s) => ({ label: s.scenario.name, bars: s.sets.map((x) => ({ name: x.set.name, colour: x.colour, value: x.figures.landedPct })) })),
    'Landed % per route set',
  );
  const sections = r.scenarios.map((s) => {
    const cdf = cdfChart(
      s.sets.map((x) => ({ name: x.set.name, colour: x.colour, cdf: x.figures.cdf })),
      `Slots-to-land CDF: ${s.scenario.name}`,
    );
    const legend = s.validators.map((v) => ({ identity: v.identity, label: v.label }));
    const timelines = s.sets.map((x) =>
      timelineChart(x.timeline, x.colour, `${x.set.name}: sends and landings per slot (${s.scenario.name}; ${x.startedAt.slice(11, 19)}Z)`, legend),
    );
    return `<section><h2>${esc(s.scenario.name)}</h2>${interleaveLine(s)}${summaryTable(s)}${comparisonTable(s)}
<p class="small">slot source: ${esc(s.slotSource)}; ms-to-land: ${esc(s.sets[0]?.figures.msToLandSource ?? '-')}; localnet: ${esc(JSON.stringify(s.localnet))}</p>
<div class="row">${cdf}</div>${timelines.map((t) => `<div class="row">${t}</div>`).join('')}</section>`;
  });
  const p = r.params;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>slotrelay landing report</title>
<style>
body{font-family:system-ui,sans-serif;margin:16px 24px;color:#222;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px}
table{border-collapse:collapse;font-size:12px;margin:6px 0}td,th{border:1px solid #ccd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#eef1f5}.small{font-size:11px;color:#444}.row{margin:8px 0}.sw{display:inline-block;width:10px;height:10px;margin-right:5px}
svg{display:block}
</style></head><body>
<h1>slotrelay landing report</h1>
<p class="small">${esc(r.createdAt)} · commit ${esc(r.commit ?? 'unknown')} · ${r.host.cpus} CPUs (load ${r.host.loadAvg1m.join(' -> ')}) · Node ${esc(r.host.node)} · target: ${esc(p.target)}<br>
${p.ratePerSecond} tx/s for ${p.durationMs / 1000} s per route set${p.method !== undefined ? ` (${p.method}${p.repeat !== undefined && p.repeat > 1 ? `, ${p.repeat} runs merged` : ''})` : ''}, tail ${p.tailMs / 1000} s, ${p.payers} payers, maxRetries ${p.maxRetries ?? "relay's default"}${p.relayRetries !== undefined && p.relayRetries !== null ? `, relay rebroadcasts ${p.relayRetries}` : ''}${p.warmupMs !== undefined ? `, warm-up ${p.warmupMs / 1000} s` : ''}<br>
<code>${esc(p.command)}</code></p>
<div class="row">${bars}</div>
${sections.join('\n')}
<h2>Notes</h2><ul class="small">${r.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>
</body></html>
`;
}
