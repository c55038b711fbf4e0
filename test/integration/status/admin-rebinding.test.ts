// The admin listener's DNS-rebinding check (docs/status-page.md "Loopback and DNS rebinding", issue #47 item 4):
// on a loopback bind it answers only requests addressed to its own address, by Host and, for an absolute-form target
// (`GET http://host:port/status.json`, which our uWS build accepts: vendor/uws-patches/0005), by the target's
// authority too (RFC 9112 3.2.2 makes that the request's host). Raw sockets, exact bytes, a real relay per loadable
// uWS build; the prebuilt builds refuse absolute-form targets outright (505) before any handler runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, loadableUwsBuilds } from '../../helpers/raw-http.js';
import { startRelays, type RelayHandle } from '../../helpers/relay-process.js';

const BUILDS = loadableUwsBuilds();

/** What the listener answered one request (the first status line), on a fresh connection. */
async function statusOf(adminUrl: string, target: string, host: string): Promise<number | undefined> {
  const r = await exchange(adminUrl, [`GET ${target} HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n\r\n`], { untilStatuses: 1, waitMs: 3_000 });
  return r.statuses[0];
}

describe('the admin listener answers requests addressed to its loopback address only, by Host and by an absolute-form target', () => {
  const relays = new Map<string, RelayHandle>();
  beforeAll(async () => {
    const started = await startRelays(BUILDS.map((build) => ({ config: {}, env: { SLOTRELAY_UWS_BUILD: build } })));
    BUILDS.forEach((build, i) => relays.set(build, started[i]!));
  }, 60_000);
  afterAll(async () => {
    await Promise.all([...relays.values()].map((r) => r.stop()));
  });

  it.for(BUILDS)('%s: a foreign authority in an absolute-form target is refused as a foreign Host is; its own address is served', async (build) => {
    const relay = relays.get(build)!;
    const { port } = new URL(relay.adminUrl);
    const own = `127.0.0.1:${port}`;
    // What a foreign Host gets (the check as it was): the same answer is expected for a foreign target authority.
    expect(await statusOf(relay.adminUrl, '/status.json', `evil.example:${port}`)).toBe(403);
    expect(await statusOf(relay.adminUrl, '/status.json', own)).toBe(200);

    // Only our build routes absolute-form targets; the prebuilt ones answer 505 before any handler (never 200).
    const routed = build === 'source';
    const foreign = [
      ['http://evil.example/status.json', own], // the request
      [`http://evil.example:${port}/status.json`, own],
      [`http://evil.example:${port}/`, own], // the page
      [`http://evil.example:${port}/events`, own], // its event stream
      [`http://evil.example:${port}/nowhere`, own],
      [`http://127.0.0.1:${port}@evil.example/status.json`, own], // userinfo: the host is evil.example
      [`http://127.0.0.1:${port}.evil.example/status.json`, own],
      [`http://127.0.0.1/status.json`, own], // no port: not this listener's address as Host is checked
      [`http://${own}/status.json`, `evil.example:${port}`], // both are checked: a foreign Host still refused
    ] as const;
    const got: Record<string, number | undefined> = {};
    for (const [target, host] of foreign) got[`${target} host=${host}`] = await statusOf(relay.adminUrl, target, host);
    expect(got).toEqual(Object.fromEntries(foreign.map(([target, host]) => [`${target} host=${host}`, routed ? 403 : 505])));

    // Its own address as the target's authority (any of the loopback names, case-insensitively, either scheme).
    const ownTargets = [`http://${own}/status.json`, `http://localhost:${port}/status.json`, `HTTP://LOCALHOST:${port}/status.json`, `http://[::1]:${port}/status.json`];
    const served: Record<string, number | undefined> = {};
    for (const target of ownTargets) served[target] = await statusOf(relay.adminUrl, target, own);
    expect(served).toEqual(Object.fromEntries(ownTargets.map((t) => [t, routed ? 200 : 505])));
  });
});
