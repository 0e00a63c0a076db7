import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DEMO } from '../../../src/main/seed-demo';
import { peppolParticipant } from '../../../src/peppol/identifiers';
import { readInvoiceRouting } from '../../../src/peppol/invoice-routing';
import { validator } from '../validation/support';

// The documents `npm start` tells a newcomer to upload must pass every official rule of their format, and go from the
// demo sender to the demo receiver, or the Quick start would end in InvoiceSentError.
const DEMO_DIR = path.resolve(__dirname, '../../../scripts/demo');

jest.setTimeout(180_000);

describe.each(['invoice.xml', 'creditnote.xml'])('scripts/demo/%s', (file) => {
  const body = readFileSync(path.join(DEMO_DIR, file));

  it('passes the Peppol BIS Billing 3.0 rules with no error and no warning', async () => {
    const r = await validator().validate(body);
    expect({ valid: r.isValid, assertions: r.assertions }).toEqual({ valid: true, assertions: [] });
    expect(r.ruleSets.map((s) => s.id)).toEqual(['ubl-2.1', 'peppol-cen-en16931-ubl', 'peppol-bis3-ubl']);
  });

  it('is addressed from the demo sender to the demo receiver', () => {
    expect(readInvoiceRouting(body)).toEqual({
      ok: true,
      sender: peppolParticipant(DEMO.partyId),
      receiver: peppolParticipant(DEMO.receiverPartyId),
      countryC1: 'NL',
    });
  });
});
