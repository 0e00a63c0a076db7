import { loadManifest } from '../../../src/validation';
import {
  deriveTdd,
  missingTerms,
  parseTddConfig,
  planTddReports,
  renderTdd,
  TDD_CUSTOMIZATION_ID,
  TDD_NAMESPACE,
  TDD_PROFILE_ID,
  TDD_PROFILE_IDS,
  TDD_PROFILES,
  TDD_RULE_PACKS,
  tddFormat,
  tddProfile,
  tddProfileOfNamespace,
  tddRulePacks,
  tddTransport,
  VIDA_TDD_DOCUMENT_TYPE_ID,
  VIDA_TDD_PROCESS_ID,
} from '../../../src/reporting/tdd';
import { ORACLE_EXAMPLES, ORACLE_EXCHANGE, readCorpusInvoice, withEndpoints } from './tdd-oracle-support';

const BASE = { version: '1.0.0', serviceProviderId: '000000' };
const AUTHORITY = { id: 'SK', receiver: '0242:000000-taxsim.sk', roles: ['C2', 'C3'] };

describe('TDD profiles', () => {
  it('lists the ViDA pilot and the Slovak Republic profile with their namespace, ids and document type', () => {
    expect(TDD_PROFILE_IDS).toEqual(['vida-1', 'sk-1']);
    expect(TDD_PROFILES['vida-1']).toMatchObject({
      namespace: 'urn:peppol:schema:vida-taxdata:1.0',
      customizationId: 'urn:peppol:taxdata:vida-1',
      profileId: 'urn:peppol:taxreporting',
      documentTypeId: 'busdox-docid-qns::urn:peppol:schema:vida-taxdata:1.0::TaxData##urn:peppol:taxdata:vida-1::1.0',
      processId: 'cenbii-procid-ubl::urn:peppol:taxreporting',
    });
    expect(TDD_PROFILES['sk-1']).toMatchObject({
      namespace: 'urn:peppol:schema:sk-taxdata:1.0',
      customizationId: 'urn:peppol:taxdata:sk-1',
      profileId: 'urn:peppol:taxreporting',
      documentTypeId: 'busdox-docid-qns::urn:peppol:schema:sk-taxdata:1.0::TaxData##urn:peppol:taxdata:sk-1::1.0',
      processId: 'cenbii-procid-ubl::urn:peppol:taxreporting',
    });
    // The exports from before profiles are the ViDA profile's.
    expect([TDD_NAMESPACE, TDD_CUSTOMIZATION_ID, TDD_PROFILE_ID]).toEqual([
      TDD_PROFILES['vida-1'].namespace,
      TDD_PROFILES['vida-1'].customizationId,
      TDD_PROFILES['vida-1'].profileId,
    ]);
    expect(VIDA_TDD_DOCUMENT_TYPE_ID).toBe(TDD_PROFILES['vida-1'].documentTypeId);
    expect(VIDA_TDD_PROCESS_ID).toBe(TDD_PROFILES['vida-1'].processId);
  });

  it('pins rule packs per version: ViDA 1.0.0 schema and Schematron, SK 1.0.0 Schematron only', () => {
    expect(TDD_RULE_PACKS).toEqual({ '1.0.0': 'peppol-vida-tdd-xsd@1.0.0,peppol-vida-tdd@1.0.0', '1.1.0': undefined });
    expect(tddRulePacks('vida-1', '1.0.0')).toBe(TDD_RULE_PACKS['1.0.0']);
    expect(tddRulePacks('vida-1', '1.1.0')).toBeUndefined();
    expect(tddRulePacks('sk-1', '1.0.0')).toBe('peppol-sk-tdd@1.0.0');
    expect(tddRulePacks('sk-1', '1.1.0')).toBeUndefined();
    expect(TDD_PROFILES['sk-1'].versions).toEqual({ '1.0.0': { rulePacks: 'peppol-sk-tdd@1.0.0', schema: false } });
  });

  it('names only packs the manifest pins, of the kind the profile says', () => {
    const manifest = loadManifest();
    for (const id of TDD_PROFILE_IDS)
      for (const v of Object.values(TDD_PROFILES[id].versions)) {
        const refs = (v.rulePacks ?? '').split(',').filter(Boolean);
        const kinds = refs.map((ref) => {
          const [pack, version] = ref.split('@');
          const def = manifest.packs.find((p) => p.id === pack && p.version === version);
          expect(def).toBeDefined();
          return def!.kind;
        });
        if (refs.length > 0) expect(kinds.includes('xsd')).toBe(v.schema);
      }
  });

  it('finds a profile by id or namespace and refuses an unknown one', () => {
    expect(tddProfile().id).toBe('vida-1');
    expect(tddProfile('sk-1').id).toBe('sk-1');
    expect(() => tddProfile('ae-1')).toThrow('unknown Tax Data Document profile "ae-1" (known: vida-1, sk-1)');
    expect(tddProfileOfNamespace('urn:peppol:schema:sk-taxdata:1.0')?.id).toBe('sk-1');
    expect(tddProfileOfNamespace('urn:peppol:schema:taxdata:1.0')).toBeUndefined();
    expect(tddFormat('sk-1')).toMatchObject({
      id: 'peppol-sk-tdd',
      rootName: 'TaxData',
      rootNamespace: 'urn:peppol:schema:sk-taxdata:1.0',
      customizationId: 'urn:peppol:taxdata:sk-1',
    });
  });
});

describe('TDD configuration with profiles', () => {
  it('defaults an authority to vida-1 and the top-level document type and process to the ViDA pilot', () => {
    const cfg = parseTddConfig({ ...BASE, authorities: { DK: { ...AUTHORITY, id: 'DK' } } });
    expect(cfg.authorities.DK!.profile).toBe('vida-1');
    expect(cfg.documentTypeId).toBe(VIDA_TDD_DOCUMENT_TYPE_ID);
    expect(cfg.processId).toBe(VIDA_TDD_PROCESS_ID);
    expect(tddTransport(cfg, 'DK')).toMatchObject({
      profile: { id: 'vida-1' },
      documentTypeId: VIDA_TDD_DOCUMENT_TYPE_ID,
      processId: VIDA_TDD_PROCESS_ID,
    });
  });

  it('sends each authority its profile document type; the top-level pair applies to vida-1 only', () => {
    const cfg = parseTddConfig({
      ...BASE,
      documentTypeId: 'busdox-docid-qns::custom-vida',
      processId: 'cenbii-procid-ubl::custom',
      authorities: {
        SK: { ...AUTHORITY, profile: 'sk-1' },
        CZ: { ...AUTHORITY, id: 'CZ', profile: 'sk-1', documentTypeId: 'busdox-docid-qns::own', processId: 'p::own' },
        FI: { ...AUTHORITY, id: 'FI' },
        DK: { ...AUTHORITY, id: 'DK', profile: 'vida-1', documentTypeId: 'busdox-docid-qns::dk' },
      },
    });
    expect(tddTransport(cfg, 'SK')).toMatchObject({
      profile: { id: 'sk-1' },
      documentTypeId: 'busdox-docid-qns::urn:peppol:schema:sk-taxdata:1.0::TaxData##urn:peppol:taxdata:sk-1::1.0',
      processId: 'cenbii-procid-ubl::urn:peppol:taxreporting',
    });
    expect(tddTransport(cfg, cfg.authorities.CZ!)).toMatchObject({
      documentTypeId: 'busdox-docid-qns::own',
      processId: 'p::own',
    });
    expect(tddTransport(cfg, 'FI')).toMatchObject({
      documentTypeId: 'busdox-docid-qns::custom-vida',
      processId: 'cenbii-procid-ubl::custom',
    });
    expect(tddTransport(cfg, 'DK')).toMatchObject({
      documentTypeId: 'busdox-docid-qns::dk',
      processId: 'cenbii-procid-ubl::custom',
    });
    expect(() => tddTransport(cfg, 'SE')).toThrow('no tax authority is configured for SE');
  });

  it('refuses an unknown profile, naming the authority and the known profiles', () => {
    expect(() => parseTddConfig({ ...BASE, authorities: { AE: { ...AUTHORITY, id: 'AE', profile: 'ae-1' } } })).toThrow(
      'tax data document configuration is invalid: authorities.AE.profile: an unknown Tax Data Document profile ' +
        '(known: vida-1, sk-1)',
    );
  });

  it('refuses a version the authority profile does not have', () => {
    expect(() =>
      parseTddConfig({ ...BASE, version: '1.1.0', authorities: { SK: { ...AUTHORITY, profile: 'sk-1' } } }),
    ).toThrow('authorities.SK.profile: profile sk-1 has no version 1.1.0 (it has 1.0.0)');
  });

  it('asks the terms a profile requires beyond the common ones: SK the buyer name (BR-07)', () => {
    const inv = withEndpoints(readCorpusInvoice(ORACLE_EXAMPLES[0]!.file));
    const noName = { ...inv, buyer: { ...inv.buyer, name: undefined } };
    expect(TDD_PROFILES['vida-1'].requiredTerms).toEqual([]);
    expect(TDD_PROFILES['sk-1'].requiredTerms).toEqual(['BT-44']);
    expect(missingTerms(noName, 'C2')).toEqual([]);
    expect(missingTerms(noName, 'C2', 'vida-1')).toEqual([]);
    expect(missingTerms(noName, 'C2', 'sk-1')).toEqual(['BT-44 Buyer name (sk-1: BR-07)']);
    expect(missingTerms(inv, 'C3', 'sk-1')).toEqual([]);
  });

  it('derives and renders in the authority profile', () => {
    const inv = withEndpoints(readCorpusInvoice(ORACLE_EXAMPLES[0]!.file));
    const cfg = parseTddConfig({
      ...BASE,
      authorities: Object.fromEntries(
        ['NO', 'SE', 'DK', 'SK'].map((cc) => [cc, { ...AUTHORITY, id: cc, profile: 'sk-1' }]),
      ),
    });
    const plan = planTddReports(inv, 'outbound', cfg);
    const tdd = deriveTdd(inv, plan.reports[0]!, ORACLE_EXCHANGE, cfg);
    expect(tdd.profile).toBe('sk-1');
    const xml = renderTdd(tdd);
    expect(xml).toMatch(/^(<\?xml[^>]*>\s*)?<pxs:TaxData xmlns:pxs="urn:peppol:schema:sk-taxdata:1.0"/);
    expect(xml).toContain('<cbc:CustomizationID>urn:peppol:taxdata:sk-1</cbc:CustomizationID>');
    expect(xml).toContain('<cbc:ProfileID>urn:peppol:taxreporting</cbc:ProfileID>');
    // A document without a profile (derived before profiles existed) is the ViDA pilot's.
    const { profile: _drop, ...legacy } = tdd;
    expect(renderTdd(legacy)).toContain('xmlns:pxs="urn:peppol:schema:vida-taxdata:1.0"');
    expect(() => renderTdd({ ...tdd, version: '1.1.0' })).toThrow('profile sk-1 has no version 1.1.0');
  });
});
