import { documentTypeId, peppolParticipant } from '../../../../src/peppol/identifiers';
import {
  MlsError,
  isMlsDocumentType,
  mlsAddress,
  mlsDecision,
  peppolHookMlsTypes,
  type MlsDecisionInput,
  type MlsLineInput,
  type MlsVerdict,
} from '../../../../src/peppol/mls';
import type { MlsType } from '../../../../src/peppol/sbdh';

const BV: MlsLineInput = { reasonCode: 'BV', ruleId: 'BR-CO-10', description: 'Sum of lines', location: '/Invoice' };
const BW: MlsLineInput = { reasonCode: 'BW', ruleId: 'PEPPOL-EN16931-R006', description: 'One attachment' };
const FD: MlsLineInput = { reasonCode: 'FD', description: 'The receiver could not be reached' };
const ACCEPTED: MlsVerdict = { outcome: 'accepted' };
const ACKNOWLEDGED: MlsVerdict = { outcome: 'acknowledged' };
const REJECTED: MlsVerdict = { outcome: 'rejected', lines: [BV, BW] };

function decide(change: Partial<MlsDecisionInput>): ReturnType<typeof mlsDecision> {
  return mlsDecision({ receivedIsMls: false, sbdhMlsType: undefined, mlsEnabled: false, verdict: ACCEPTED, ...change });
}

type Row = [
  sbdh: MlsType | undefined,
  enabled: boolean,
  party: MlsType | null,
  env: MlsType | null,
  accepted: 'AP' | 'none',
  rejected: 'RE' | 'none',
];

/**
 * The policy table. Off by default: nothing without the party's MLS or the sender's MLS_TYPE. A rejection is always
 * answered once someone asked; an accepted document only under ALWAYS_SEND (the sender's, or the party's setting when
 * MLS is on for it, party level before environment level).
 */
const TABLE: Row[] = [
  // nobody asked
  [undefined, false, null, null, 'none', 'none'],
  [undefined, false, 'ALWAYS_SEND', null, 'none', 'none'],
  [undefined, false, null, 'ALWAYS_SEND', 'none', 'none'],
  // MLS on for the party, the sender silent (= FAILURE_ONLY)
  [undefined, true, null, null, 'none', 'RE'],
  [undefined, true, 'FAILURE_ONLY', null, 'none', 'RE'],
  [undefined, true, 'ALWAYS_SEND', null, 'AP', 'RE'],
  [undefined, true, null, 'ALWAYS_SEND', 'AP', 'RE'],
  [undefined, true, 'FAILURE_ONLY', 'ALWAYS_SEND', 'none', 'RE'],
  [undefined, true, 'ALWAYS_SEND', 'FAILURE_ONLY', 'AP', 'RE'],
  // the sender asked in its SBDH
  ['FAILURE_ONLY', false, null, null, 'none', 'RE'],
  ['FAILURE_ONLY', false, 'ALWAYS_SEND', null, 'none', 'RE'],
  ['FAILURE_ONLY', true, 'ALWAYS_SEND', null, 'AP', 'RE'],
  ['ALWAYS_SEND', false, null, null, 'AP', 'RE'],
  ['ALWAYS_SEND', true, 'FAILURE_ONLY', null, 'AP', 'RE'],
];

describe('mlsDecision', () => {
  it.each(TABLE)(
    'MLS_TYPE %s, MLS on %s, party %s, environment %s: accepted → %s, rejected → %s',
    (sbdh, enabled, party, env, accepted, rejected) => {
      const base = { sbdhMlsType: sbdh, mlsEnabled: enabled, partyMlsType: party, environmentMlsType: env };
      const a = decide({ ...base, verdict: ACCEPTED });
      const r = decide({ ...base, verdict: REJECTED });
      expect(a.send ? a.responseCode : 'none').toBe(accepted);
      expect(r.send ? r.responseCode : 'none').toBe(rejected);
      if (!a.send) expect(a.reason).toBe(enabled || sbdh ? 'failure-only' : 'not-requested');
      if (!r.send) expect(r.reason).toBe('not-requested');
    },
  );

  it('AB for a document passed on without a confirmation of delivery', () => {
    expect(decide({ sbdhMlsType: 'ALWAYS_SEND', verdict: ACKNOWLEDGED })).toEqual({
      send: true,
      responseCode: 'AB',
      lines: [],
      requestedBy: ['sender'],
    });
  });

  it('a rejection carries every issue, warnings included, and a description', () => {
    expect(decide({ mlsEnabled: true, sbdhMlsType: 'FAILURE_ONLY', verdict: REJECTED })).toEqual({
      send: true,
      responseCode: 'RE',
      description: 'The document was rejected: 1 failure (BV)',
      lines: [BV, BW],
      requestedBy: ['party', 'sender'],
    });
    const fd = decide({ mlsEnabled: true, verdict: { outcome: 'rejected', lines: [FD, BV, BV], description: 'Gone' } });
    expect(fd).toMatchObject({ send: true, responseCode: 'RE', description: 'Gone', lines: [FD, BV, BV] });
    const summary = decide({ mlsEnabled: true, verdict: { outcome: 'rejected', lines: [FD, BV, BV] } });
    expect(summary).toMatchObject({ description: 'The document was rejected: 3 failures (BV, FD)' });
  });

  it('a positive MLS carries no issues (BW only beside fatal errors)', () => {
    const d = decide({ sbdhMlsType: 'ALWAYS_SEND', verdict: ACCEPTED });
    expect(d).toEqual({ send: true, responseCode: 'AP', lines: [], requestedBy: ['sender'] });
  });

  it('never answers an MLS, whatever was asked', () => {
    for (const verdict of [ACCEPTED, REJECTED]) {
      const d = decide({
        receivedIsMls: true,
        sbdhMlsType: 'ALWAYS_SEND',
        mlsEnabled: true,
        partyMlsType: 'ALWAYS_SEND',
        verdict,
      });
      expect(d).toEqual({ send: false, reason: 'answers-an-mls' });
    }
  });

  it('refuses a rejection without a failure', () => {
    expect(() => decide({ mlsEnabled: true, verdict: { outcome: 'rejected', lines: [BW] } })).toThrow(MlsError);
    expect(() => decide({ mlsEnabled: true, verdict: { outcome: 'rejected', lines: [] } })).toThrow(/SCH-MLS-24/);
  });
});

describe('mlsAddress', () => {
  const SEAT = 'POP000306';

  it('without MLS_TO: the sending access point default SPID, from the Seat ID in its certificate CN', () => {
    expect(mlsAddress({ sendingApCommonName: SEAT })).toEqual({
      ok: true,
      to: peppolParticipant('0242:000306'),
      source: 'sending-ap',
      warnings: [],
    });
  });

  it('a valid MLS_TO of the same service provider wins, use case included', () => {
    const to = peppolParticipant('0242:000306-MLS.INBOX');
    expect(mlsAddress({ mlsTo: to, sendingApCommonName: ` ${SEAT} ` })).toEqual({
      ok: true,
      to,
      source: 'MLS_TO',
      warnings: [],
    });
  });

  it('an MLS_TO of another service provider, or not a service provider id, falls back with a warning', () => {
    const other = mlsAddress({ mlsTo: peppolParticipant('0242:000999'), sendingApCommonName: SEAT });
    expect(other).toMatchObject({ ok: true, to: peppolParticipant('0242:000306'), source: 'sending-ap' });
    expect(other.warnings).toEqual([
      'MLS_TO iso6523-actorid-upis::0242:000999 does not belong to the sending access point POP000306',
    ]);
    const notSpis = mlsAddress({ mlsTo: peppolParticipant('0088:5790000435975'), sendingApCommonName: SEAT });
    expect(notSpis).toMatchObject({ ok: true, source: 'sending-ap' });
    expect(notSpis.warnings[0]).toMatch(/is not a service provider id/);
  });

  it('a certificate CN that is no Seat ID: MLS_TO if valid, else no address', () => {
    const to = peppolParticipant('0242:000306');
    expect(mlsAddress({ mlsTo: to, sendingApCommonName: 'ap.example.com' })).toMatchObject({
      ok: true,
      to,
      source: 'MLS_TO',
    });
    const none = mlsAddress({ sendingApCommonName: 'ap.example.com' });
    expect(none.ok).toBe(false);
    expect(none.warnings).toEqual([
      'the sending access point\'s certificate CN "ap.example.com" is not a Peppol Seat ID',
    ]);
  });
});

describe('isMlsDocumentType', () => {
  it('knows the MLS document type and nothing else', () => {
    const mls = documentTypeId(
      'busdox-docid-qns',
      'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse' +
        '##urn:peppol:edec:mls:1.0::2.1',
    );
    const invoiceResponse = documentTypeId(
      'busdox-docid-qns',
      'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse' +
        '##urn:fdc:peppol.eu:poacc:trns:invoice_response:3::2.1',
    );
    expect(isMlsDocumentType(mls)).toBe(true);
    expect(isMlsDocumentType(invoiceResponse)).toBe(false);
  });
});

describe('peppolHookMlsTypes', () => {
  const hook = (
    partyId: string | null,
    mlsType: string | null,
    over: { action?: string; isActive?: boolean } = {},
  ) => ({
    action: over.action ?? 'peppol',
    isActive: over.isActive ?? true,
    partyId,
    mlsType,
  });

  it('takes the party level before the environment level, and nothing when no hook sets it', () => {
    expect(peppolHookMlsTypes([], 'p')).toEqual({ party: null, environment: null, effective: null });
    expect(peppolHookMlsTypes([hook(null, 'ALWAYS_SEND')], 'p')).toEqual({
      party: null,
      environment: 'ALWAYS_SEND',
      effective: 'ALWAYS_SEND',
    });
    expect(peppolHookMlsTypes([hook(null, 'ALWAYS_SEND'), hook('p', 'FAILURE_ONLY')], 'p').effective).toBe(
      'FAILURE_ONLY',
    );
    // A party hook without mlsType leaves the environment's in force.
    expect(peppolHookMlsTypes([hook(null, 'ALWAYS_SEND'), hook('p', null)], 'p').effective).toBe('ALWAYS_SEND');
  });

  it('counts only active Peppol hooks of this party or the environment; ALWAYS_SEND wins within a level', () => {
    const ignored = [
      hook('other', 'ALWAYS_SEND'),
      hook('p', 'ALWAYS_SEND', { isActive: false }),
      hook('p', 'ALWAYS_SEND', { action: 'mailto' }),
      hook('p', 'always_send'),
    ];
    expect(peppolHookMlsTypes(ignored, 'p').effective).toBeNull();
    expect(peppolHookMlsTypes([hook('p', 'FAILURE_ONLY'), hook('p', 'ALWAYS_SEND')], 'p').party).toBe('ALWAYS_SEND');
  });
});
