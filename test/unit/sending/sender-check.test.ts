import { checkSender } from '../../../src/sending/sender-check';
import type { PartyRecord } from '../../../src/storage/directory.repository';
import type { DocumentFacts } from '../../../workflows/contracts/send-invoice';

const party = (tenantId: string, partyId: string, legalEntityId: string): PartyRecord => ({
  _id: partyId,
  tenantId,
  partyId,
  participantKey: partyId.toLowerCase(),
  legalEntityId,
  name: partyId,
  createdAt: new Date(0),
});

const PARTIES = [
  party('t1', '0106:12345678', 'NL:0106:12345678'),
  // The same company under another identifier (its VAT number): same tenant, same legal entity.
  party('t1', '9944:NL123456789B01', 'NL:0106:12345678'),
  // Another company of the same tenant.
  party('t1', '0106:87654321', 'NL:0106:87654321'),
  // Another tenant's company.
  party('t2', '0007:5566778899', 'SE:0007:5566778899'),
];

function deps() {
  const reads: string[][] = [];
  return {
    reads,
    directory: {
      findParty: (id: string) => Promise.resolve(PARTIES.find((p) => p.partyId === id) ?? null),
      listParties: (tenantIds: readonly string[]) => {
        reads.push([...tenantIds]);
        return Promise.resolve(PARTIES.filter((p) => tenantIds.includes(p.tenantId)));
      },
    },
  };
}

const facts = (partyId = '0106:12345678', legalEntityId: string | null = 'NL:0106:12345678'): DocumentFacts => ({
  blobId: 'b',
  partyId,
  legalEntityId,
  createdBy: 'api',
  pdf: false,
});
const seller = (value: string) => ({ scheme: 'iso6523-actorid-upis', value });

describe('the sender check (BT-34 against the party of the upload)', () => {
  it('accepts the upload party itself without reading the directory', async () => {
    const d = deps();
    expect(await checkSender(d, 't1', facts(), seller('0106:12345678'))).toBeUndefined();
    expect(d.reads).toEqual([]);
  });

  it('compares the value case-insensitively, as Peppol identifiers are', async () => {
    const d = deps();
    const f = facts('9944:NL123456789B01', 'NL:0106:12345678');
    expect(await checkSender(d, 't1', f, seller('9944:nl123456789b01'))).toBeUndefined();
    expect(d.reads).toEqual([]);
  });

  it("accepts the identifier of the party's legal entity", async () => {
    const d = deps();
    const f = facts('9944:NL123456789B01', 'NL:0106:12345678');
    expect(await checkSender(d, 't1', f, seller('0106:12345678'))).toBeUndefined();
  });

  it('accepts another party of the same tenant and legal entity, reading the directory once', async () => {
    const d = deps();
    expect(await checkSender(d, 't1', facts(), seller('9944:nl123456789b01'))).toBeUndefined();
    expect(d.reads).toEqual([['t1']]);
  });

  it('refuses a seller whose ICD scheme differs, naming both ids', async () => {
    const refusal = await checkSender(deps(), 't1', facts(), seller('0190:12345678'));
    expect(refusal).toEqual({
      reasonCode: 'SENDER_NOT_ALLOWED',
      message:
        "Not sent: the invoice's seller 0190:12345678 (BT-34 EndpointID, the Peppol sender) is not the party " +
        '0106:12345678 it was uploaded for, nor a party of the same legal entity',
    });
  });

  it('refuses a seller whose value differs', async () => {
    const refusal = await checkSender(deps(), 't1', facts(), seller('0106:12345679'));
    expect(refusal?.reasonCode).toBe('SENDER_NOT_ALLOWED');
  });

  it('refuses another company of the same tenant', async () => {
    const refusal = await checkSender(deps(), 't1', facts(), seller('0106:87654321'));
    expect(refusal?.message).toContain('seller 0106:87654321');
    expect(refusal?.message).toContain('party 0106:12345678');
  });

  it("refuses another tenant's party: only the upload tenant's parties are looked at", async () => {
    const d = deps();
    expect((await checkSender(d, 't1', facts(), seller('0007:5566778899')))?.reasonCode).toBe('SENDER_NOT_ALLOWED');
    expect(d.reads.every((r) => r.length === 1 && r[0] === 't1')).toBe(true);
  });
});
