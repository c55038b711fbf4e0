// Where the upstream's PubSub WebSocket is (cold: once at start). upstream.wsUrl when set; otherwise derived from
// upstream.rpcUrl the way web3.js's Connection derives its own WebSocket URL (Agave serves PubSub on rpc port + 1):
// http -> ws, https -> wss, an explicit port + 1, path and query kept (a provider's key usually rides in the query).

export function upstreamWsUrl(rpcUrl: string, wsUrl: string | undefined): string {
  if (wsUrl !== undefined) return wsUrl;
  const u = new URL(rpcUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  if (u.port !== '') u.port = String(Number(u.port) + 1);
  return u.toString();
}
