// Listening with the port to ourselves (cold: once per listener at start). uSockets sets SO_REUSEPORT on Linux unless
// asked not to, so a second relay started on a port already in use "listens" as well and the kernel hands it a share
// of the new connections: requests, the status page and /metrics then land on either process at random. With
// LIBUS_LISTEN_EXCLUSIVE_PORT the second listen fails, as an operator expects. uWS.js takes the option between port
// and callback; its typings declare that form only without a host, hence the cast.
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';

const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

type ListenWithOptions = (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => TemplatedApp;

export function listenExclusive(app: TemplatedApp, host: string, port: number, cb: (socket: us_listen_socket | false) => void): void {
  (app.listen as unknown as ListenWithOptions).call(app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, cb);
}
