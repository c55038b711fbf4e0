// routing.adaptive (docs/adaptive-routing.md): defaults, and each bad value refused naming its field.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';

function issues(routing: unknown): string[] {
  const r = configSchema.safeParse({ routing });
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('routing.adaptive', () => {
  it('is off by default, with the documented defaults', () => {
    const c = configSchema.parse({});
    expect(c.routing.adaptive).toEqual({
      enabled: false,
      halfLifeMs: 10_000,
      minEvidence: 8,
      parkedBelow: 0.5,
      judgeAfterMs: 3_000,
      maxExtraCopies: 2,
      widenWithPartners: false,
      marginSlots: 1,
      maxPartners: 1,
      partners: ['rpc', 'jito'],
      maxLeaders: 1_024,
    });
  });

  it('refuses bad values, naming the field', () => {
    expect(issues({ adaptive: { parkedBelow: 1.5 } })[0]).toMatch(/^routing\.adaptive\.parkedBelow: /);
    expect(issues({ adaptive: { halfLifeMs: 10 } })[0]).toMatch(/^routing\.adaptive\.halfLifeMs: /);
    expect(issues({ adaptive: { maxExtraCopies: 9 } })[0]).toMatch(/^routing\.adaptive\.maxExtraCopies: /);
    expect(issues({ adaptive: { marginSlots: 5 } })[0]).toMatch(/^routing\.adaptive\.marginSlots: /);
    expect(issues({ adaptive: { partners: ['direct'] } })[0]).toMatch(/^routing\.adaptive\.partners\.0: /);
    expect(issues({ adaptive: { window: 5 } })[0]).toMatch(/window/);
    expect(issues({ adaptive: { enabled: true, partners: ['rpc'], judgeAfterMs: 1_000 } })).toEqual([]);
  });
});
