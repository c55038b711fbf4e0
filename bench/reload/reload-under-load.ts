// `make bench-reload` (issue #27 item 4): reload under load. A real relay (`slotrelay start` on its embedded localnet,
// the direct route's leader connections pre-warmed, the QUIC ingress on, every transaction also on the static route to
// a counting TPU listener here) takes --rate tx/s over HTTP (POST /v1/transactions, raw bytes) for --seconds while its
// keys file is rewritten and SIGHUP sent --reloads times: each reload adds a fresh key and removes the previous one
// (the time until the new key is accepted and the removed one refused is measured from the signal), and one of them is
// preceded by an invalid keys file (refused, the running keys still served). A QUIC ingress client (src/client/quic)
// submits alongside on the direct route the whole time. At the end the relay is stopped with SIGTERM and its
// `relay_stopped` line closes the books: every transaction the clients were told was accepted is in the relay's
// `accepted`, every one has a static-route outcome, none undelivered. Connections are counted before and after (the
// relay's QUIC ingress accepts, its leader connections created, the client's dials). Driver process, cold
// orchestration; writes --out (JSON). Exit 0 when every check holds, 1 otherwise, 2 on bad usage.
//   node dist/bench/reload/reload-under-load.js [--rate 2000] [--seconds 60] [--reloads 20] [--out bench/results/reload.json]
import { randomUUID } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { RelayClient } from '../../src/client/relay-client.js';
import { QuicTransport } from '../../src/client/quic/quic-transport.js';
import { StandIn } from '../../scripts/soak/stand-ins.js';
import { parseMetrics, sumMetric } from '../../scripts/soak/accounting.js';
import { isTransportFailure, keepAliveAgent, request } from '../../scripts/soak/http.js';
import { RelayChild, sleep } from '../../scripts/soak/relay-child.js';
import { TransferSigner } from '../../scripts/soak/transactions.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = join(ROOT, 'dist/src/cli.js');
const STAND_IN = join(ROOT, 'dist/scripts/soak/stand-in.js');
/** The embedded localnet's validators (config localnet.validators): each a leader the direct route connects to. */
const VALIDATORS = 4;
/** The load is sent in ticks of this length (rate / 100 requests each at 10 ms). */
const TICK_MS = 10;
/** Requests in flight at most: beyond it a tick's requests are counted as not sent (the box is behind). */
const MAX_IN_FLIGHT = 256;
const REQUEST_TIMEOUT_MS = 10_000;
/** A key change must show within this (the bound). */
const KEY_CHANGE_BOUND_MS = 1_000;
/** How long a key probe polls before giving up (well past the bound: a miss is measured, not cut off). */
const PROBE_LIMIT_MS = 5_000;
const PROBE_INTERVAL_MS = 20;
/** The QUIC ingress client's submit interval (on the direct route, to the localnet's leaders). */
const QUIC_INTERVAL_MS = 50;
const SETTLE_MS = 2_000;

const round0 = (x: number | null): number | null => (x === null ? null : Math.round(x));

const { values } = parseArgs({
  options: { rate: { type: 'string' }, seconds: { type: 'string' }, reloads: { type: 'string' }, out: { type: 'string' } },
  strict: true,
});
const rate = Number(values.rate ?? 2000);
const seconds = Number(values.seconds ?? 60);
const reloads = Number(values.reloads ?? 20);
if (!(rate > 0 && seconds > 0 && Number.isInteger(reloads) && reloads >= 2)) {
  process.stderr.write('usage: reload-under-load [--rate N>0] [--seconds N>0] [--reloads N>=2] [--out FILE]\n');
  process.exit(2);
}

const LOAD_KEY = randomUUID();
const QUIC_KEY = randomUUID();
const keyEntry = (key: string, name: string): Record<string, unknown> => ({ key, name, rateLimit: { perSecond: 1_000_000, burst: 1_000_000 } });

interface ReloadRound {
  readonly round: number;
  readonly invalidFirst: boolean;
  /** ms from SIGHUP until the added key was accepted (null: not within PROBE_LIMIT_MS). */
  readonly addedAcceptedMs: number | null;
  /** ms from SIGHUP until the removed key was refused 401. */
  readonly removedRefusedMs: number | null;
  /** Round trip of the probe that first saw each change (the driver and relay share a loaded box: most of the above). */
  readonly addedProbeRttMs: number | null;
  readonly removedProbeRttMs: number | null;
  /** ms from SIGHUP until the relay logged the reload applied (its `config_reload` line's time; same host clock). */
  readonly relayAppliedMs: number | null;
  /** The invalid file's reload: refused, with the running keys still accepted. */
  readonly invalidRefused?: boolean;
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'slotrelay-reload-bench-'));
  // The static peer: the soak's counting QUIC listener, in its own process (the driver's loop is busy with the load).
  const peer = new StandIn('static', STAND_IN);
  const peerPort = await peer.start();
  const configFile = join(dir, 'config.yaml');
  const keysFile = join(dir, 'keys.yaml');
  const writeKeys = (extra: Record<string, unknown>[] | string): void => {
    // Rewritten in place, as an operator's editor or `sed -i` would (a rename is atomic; a plain write is the harder case).
    writeFileSync(keysFile, typeof extra === 'string' ? extra : stringify([keyEntry(LOAD_KEY, 'load'), keyEntry(QUIC_KEY, 'quic'), ...extra]));
  };
  let rotating = { key: randomUUID(), name: 'rotating-0' };
  writeKeys([keyEntry(rotating.key, rotating.name)]);
  const tmp = `${configFile}.tmp`;
  writeFileSync(
    tmp,
    stringify({
      rpcHost: { host: '127.0.0.1', port: 0 },
      admin: { port: 0 }, // the status page's default 8890 is one per host
      relayHost: { host: '127.0.0.1', port: 0, quicPort: -1 },
      rings: { workers: 1, slotsPerRing: 16_384 },
      log: { level: 'info' },
      keysFile: 'keys.yaml',
      routes: { defaultRoutes: ['static'], static: { peers: [`127.0.0.1:${peerPort}`] }, direct: { enabled: true, idleCloseMs: 600_000 } },
      localnet: { validators: VALIDATORS },
      retries: { defaultMaxRetries: 0 },
      receipts: { enabled: false },
    }),
  );
  renameSync(tmp, configFile);

  const relay = new RelayChild(CLI, configFile, ROOT);
  const agent = keepAliveAgent(MAX_IN_FLIGHT);
  // The key probes on sockets of their own: they measure the reload, not the load's queue in the driver.
  const probeAgent = keepAliveAgent(4);
  const signer = new TransferSigner();
  let client: RelayClient | null = null;
  try {
    await relay.ready();
    const relayUrl = relay.url('relay');
    const rpcUrl = relay.url('rpc');
    const quic = relay.listeners.find((l) => l.name === 'quic');
    if (quic === undefined) throw new Error('the relay has no QUIC ingress listener');
    const metrics = async (): Promise<ReturnType<typeof parseMetrics>> => {
      const a = await request(agent, rpcUrl, 'GET', '/metrics', {}, null, REQUEST_TIMEOUT_MS);
      if (isTransportFailure(a)) throw new Error(`/metrics: ${a.transport}`);
      return parseMetrics(a.body);
    };
    // Signed before the load starts (the driver shares the box with the relay: signing 2,000 a second would take its time
    // from the load); signed on the fly once they run out.
    const presigned: Buffer[] = [];
    for (let i = Math.ceil(rate * seconds * 1.02); i > 0; i--) presigned.push(signer.next().bytes);
    let nextPresigned = 0;
    const nextTx = (): Buffer => (nextPresigned < presigned.length ? presigned[nextPresigned++] : signer.next().bytes);
    const submit = async (key: string, via = agent): Promise<number | string> => {
      const a = await request(via, relayUrl, 'POST', '/v1/transactions', { 'content-type': 'application/octet-stream', 'x-api-key': key }, nextTx(), REQUEST_TIMEOUT_MS);
      return isTransportFailure(a) ? a.transport : a.status;
    };

    // The QUIC ingress client, and the leader connections warm and steady before the load starts.
    let transport!: QuicTransport;
    client = new RelayClient({ url: relayUrl, apiKey: QUIC_KEY, timeoutMs: REQUEST_TIMEOUT_MS, transport: (ctx) => (transport = new QuicTransport(ctx, { address: `${quic.host}:${quic.port}` })) });
    let quicAccepted = 0;
    const quicFailures = new Map<string, number>();
    await client.submit(signer.next().bytes, { routes: ['direct'] });
    quicAccepted++;
    // Every leader and the static peer connected (routes.direct.idleCloseMs is long: none is closed idle in the run,
    // so a connection created later would be one re-established).
    for (let i = 0; i < 60; i++) {
      if (sumMetric(await metrics(), 'slotrelay_quic_connection_events_total', { event: 'created' }) >= VALIDATORS + 1) break;
      await sleep(1_000);
    }
    const before = await metrics();
    const ingressBefore = sumMetric(before, 'slotrelay_quic_ingress_connections_total', { outcome: 'accepted' });
    const createdBefore = sumMetric(before, 'slotrelay_quic_connection_events_total', { event: 'created' });
    process.stderr.write(`reload bench: relay ready; ${createdBefore} QUIC egress connections warm (leaders and the static peer); load ${rate} tx/s for ${seconds} s, ${reloads} reloads\n`);

    // The load: rate/100 raw submissions every 10 ms, counted by answer.
    let accepted = 0;
    let notSent = 0;
    let inFlight = 0;
    const answers = new Map<string, number>();
    const count = (a: number | string): void => {
      if (a === 200) accepted++;
      else answers.set(String(a), (answers.get(String(a)) ?? 0) + 1);
    };
    const startMs = performance.now();
    const endMs = startMs + seconds * 1000;
    let due = 0;
    const load = (async () => {
      let tick = 0;
      while (performance.now() < endMs) {
        tick++;
        const target = Math.floor((rate * tick * TICK_MS) / 1000);
        for (; due < target; due++) {
          if (inFlight >= MAX_IN_FLIGHT) {
            notSent++;
            continue;
          }
          inFlight++;
          void submit(LOAD_KEY).then((a) => {
            inFlight--;
            count(a);
          });
        }
        const wait = startMs + tick * TICK_MS - performance.now();
        if (wait > 0) await sleep(wait);
      }
    })();
    let stopQuic = false;
    const quicLoop = (async () => {
      while (!stopQuic) {
        try {
          await client!.submit(signer.next().bytes, { routes: ['direct'] });
          quicAccepted++;
        } catch (err) {
          const reason = (err as { reason?: string }).reason ?? (err as Error).message;
          quicFailures.set(reason, (quicFailures.get(reason) ?? 0) + 1);
        }
        await sleep(QUIC_INTERVAL_MS);
      }
    })();

    // The reloads, spread over the run; the probes' accepted submissions count like the load's.
    const rounds: ReloadRound[] = [];
    const probe = async (since: number, key: string, want: number): Promise<{ ms: number; rttMs: number } | null> => {
      while (performance.now() - since < PROBE_LIMIT_MS) {
        const sent = performance.now();
        const a = await submit(key, probeAgent);
        count(a);
        const now = performance.now();
        if (a === want) return { ms: now - since, rttMs: now - sent };
        await sleep(PROBE_INTERVAL_MS);
      }
      return null;
    };
    const reloadLines: { readonly atMs: number; readonly outcome: unknown }[] = [];
    relay.onEvent((event, line) => {
      if (event === 'config_reload') reloadLines.push({ atMs: typeof line.time === 'string' ? Date.parse(line.time) : Date.now(), outcome: line.outcome });
    });
    const gap = (seconds * 1000) / (reloads + 1);
    const invalidRound = Math.floor(reloads / 2);
    for (let round = 1; round <= reloads; round++) {
      const at = startMs + round * gap;
      if (performance.now() < at) await sleep(at - performance.now());
      let invalidRefused: boolean | undefined;
      if (round === invalidRound) {
        writeKeys('- key: not-a-uuid\n  name: broken\n');
        const seqBefore = relay.byEvent.get('config_reload') ?? 0;
        relay.signal('SIGHUP');
        const t = performance.now();
        while ((relay.byEvent.get('config_reload') ?? 0) === seqBefore && performance.now() - t < PROBE_LIMIT_MS) await sleep(PROBE_INTERVAL_MS);
        const h = await request(agent, rpcUrl, 'GET', '/health?detail', {}, null, REQUEST_TIMEOUT_MS);
        const outcome = isTransportFailure(h) ? null : (JSON.parse(h.body) as { config?: { lastReload?: { outcome?: string } } }).config?.lastReload?.outcome;
        const still = await submit(rotating.key);
        count(still);
        invalidRefused = outcome === 'refused' && still === 200;
      }
      const next = { key: randomUUID(), name: `rotating-${round}` };
      writeKeys([keyEntry(next.key, next.name)]);
      const linesBefore = reloadLines.length;
      const hupWall = Date.now();
      const hup = performance.now();
      relay.signal('SIGHUP');
      const [added, removed] = await Promise.all([probe(hup, next.key, 200), probe(hup, rotating.key, 401)]);
      const t = performance.now();
      while (reloadLines.length === linesBefore && performance.now() - t < PROBE_LIMIT_MS) await sleep(PROBE_INTERVAL_MS);
      const line = reloadLines[linesBefore];
      rounds.push({
        round,
        invalidFirst: round === invalidRound,
        addedAcceptedMs: added?.ms ?? null,
        removedRefusedMs: removed?.ms ?? null,
        addedProbeRttMs: added?.rttMs ?? null,
        removedProbeRttMs: removed?.rttMs ?? null,
        relayAppliedMs: line === undefined || line.outcome !== 'applied' ? null : line.atMs - hupWall,
        ...(invalidRefused === undefined ? {} : { invalidRefused }),
      });
      rotating = next;
    }
    await load;
    stopQuic = true;
    await quicLoop;
    const drainUntil = performance.now() + REQUEST_TIMEOUT_MS;
    while (inFlight > 0 && performance.now() < drainUntil) await sleep(10);
    await sleep(SETTLE_MS);
    const after = await metrics();
    const ingressAfter = sumMetric(after, 'slotrelay_quic_ingress_connections_total', { outcome: 'accepted' });
    const createdAfter = sumMetric(after, 'slotrelay_quic_connection_events_total', { event: 'created' });
    const connectionEvents = Object.fromEntries(after.filter((x) => x.name === 'slotrelay_quic_connection_events_total').map((x) => [x.labels.event, x.value]));
    const connectionStates = Object.fromEntries(after.filter((x) => x.name === 'slotrelay_quic_connections').map((x) => [x.labels.state, x.value]));
    const reloadsApplied = sumMetric(after, 'slotrelay_config_reloads_total', { outcome: 'applied' });
    const reloadsRefused = sumMetric(after, 'slotrelay_config_reloads_total', { outcome: 'refused' });
    const clientDials = transport.connections;
    await client.close();
    client = null;
    const elapsedS = (performance.now() - startMs) / 1000;

    relay.signal('SIGTERM');
    const exit = await relay.waitExit(30_000);
    const stopped = relay.stopped;
    if (exit === null || stopped === null) throw new Error(`the relay did not stop with a relay_stopped line:\n${relay.tail.join('\n')}`);
    const clientAccepted = accepted + quicAccepted;
    const staticOutcomes = (stopped.outcomes?.static ?? {}) as Record<string, number>;
    const staticTotal = Object.values(staticOutcomes).reduce((a, b) => a + b, 0);
    const added = rounds.map((r) => r.addedAcceptedMs);
    const removed = rounds.map((r) => r.removedRefusedMs);
    const worst = (xs: (number | null)[]): number | null => (xs.some((x) => x === null) ? null : Math.max(...(xs as number[])));
    const checks = {
      noAcceptedLost: stopped.accepted === clientAccepted && staticTotal === clientAccepted && stopped.undelivered === 0 && exit.code === 0,
      newKeyWithin1s: added.every((x) => x !== null && x < KEY_CHANGE_BOUND_MS),
      removedKeyWithin1s: removed.every((x) => x !== null && x < KEY_CHANGE_BOUND_MS),
      invalidRefusedOldServing: rounds.some((r) => r.invalidRefused === true),
      quicIngressNotReconnected: ingressAfter === ingressBefore && clientDials === 1,
      leaderConnectionsNotReestablished: createdAfter === createdBefore,
      everyReloadCounted: reloadsApplied === reloads && reloadsRefused === 1,
    };
    const result = {
      bench: 'reload-under-load',
      date: new Date().toISOString(),
      host: { node: process.versions.node, cpus: (await import('node:os')).cpus().length },
      load: { rateTxPerS: rate, seconds, elapsedS: Number(elapsedS.toFixed(1)), httpAccepted: accepted, quicAccepted, notSentClientBehind: notSent, otherAnswers: Object.fromEntries(answers), quicFailures: Object.fromEntries(quicFailures), achievedTxPerS: Number((accepted / elapsedS).toFixed(0)) },
      books: { clientAccepted, relayAccepted: stopped.accepted, staticOutcomes, undelivered: stopped.undelivered, exitCode: exit.code, staticPeerReceived: peer.received, outcomes: stopped.outcomes },
      reloads: {
        sent: reloads + 1,
        applied: reloadsApplied,
        refused: reloadsRefused,
        worstAddedAcceptedMs: round0(worst(added)),
        worstRemovedRefusedMs: round0(worst(removed)),
        worstRelayAppliedMs: round0(worst(rounds.map((r) => r.relayAppliedMs))),
        worstProbeRttMs: round0(worst(rounds.flatMap((r) => [r.addedProbeRttMs, r.removedProbeRttMs]))),
        rounds: rounds.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v) : v]))),
      },
      connections: { quicIngressAcceptedBefore: ingressBefore, quicIngressAcceptedAfter: ingressAfter, clientDials, egressCreatedBefore: createdBefore, egressCreatedAfter: createdAfter, egressEventsAtEnd: connectionEvents, egressStatesAtEnd: connectionStates },
      checks,
      pass: Object.values(checks).every(Boolean),
    };
    const text = JSON.stringify(result, null, 2) + '\n';
    if (values.out !== undefined) writeFileSync(values.out, text);
    process.stdout.write(text);
    return result.pass ? 0 : 1;
  } finally {
    await client?.close().catch(() => undefined);
    relay.killAll();
    await peer.stop('SIGTERM');
    agent.destroy();
    probeAgent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`reload bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
