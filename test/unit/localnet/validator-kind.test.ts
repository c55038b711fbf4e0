// Leaders of both kinds, the pure parts: the config's localnet.kinds (bounds, default, trip to the child), the
// `--firedancer N` flag, what each kind publishes as its version, and the relay's classification of versions.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';
import { localnetChildArgs, localnetOptionsFromConfig, parseBenchJson } from '../../../src/localnet/localnet-args.js';
import { parseLocalnetArgs } from '../../../src/localnet/run-localnet.js';
import { FIREDANCER_VERSION, versionOfKind } from '../../../src/localnet/validator-kind.js';
import { parseScenario } from '../../../src/landing-bench/options.js';
import { localnetSection } from '../../../src/landing-bench/relays.js';
import { countKinds, leaderKindOfVersion } from '../../../src/telemetry/leader-kind.js';

describe('localnet validator kinds', () => {
  it('defaults to Agave everywhere with a 10 s Firedancer idle timeout; refuses more kinds than validators and unknown kinds', () => {
    const c = configSchema.parse({}).localnet;
    expect(c.kinds).toEqual([]);
    expect(c.firedancerIdleTimeoutMs).toBe(10_000);
    expect(() => configSchema.parse({ localnet: { validators: 1, kinds: ['agave', 'firedancer'] } })).toThrow(/2 entries for 1 validators/);
    expect(() => configSchema.parse({ localnet: { kinds: ['sig'] } })).toThrow();
  });

  it('reaches the child as --bench-json; --firedancer N makes the first N validators Firedancer', () => {
    const cfg = configSchema.parse({ localnet: { validators: 3, kinds: ['agave', 'firedancer'], firedancerIdleTimeoutMs: 500 } }).localnet;
    const back = localnetOptionsFromConfig(parseBenchJson(localnetChildArgs(cfg)[1]));
    expect(back.kinds).toEqual(['agave', 'firedancer']);
    expect(back.firedancerIdleTimeoutMs).toBe(500);
    expect(parseLocalnetArgs(['--validators', '4', '--firedancer', '2']).kinds).toEqual(['firedancer', 'firedancer', 'agave', 'agave']);
    expect(() => parseLocalnetArgs(['--validators', '2', '--firedancer', '3'])).toThrow(/more than the 2 validators/);
  });

  it('each kind publishes a version the relay classifies back to it', () => {
    expect(versionOfKind('firedancer')).toBe(FIREDANCER_VERSION);
    expect(leaderKindOfVersion(versionOfKind('firedancer'))).toBe('firedancer');
    expect(leaderKindOfVersion(versionOfKind('agave'))).toBe('agave');
    expect(leaderKindOfVersion('3.1.4')).toBe('agave');
    expect(leaderKindOfVersion('4.0.0-beta.1')).toBe('agave');
    expect(leaderKindOfVersion('0.708.20306')).toBe('firedancer');
    expect(leaderKindOfVersion(null)).toBe('unknown');
    expect(leaderKindOfVersion('nightly')).toBe('unknown');
    expect(countKinds(new Map([['a', 'agave'], ['b', 'firedancer'], ['c', 'agave']] as const))).toEqual({ agave: 2, firedancer: 1, unknown: 0 });
  });

  it('the mixed-cluster scenario runs the two largest-stake validators as Firedancer', () => {
    const s = parseScenario('mixed-cluster');
    expect(s).toMatchObject({ name: 'mixed-cluster', firedancer: 2, qosModel: 'flow-control' });
    expect(localnetSection(s).kinds).toEqual(['firedancer', 'firedancer', 'agave', 'agave']);
    expect(localnetSection(parseScenario('hot-leader')).kinds).toBeUndefined();
    expect(parseScenario('hot-leader,firedancer=1').firedancer).toBe(1);
  });
});
