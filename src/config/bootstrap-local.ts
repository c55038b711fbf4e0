// First-run set-up for a newcomer (cold, CLI only): with no --config, `slotrelay start` uses local/config.yaml and
// creates it on first run with a fresh API key kept in local/keys.yaml (git-ignored). The key is printed once, at
// creation; later runs only say where it is.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const LOCAL_DIR = 'local';

export interface BootstrapResult {
  readonly configPath: string;
  readonly keysPath: string;
  /** Set only when the key was created by this call (print it once). */
  readonly newKey?: string;
}

export function ensureLocalConfig(cwd: string): BootstrapResult {
  const dir = resolve(cwd, LOCAL_DIR);
  const configPath = join(dir, 'config.yaml');
  const keysPath = join(dir, 'keys.yaml');
  if (existsSync(configPath)) return { configPath, keysPath };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = randomUUID();
  writeFileSync(
    keysPath,
    [
      '# API keys for this local relay (git-ignored). Same shape as `keys:` in the config; see docs/configuration.md.',
      `- key: ${key}`,
      '  name: local-dev',
      '  allowedRoutes: [rpc, direct, jito, static]',
      '  rateLimit: { perSecond: 1000, burst: 2000 }',
      '  preflight: simulate',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  writeFileSync(
    configPath,
    [
      '# Local relay configuration, created by `make start` on first run. Every field: config/slotrelay.example.yaml.',
      '# No upstream.rpcUrl: slotrelay starts the embedded localnet and uses it as upstream and rpc route.',
      'rpcHost: { host: 127.0.0.1, port: 8899 }',
      'relayHost: { host: 127.0.0.1, port: 8080 }',
      '# Direct to the leaders over QUIC by default (docs/configuration.md, "For a production relay").',
      'routes: { direct: { enabled: true }, defaultRoutes: [direct] }',
      'keysFile: keys.yaml',
      '',
    ].join('\n'),
  );
  return { configPath, keysPath, newKey: key };
}
