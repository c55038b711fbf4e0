// The status page: one self-contained HTML document (inline style and script, no external asset), served by the
// admin listener (admin-server.ts) with a CSP that allows exactly this script and this style by their SHA-256, and
// connections to its own origin only (front thread, cold: built once at module load). The script opens
// GET /events (server-sent events, one StatusFrame per admin.intervalMs) and renders each frame with textContent
// only: nothing received is ever parsed as HTML. Every figure cell carries data-f="<path>" (what the browser test
// reads; docs/status-page.md).
import { createHash } from 'node:crypto';

const STYLE = `
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2733;--mute:#66727f;--line:#e2e6ea;--ok:#1f8f4e;--warn:#c27c0e;--bad:#c62f2f;--bar:#3a78c2}
*{box-sizing:border-box}
body{margin:0;font:13px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
header{display:flex;align-items:center;gap:14px;padding:12px 20px;background:#17212b;color:#fff}
header h1{font-size:17px;margin:0;font-weight:600;letter-spacing:.02em}
.badge{padding:2px 10px;border-radius:10px;font-weight:700;text-transform:uppercase;font-size:12px;background:#555}
.badge.ok{background:var(--ok)}.badge.degraded{background:var(--warn)}.badge.unhealthy,.badge.shutting_down{background:var(--bad)}
#conn,#updated,#cost{color:#b8c4cf;font-size:12px}
#cost{margin-left:auto}
#conn.live{color:#7fe0a4}#conn.down{color:#ff9a9a}
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:14px;padding:14px 20px}
section{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:10px 14px}
section.wide{grid-column:1/-1}
h2{font-size:13px;margin:0 0 8px;text-transform:uppercase;letter-spacing:.06em;color:var(--mute)}
table{border-collapse:collapse;width:100%}
th,td{text-align:right;padding:3px 8px;border-bottom:1px solid var(--line);white-space:nowrap;font-variant-numeric:tabular-nums}
th:first-child,td:first-child,td.l,th.l{text-align:left}
th{font-weight:600;color:var(--mute);font-size:12px}
td.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.reasons{margin:0 0 6px;padding-left:18px;color:var(--bad)}
.reasons li.none{color:var(--ok);list-style:none;margin-left:-18px}
.share{display:inline-block;width:70px;height:8px;background:var(--line);border-radius:4px;vertical-align:middle;margin-right:6px;overflow:hidden}
.share i{display:block;height:100%;background:var(--bar)}
.yes{color:var(--ok)}.no{color:var(--bad)}
.sel{font-weight:700}
.mute{color:var(--mute)}
p{margin:4px 0}
`;

const SCRIPT = `
'use strict';
(function () {
  var $ = function (id) { return document.getElementById(id); };
  var fmt = function (n) { return n === null || n === undefined ? '-' : Number(n).toLocaleString('en-US'); };
  function cell(tr, text, path, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (path) td.setAttribute('data-f', path);
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function fill(tbody, rows, build) {
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    rows.forEach(function (r, i) { var tr = document.createElement('tr'); build(tr, r, i); tbody.appendChild(tr); });
  }
  function secs(ms) { return ms >= 60000 ? '1 min' : Math.round(ms / 1000) + ' s'; }
  function slots(n) { return n === null ? '-' : n > 150 ? '> 150' : String(n); }
  function render(f) {
    var h = f.health;
    var badge = $('status');
    badge.textContent = h.status;
    badge.className = 'badge ' + h.status;
    $('updated').textContent = 'updated ' + new Date(f.atMs).toISOString().slice(11, 19) + ' UTC';
    $('updated').setAttribute('data-at', String(f.atMs));
    $('cost').textContent = f.lastTickUs === null || f.lastTickUs === undefined ? '' : 'last frame took ' + (f.lastTickUs / 1000).toFixed(1) + ' ms (wall clock, front thread)';
    var ul = $('reasons');
    while (ul.firstChild) ul.removeChild(ul.firstChild);
    if (h.reasons.length === 0) { var li0 = document.createElement('li'); li0.className = 'none'; li0.textContent = 'no problem found'; ul.appendChild(li0); }
    h.reasons.forEach(function (r) { var li = document.createElement('li'); li.textContent = r; ul.appendChild(li); });
    ul.setAttribute('data-f', 'health.reasons');
    ul.setAttribute('data-v', h.reasons.join(','));
    var up = h.upstream;
    $('upstream').textContent = !up.configured ? 'upstream: none configured' : 'upstream: ' + (up.reachable ? 'reachable' : 'UNREACHABLE') + (up.lastAnswerAgoMs === null ? '' : ', last answer ' + fmt(up.lastAnswerAgoMs) + ' ms ago') + (up.error ? ' (' + up.error + ')' : '');
    $('upstream').className = up.configured && !up.reachable ? 'no' : '';
    var cs = h.consensus;
    $('consensus').textContent = cs === null || cs === undefined ? 'consensus: no upstream' : 'consensus: ' + cs.mode + (cs.mode === 'alpenglow' ? ' since slot ' + fmt(cs.sinceSlot) + ' (confirmed = finalized)' : '') + (cs.source === 'method_not_found' ? ' (node older than Agave 4.3)' : '') + (cs.error ? ' (last ask: ' + cs.error + ')' : '');
    $('consensus').setAttribute('data-f', 'health.consensus.mode');
    $('consensus').setAttribute('data-v', cs === null || cs === undefined ? '' : cs.mode);
    var ld = h.leaderData;
    $('leaderdata').textContent = ld === null ? 'leader data: telemetry off' : 'leader data: ' + (ld.fresh ? 'fresh' : 'STALE') + ', slot ' + fmt(ld.slot) + ', ' + fmt(ld.ageMs) + ' ms old, slot time ' + ld.slotMs + ' ms' + (ld.slotMsMeasured ? '' : ' (fallback)');
    var ss = h.slotSource;
    var sse = $('slotsource');
    sse.textContent = !ss ? 'slot source: not reported yet' : 'slot source: ' + ss.active + (ss.reason ? ' (' + ss.reason + ')' : '') + (ss.grpc ? ', gRPC stream ' + ss.grpc.state + (ss.grpc.behindSlots === null ? '' : ', ' + ss.grpc.behindSlots + ' slots behind') : '') + ', switches ' + Object.keys(ss.switches).map(function (k) { return k + ' ' + ss.switches[k]; }).join(' / ');
    sse.className = ss && ss.grpc && ss.active !== 'grpc' ? 'no' : '';
    sse.setAttribute('data-f', 'health.slotSource');
    sse.setAttribute('data-v', ss ? ss.active : '');
    fill($('health-routes'), Object.keys(h.routes), function (tr, name) {
      var r = h.routes[name];
      cell(tr, name);
      cell(tr, r.deliverable ? 'deliverable' : 'not deliverable', 'health.route.' + name, r.deliverable ? 'l yes' : 'l no');
      cell(tr, r.reason || '', null, 'l');
      cell(tr, fmt(r.window.sent) + ' sent / ' + fmt(r.window.notDelivered) + ' not delivered', null, 'mute');
    });
    $('window').textContent = secs(f.windowMs);
    $('window').setAttribute('data-ms', String(f.windowMs));
    fill($('routes'), f.routes, function (tr, r) {
      var p = 'route.' + r.route + '.';
      cell(tr, r.route);
      cell(tr, fmt(r.window.sent), p + 'window.sent');
      cell(tr, fmt(r.window.failed), p + 'window.failed');
      var d = cell(tr, fmt(r.window.dropped), p + 'window.dropped');
      d.title = Object.keys(r.window.droppedBy).map(function (k) { return k + ': ' + r.window.droppedBy[k]; }).join(', ');
      cell(tr, fmt(r.landed), p + 'window.landed');
      var s = cell(tr, '', p + 'window.landedShare');
      var bar = document.createElement('span'); bar.className = 'share';
      var fillBar = document.createElement('i'); fillBar.style.width = (r.landedShare === null ? 0 : Math.round(r.landedShare * 100)) + '%';
      bar.appendChild(fillBar); s.appendChild(bar);
      s.appendChild(document.createTextNode(r.landedShare === null ? '-' : (r.landedShare * 100).toFixed(1) + ' %'));
      cell(tr, slots(r.slotsToLand.p50) + ' / ' + slots(r.slotsToLand.p90), p + 'window.slotsToLand');
      cell(tr, fmt(r.total.sent), p + 'total.sent', 'mute');
      cell(tr, fmt(r.total.failed), p + 'total.failed', 'mute');
      cell(tr, fmt(r.total.dropped), p + 'total.dropped', 'mute');
    });
    $('slot').textContent = fmt(f.leaders.slot);
    $('slot').setAttribute('data-f', 'leaders.slot');
    fill($('leaders'), f.leaders.windows, function (tr, w, i) {
      cell(tr, w.firstSlot === w.lastSlot ? String(w.firstSlot) : w.firstSlot + '-' + w.lastSlot, 'leader.' + i + '.slots');
      cell(tr, w.identity.slice(0, 6) + '..' + w.identity.slice(-4), 'leader.' + i + '.identity', 'l mono').title = w.identity;
      cell(tr, fmt(Math.round(w.stake / 1e9)) + ' SOL');
      cell(tr, w.txPaths.map(function (t) { return (t.selected ? '* ' : '') + t.provider + ' ' + t.latencyMs + ' ms' + (t.measured ? '' : ' (est.)'); }).join(', ') || 'no path', 'leader.' + i + '.paths', 'l');
      cell(tr, w.routeScores.map(function (s) { return (s.selected ? '* ' : '') + s.region + ' ' + s.scoreMs + ' ms'; }).join(', ') || '-', 'leader.' + i + '.scores', 'l');
    });
    fill($('rings'), f.rings, function (tr, r) { cell(tr, 'ring ' + r.ring + ': records waiting'); cell(tr, fmt(r.depth), 'ring.' + r.ring + '.depth'); });
    fill($('quic'), f.quic.perThread, function (tr, n, t) { cell(tr, 'QUIC thread ' + t + ': open connections'); cell(tr, fmt(n), 'quic.thread.' + t); });
    var ing = f.quic.ingress;
    $('ingress').textContent = ing === null ? 'QUIC ingress: off' : 'QUIC ingress: ' + fmt(ing.connections) + ' client connections, ' + fmt(ing.queueDepth) + ' streams queued for the front' + (ing.held > 0 ? ', ' + fmt(ing.held) + ' connections held (queue full: their streams wait unread)' : '');
    $('ingress').setAttribute('data-f', 'quic.ingress');
    $('quicstates').textContent = 'egress connections by state: ' + Object.keys(f.quic.byState).filter(function (k) { return k !== 'closed'; }).map(function (k) { return k + ' ' + f.quic.byState[k]; }).join(', ') + '; queued ' + fmt(f.quic.queued);
    fill($('keys'), f.keys, function (tr, k) {
      var p = 'key.' + k.name + '.';
      cell(tr, k.name);
      cell(tr, fmt(k.window.requests), p + 'window.requests');
      cell(tr, fmt(k.window.refused), p + 'window.refused');
      cell(tr, fmt(k.window.rateLimited), p + 'window.rateLimited');
      cell(tr, fmt(k.requests), p + 'requests', 'mute');
      cell(tr, fmt(k.refused), p + 'refused', 'mute');
      cell(tr, fmt(k.rateLimited), p + 'rateLimited', 'mute');
    });
    var lc = f.leaderCounters;
    $('lcwindow').textContent = lc ? 'slots ' + lc.firstSlot + '-' + lc.lastSlot + (Object.keys(lc.unattributed).length ? ', no leader: ' + Object.keys(lc.unattributed).map(function (k) { return k + ' ' + lc.unattributed[k]; }).join(', ') : '') : 'off (needs receipts and leader data)';
    fill($('leadercounters'), lc ? lc.leaders : [], function (tr, r, i) {
      var p = 'leaderCounters.' + i + '.';
      var runs = [];
      r.slots.forEach(function (x) { var last = runs[runs.length - 1]; if (last && last[1] === x - 1) last[1] = x; else runs.push([x, x]); });
      cell(tr, runs.map(function (u) { return u[0] === u[1] ? String(u[0]) : u[0] + '-' + u[1]; }).join(', ') || '-', p + 'slots', 'l');
      cell(tr, r.identity === null ? 'unknown' : r.identity.slice(0, 6) + '..' + r.identity.slice(-4), p + 'identity', 'l mono').title = r.identity || '';
      cell(tr, fmt(r.sent), p + 'sent');
      cell(tr, fmt(r.copies), p + 'copies');
      var dn = 0; Object.keys(r.dropped).forEach(function (k) { dn += r.dropped[k]; });
      var d = cell(tr, fmt(dn), p + 'dropped');
      d.title = Object.keys(r.dropped).map(function (k) { return k + ': ' + r.dropped[k]; }).concat(Object.keys(r.dropCauses).map(function (k) { return 'cause ' + k + ': ' + r.dropCauses[k]; })).join(', ');
      cell(tr, r.waited.n === 0 ? '-' : r.waited.p50Ms.toFixed(1) + ' / ' + r.waited.maxMs.toFixed(1), p + 'waited');
      cell(tr, fmt(r.landed), p + 'landed');
      cell(tr, r.slotsToLand.p50 === null ? '-' : r.slotsToLand.p50 + ' / ' + r.slotsToLand.max, p + 'slotsToLand');
      cell(tr, fmt(r.landedInSlots), p + 'landedInSlots', 'mute');
    });
    $('failcount').textContent = String(f.failures.length);
    $('failcount').setAttribute('data-f', 'failures.count');
    fill($('failures'), f.failures, function (tr, x, i) {
      cell(tr, new Date(x.atMs).toISOString().slice(11, 23));
      cell(tr, x.traceId, 'failure.' + i + '.traceId', 'l mono');
      cell(tr, x.keyName, null, 'l');
      cell(tr, Object.keys(x.outcomes).map(function (k) { return k + ': ' + x.outcomes[k]; }).concat(x.notLanded ? ['not landed'] : []).join(', '), 'failure.' + i + '.outcomes', 'l');
      cell(tr, x.signature.slice(0, 16) + '..', null, 'l mono').title = x.signature;
    });
  }
  var conn = $('conn');
  var es = new EventSource('/events');
  es.onopen = function () { conn.textContent = 'live'; conn.className = 'live'; };
  es.onerror = function () { conn.textContent = 'disconnected, retrying'; conn.className = 'down'; };
  es.onmessage = function (ev) { render(JSON.parse(ev.data)); };
})();
`;

const BODY = `
<header><h1>slotrelay</h1><span id="status" class="badge" data-f="health.status">-</span><span id="conn">connecting</span><span id="updated"></span><span id="cost"></span></header>
<main>
<section><h2>Health and why</h2><ul id="reasons" class="reasons"></ul><p id="upstream"></p><p id="consensus"></p><p id="leaderdata"></p><p id="slotsource"></p>
<table><thead><tr><th>route</th><th class="l">now</th><th class="l">why not</th><th class="l">failing window</th></tr></thead><tbody id="health-routes"></tbody></table></section>
<section><h2>Rings and QUIC connections</h2><table><tbody id="rings"></tbody></table><table><tbody id="quic"></tbody></table><p class="mute" id="quicstates"></p><p id="ingress"></p></section>
<section class="wide"><h2>Routes, last <span id="window">-</span> (then since start)</h2>
<table><thead><tr><th>route</th><th>sent</th><th>failed</th><th>dropped</th><th>landed</th><th>landed share</th><th>slots to land p50 / p90</th><th>sent</th><th>failed</th><th>dropped</th></tr></thead><tbody id="routes"></tbody></table></section>
<section class="wide"><h2>Next leaders (slot <span id="slot">-</span>)</h2>
<table><thead><tr><th>slots</th><th class="l">leader</th><th>stake</th><th class="l">paths (one-way, * first to arrive)</th><th class="l">route scores by region (* best)</th></tr></thead><tbody id="leaders"></tbody></table></section>
<section><h2>Keys, last minute (then since start)</h2>
<table><thead><tr><th>name</th><th>requests</th><th>refused</th><th>rate limited</th><th>requests</th><th>refused</th><th>rate limited</th></tr></thead><tbody id="keys"></tbody></table></section>
<section class="wide"><h2>Per leader, direct route (<span id="lcwindow">-</span>)</h2>
<table><thead><tr><th>slots</th><th class="l">leader</th><th>sent</th><th>copies</th><th>dropped</th><th>wait before write ms p50 / max</th><th>landed</th><th>slots to land p50 / max</th><th>landed in its slots</th></tr></thead><tbody id="leadercounters"></tbody></table></section>
<section class="wide"><h2>Last failures (<span id="failcount">0</span>)</h2>
<table><thead><tr><th>accepted (UTC)</th><th class="l">trace id</th><th class="l">key</th><th class="l">what happened</th><th class="l">signature</th></tr></thead><tbody id="failures"></tbody></table></section>
</main>
`;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The page's Content-Security-Policy: this script and this style only, its own origin for the event stream. */
export const STATUS_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>slotrelay status</title>
<style>${STYLE}</style></head><body>${BODY}<script>${SCRIPT}</script></body></html>
`;
