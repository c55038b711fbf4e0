// The landing report's charts as inline SVG strings (CLI process; cold, once per report): no script, no external
// resource, so the HTML renders the same anywhere. Each chart kind sits on its own exact background colour
// (CHART_BACKGROUNDS), which the report's browser test uses to find the charts in a screenshot.
import type { TimelineSeries } from './stats.js';

/** Route set colours in --sets order (Tableau 10). */
export const SET_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf'] as const;
export const CHART_BACKGROUNDS = { cdf: '#f5f8fc', bars: '#f5fcf7', timeline: '#fcf6f5' } as const;
/** Leader band colours by validator (index = stake rank); muted, unlike any set colour. */
const LEADER_COLOURS = ['#b9cde5', '#e8d3a9', '#c6dfbb', '#dfc3da', '#cfcfcf', '#bfe0dc', '#e9c6b5', '#d3d0ea'];
const SEND_COLOUR = '#8a96a3';
const LOST_COLOUR = '#111111';
const GRID = '#d8dee6';
const AXIS = '#4a5562';
const FONT = 'font-family="system-ui, sans-serif" font-size="11" fill="#333"';

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const f1 = (n: number): string => (Math.round(n * 10) / 10).toString();

export interface CdfLine {
  readonly name: string;
  readonly colour: string;
  readonly cdf: readonly number[];
}

/** The CDF chart's geometry (the browser test measures curves against it). */
export const CDF_GEOMETRY = { width: 620, height: 330, left: 52, right: 170, top: 30, bottom: 42 } as const;

/**
 * The CDF's y axis starts here: the largest multiple of 10 (at most 90) below every set's share landed within 0
 * slots, so sets that all land ~95% in their send slot are told apart instead of stacked on the 100% line.
 */
export function cdfAxisFloor(lines: readonly CdfLine[]): number {
  if (lines.length === 0 || lines.some((l) => l.cdf.length === 0)) return 0;
  return Math.max(0, Math.min(90, Math.floor(Math.min(...lines.map((l) => l.cdf[0])) / 10) * 10));
}

/** CDF of slots-to-land per route set: x = slots (0..cap), y = % of sent landed within x slots. */
export function cdfChart(lines: readonly CdfLine[], title: string): string {
  const { width: W, height: H, left: L, right: R, top: T, bottom: B } = CDF_GEOMETRY;
  const longest = Math.max(1, ...lines.map((l) => l.cdf.length - 1));
  const cap = Math.min(Math.max(longest, 4), 16);
  const lo = cdfAxisFloor(lines);
  const x = (k: number): number => L + ((W - L - R) * k) / cap;
  const y = (pct: number): number => T + ((H - T - B) * (100 - Math.max(lo, pct))) / (100 - lo);
  const parts: string[] = [`<rect x="0" y="0" width="${W}" height="${H}" fill="${CHART_BACKGROUNDS.cdf}"/>`];
  parts.push(`<text x="${L}" y="18" ${FONT} font-size="13" font-weight="600">${esc(title)}${lo > 0 ? ` (y axis from ${lo}%)` : ''}</text>`);
  for (let i = 0; i <= 5; i++) {
    const p = lo + ((100 - lo) * i) / 5;
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${f1(y(p))}" y2="${f1(y(p))}" stroke="${GRID}"/>`);
    parts.push(`<text x="${L - 6}" y="${f1(y(p) + 4)}" text-anchor="end" ${FONT}>${f1(p)}%</text>`);
  }
  for (let k = 0; k <= cap; k++) {
    parts.push(`<line x1="${f1(x(k))}" x2="${f1(x(k))}" y1="${T}" y2="${H - B}" stroke="${GRID}"/>`);
    parts.push(`<text x="${f1(x(k))}" y="${H - B + 15}" text-anchor="middle" ${FONT}>${k === cap && longest > cap ? `${k}+` : k}</text>`);
  }
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle" ${FONT}>slots from send to landing</text>`);
  parts.push(`<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" ${FONT} transform="rotate(-90 14 ${(T + H - B) / 2})">landed within (% of sent)</text>`);
  lines.forEach((l, i) => {
    // A step function: the share landed within k slots holds from k to k + 1.
    const at = (k: number): number => l.cdf[Math.min(k, l.cdf.length - 1)] ?? 0;
    let d = `M${f1(x(0))},${f1(y(lo))} L${f1(x(0))},${f1(y(at(0)))}`;
    for (let k = 1; k <= cap; k++) d += ` L${f1(x(k))},${f1(y(at(k - 1)))} L${f1(x(k))},${f1(y(at(k)))}`;
    // Nested widths (the first set widest): curves that coincide, as they do when every set lands in the same slot,
    // still show each colour as a border around the next.
    const width = 3 + 4 * (lines.length - 1 - i); // 2 px of each wider curve show on either side
    parts.push(`<path d="${d}" fill="none" stroke="${l.colour}" stroke-width="${width}" stroke-linejoin="miter" stroke-linecap="square"/>`);
    const ly = T + 8 + i * 20;
    parts.push(`<rect x="${W - R + 12}" y="${ly - 6}" width="18" height="6" fill="${l.colour}"/>`);
    parts.push(`<text x="${W - R + 36}" y="${ly}" ${FONT}>${esc(l.name)}</text>`);
  });
  parts.push(`<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="${AXIS}"/><line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="${AXIS}"/>`);
  return `<svg class="chart cdf" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img">${parts.join('')}</svg>`;
}

export interface BarGroup {
  readonly label: string;
  readonly bars: readonly { name: string; colour: string; value: number }[];
}

/** The bars chart's geometry (the browser test measures bar heights against it). */
export const BARS_GEOMETRY = { height: 320, top: 30, bottom: 68 } as const;

/** Landed % per route set, grouped by scenario (the scenario's name under its group, one clause a line). */
export function barsChart(groups: readonly BarGroup[], title: string): string {
  const nBars = Math.max(1, ...groups.map((g) => g.bars.length));
  const barW = 26;
  const groupW = Math.max(nBars * barW + 40, 190);
  const L = 52;
  const { height: H, top: T, bottom: B } = BARS_GEOMETRY;
  const W = Math.max(420, L + groups.length * groupW + 20);
  const y = (pct: number): number => T + ((H - T - B) * (100 - pct)) / 100;
  const parts: string[] = [`<rect x="0" y="0" width="${W}" height="${H}" fill="${CHART_BACKGROUNDS.bars}"/>`];
  parts.push(`<text x="${L}" y="18" ${FONT} font-size="13" font-weight="600">${esc(title)}</text>`);
  for (let p = 0; p <= 100; p += 20) {
    parts.push(`<line x1="${L}" x2="${W - 10}" y1="${f1(y(p))}" y2="${f1(y(p))}" stroke="${GRID}"/>`);
    parts.push(`<text x="${L - 6}" y="${f1(y(p) + 4)}" text-anchor="end" ${FONT}>${p}%</text>`);
  }
  groups.forEach((g, gi) => {
    const gx = L + 20 + gi * groupW;
    g.bars.forEach((b, bi) => {
      const bx = gx + bi * barW;
      const top = y(Math.max(0, Math.min(100, b.value)));
      parts.push(`<rect x="${bx + 2}" y="${f1(top)}" width="${barW - 4}" height="${f1(y(0) - top)}" fill="${b.colour}"><title>${esc(`${b.name}: ${b.value}%`)}</title></rect>`);
      parts.push(`<text x="${bx + barW / 2}" y="${f1(top - 4)}" text-anchor="middle" ${FONT} font-size="9">${f1(b.value)}</text>`);
    });
    const cx = gx + (g.bars.length * barW) / 2;
    const label = g.label.split(', ').map((line, li) => `<tspan x="${cx}" dy="${li === 0 ? 0 : 13}">${esc(line)}</tspan>`);
    parts.push(`<text x="${cx}" y="${H - B + 16}" text-anchor="middle" ${FONT}>${label.join('')}</text>`);
  });
  parts.push(`<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="${AXIS}"/><line x1="${L}" x2="${W - 10}" y1="${H - B}" y2="${H - B}" stroke="${AXIS}"/>`);
  return `<svg class="chart bars" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img">${parts.join('')}</svg>`;
}

export interface LeaderLegend {
  readonly identity: string;
  readonly label: string;
}

/** Load band colour: white (idle) to amber by the share of the busiest slot; red when the leader's QoS was saturated. */
function loadColour(share: number, saturated: boolean): string {
  if (saturated) return '#c0392b';
  const t = Math.max(0, Math.min(1, share));
  const g = Math.round(255 - t * 120);
  const b = Math.round(255 - t * 220);
  return `rgb(255,${g},${b})`;
}

/**
 * Sends and landings per slot against the leader schedule: a band coloured by each slot's leader, sends per slot
 * above the axis (grey), landings per slot below it (the set's colour), sends that never landed as black ticks.
 */
export function timelineChart(s: TimelineSeries, colour: string, title: string, leaders: readonly LeaderLegend[]): string {
  const W = 1120;
  const L = 52;
  const R = 12;
  const T = 28;
  const leaderBand = 14;
  // With the leaders' load: a second band under the leaders, its heat the share of the run's busiest slot.
  const loadBand = s.load !== undefined ? 10 : 0;
  const band = leaderBand + loadBand;
  const half = 46;
  const H = T + band + 8 + 2 * half + 34;
  const n = Math.max(1, s.sends.length);
  const sw = (W - L - R) / n;
  const peak = [...s.sends, ...s.landings].reduce((a, b) => Math.max(a, b), 1);
  const mid = T + band + 8 + half;
  const parts: string[] = [`<rect x="0" y="0" width="${W}" height="${H}" fill="${CHART_BACKGROUNDS.timeline}"/>`];
  parts.push(`<text x="${L}" y="18" ${FONT} font-size="13" font-weight="600">${esc(title)}</text>`);
  const rank = new Map(leaders.map((l, i) => [l.identity, i]));
  for (let i = 0; i < n; i++) {
    const who = s.leaders[i];
    const c = who === undefined ? '#ffffff' : LEADER_COLOURS[(rank.get(who) ?? LEADER_COLOURS.length - 1) % LEADER_COLOURS.length];
    parts.push(`<rect x="${f1(L + i * sw)}" y="${T}" width="${f1(sw + 0.5)}" height="${leaderBand}" fill="${c}"/>`);
  }
  if (s.load !== undefined) {
    const ld = s.load;
    const busiest = ld.received.reduce((a, b) => Math.max(a, b), 1);
    for (let i = 0; i < n; i++) {
      const r = ld.received[i] ?? 0;
      const fill = loadColour(r / busiest, ld.saturated[i] ?? false);
      const why = `${r} tx read by the leader${ld.saturated[i] ? ', QoS saturated' : ''}${(ld.blockFull[i] ?? 0) > 0 ? `, ${ld.blockFull[i]} dropped: block full` : ''}`;
      parts.push(`<rect x="${f1(L + i * sw)}" y="${T + leaderBand}" width="${f1(sw + 0.5)}" height="${loadBand}" fill="${fill}"><title>${esc(why)}</title></rect>`);
    }
    parts.push(`<text x="${L - 6}" y="${T + leaderBand + 9}" text-anchor="end" ${FONT}>load</text>`);
  }
  for (let i = 0; i < n; i++) {
    const x0 = f1(L + i * sw + sw * 0.1);
    const w = f1(Math.max(1, sw * 0.8));
    if (s.sends[i] > 0) {
      const h = (half * s.sends[i]) / peak;
      parts.push(`<rect x="${x0}" y="${f1(mid - h)}" width="${w}" height="${f1(h)}" fill="${SEND_COLOUR}"/>`);
    }
    if (s.landings[i] > 0) parts.push(`<rect x="${x0}" y="${mid}" width="${w}" height="${f1((half * s.landings[i]) / peak)}" fill="${colour}"/>`);
    if (s.lost[i] > 0) parts.push(`<rect x="${x0}" y="${mid - half - 6}" width="${w}" height="4" fill="${LOST_COLOUR}"><title>${s.lost[i]} not landed</title></rect>`);
  }
  parts.push(`<line x1="${L}" x2="${W - R}" y1="${mid}" y2="${mid}" stroke="${AXIS}"/>`);
  parts.push(`<text x="${L - 6}" y="${mid - half + 8}" text-anchor="end" ${FONT}>sent</text><text x="${L - 6}" y="${mid + half}" text-anchor="end" ${FONT}>landed</text>`);
  parts.push(`<text x="${L - 6}" y="${T + 11}" text-anchor="end" ${FONT}>leader</text>`);
  const step = n > 200 ? 50 : n > 80 ? 20 : n > 30 ? 10 : 5;
  for (let i = 0; i < n; i += step) parts.push(`<text x="${f1(L + i * sw)}" y="${H - 18}" ${FONT}>${s.from + i}</text>`);
  let lx = L + 260;
  leaders.forEach((l, i) => {
    parts.push(`<rect x="${lx}" y="${H - 14}" width="10" height="10" fill="${LEADER_COLOURS[i % LEADER_COLOURS.length]}"/>`);
    parts.push(`<text x="${lx + 14}" y="${H - 5}" ${FONT}>${esc(l.label)}</text>`);
    lx += 16 + l.label.length * 6.2;
  });
  parts.push(
    `<text x="${W - R}" y="${H - 5}" text-anchor="end" ${FONT}>slot; peak ${peak}/slot; black: sent, never landed${s.load !== undefined ? '; load: amber = tx the leader read, red = QoS saturated' : ''}</text>`,
  );
  return `<svg class="chart timeline" xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img">${parts.join('')}</svg>`;
}
