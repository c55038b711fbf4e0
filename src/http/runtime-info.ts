// What the process's HTTP runtime is (cold: built once at start), as reported in relay_ready, the start banner,
// GET /health?detail (`http`) and /metrics (`slotrelay_http_runtime_info`): which uWS build on which Node and glibc.
import type { TextBuilder } from '../metrics/prometheus.js';
import type { Logger } from '../log/logger.js';
import { describeBuild, glibcVersion, loadUws, type HttpTimeouts, type UwsRuntime } from '../native/uws.js';
import type { UwsBuildId } from '../native/uws-builds.js';

export interface HttpRuntimeInfo {
  readonly build: UwsBuildId;
  readonly uws: string;
  readonly package: string;
  readonly packageVersion: string;
  /** Loaded from the build-time copy whose glibc 2.38 imports are rebound (docs/http-runtime.md). */
  readonly glibcCompat: boolean;
  readonly node: string;
  readonly nodeAbi: string;
  readonly glibc: string | null;
  /** Idle keep-alive connections stay open at least this long (announced as keep-alive: timeout=N). */
  readonly idleTimeoutSeconds: number;
  /** Newer builds passed over on this host, and why. */
  readonly passedOver: readonly { readonly id: UwsBuildId; readonly reason: string }[];
}

export function httpRuntimeInfo(r: UwsRuntime): HttpRuntimeInfo {
  return {
    build: r.build.id,
    uws: r.build.uwsVersion,
    package: r.build.packageName,
    packageVersion: r.build.packageVersion,
    glibcCompat: r.build.glibcCompat,
    node: process.versions.node,
    nodeAbi: process.versions.modules,
    glibc: glibcVersion() ?? null,
    idleTimeoutSeconds: r.idleTimeoutSeconds,
    passedOver: r.passedOver,
  };
}

/** `slotrelay_http_runtime_info{build,uws,package,glibc_compat,node,glibc} 1`: the Prometheus info-metric idiom. */
export function renderHttpRuntime(tb: TextBuilder, info: HttpRuntimeInfo): void {
  tb.declare('slotrelay_http_runtime_info', 'gauge', 'The uWebSockets.js build serving HTTP, on which Node and glibc (always 1)');
  tb.sample(
    'slotrelay_http_runtime_info',
    { build: info.build, uws: info.uws, package: info.package, glibc_compat: String(info.glibcCompat), node: info.node, glibc: info.glibc ?? 'none' },
    1,
  );
}

/**
 * Loads the uWS build for this host (src/native/uws.ts; throws where none loads, so the relay stops before anything
 * else starts) and logs which one, warning when it cannot honour http.idleTimeoutSeconds or http.slowClientTimeoutSeconds.
 */
export function loadHttpRuntime(timeouts: HttpTimeouts, log: Logger): { uwsRuntime: UwsRuntime; httpRuntime: HttpRuntimeInfo } {
  const { idleTimeoutSeconds, slowClientTimeoutSeconds } = timeouts;
  const uwsRuntime = loadUws(timeouts);
  const httpRuntime = httpRuntimeInfo(uwsRuntime);
  log.info({ event: 'http_runtime', ...httpRuntime }, `HTTP runtime: ${describeBuild(uwsRuntime.build)} on Node ${process.versions.node}`);
  if (idleTimeoutSeconds !== uwsRuntime.idleTimeoutSeconds) {
    log.warn(
      { event: 'http_idle_timeout', configured: idleTimeoutSeconds, seconds: uwsRuntime.idleTimeoutSeconds },
      `the ${uwsRuntime.build.id} uWS build closes idle keep-alive connections ${uwsRuntime.idleTimeoutSeconds}-12 s after the last answer, not http.idleTimeoutSeconds (docs/http-runtime.md)`,
    );
  }
  if (slowClientTimeoutSeconds !== uwsRuntime.slowClientTimeoutSeconds) {
    log.warn(
      { event: 'http_slow_client_timeout', configured: slowClientTimeoutSeconds, seconds: uwsRuntime.slowClientTimeoutSeconds },
      `the ${uwsRuntime.build.id} uWS build closes slow clients 8-12 s in, not per http.slowClientTimeoutSeconds (docs/http-runtime.md)`,
    );
  }
  return { uwsRuntime, httpRuntime };
}
