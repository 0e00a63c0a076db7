import { warmRulePacks } from '../../../src/main/compose';
import { loadManifest, packKey } from '../../../src/validation/manifest';

// The packs the worker's validation threads load at start: Peppol BIS Billing 3's, each a pinned pack of the manifest.

describe('warmRulePacks', () => {
  it('names the schema, the CEN rules and the Peppol rules of BIS Billing 3, each once and pinned', () => {
    const packs = warmRulePacks();
    const ids = packs.map((p) => p.slice(0, p.lastIndexOf('@')));
    expect(ids).toEqual(['ubl-2.1', 'peppol-cen-en16931-ubl', 'peppol-bis3-ubl']);
    const pinned = new Set(loadManifest().packs.map((p) => packKey(p)));
    for (const p of packs) expect(pinned.has(p)).toBe(true);
  });

  it('gives each pack once when formats share them', () => {
    const packs = warmRulePacks(['peppol-bis3-ubl', 'peppol-bis3-ubl']);
    expect(packs).toEqual(warmRulePacks());
  });

  it('refuses a format without rule packs', () => {
    expect(() => warmRulePacks(['no-such-format'])).toThrow(/no rule packs are mapped to the format no-such-format/);
  });
});
