import { runAdmin } from '../../src/main/admin';
import { ReportingItemRepository } from '../../src/storage/reporting/reporting-item.repository';
import { testPki, testApEnv } from '../support/peppol/pki-fixture';
import { createTestContext, type TestContext } from '../support/test-app';

/*
 * `admin reporting generate|show|send --month`: a preview before generation, generation once (validated with the
 * official packs), the stored report shown after, and sending refused with the reason while our country is unset.
 */
describe('admin reporting', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    await testPki();
    ctx = await createTestContext('adminreporting', {
      env: {
        ...testApEnv('ap-receiver'),
      },
    });
    const items = new ReportingItemRepository(ctx.core.db.models);
    for (const [k, at] of [
      [1, '2026-03-31T23:59:59Z'],
      [2, '2026-03-01T00:00:00Z'],
      [3, '2026-04-01T00:00:00Z'],
    ] as const) {
      await items.record({
        direction: 'sent',
        messageId: `m-${k}@test`,
        exchangedAt: new Date(at),
        otherSeatId: 'PDE000123',
        documentTypeScheme: 'busdox-docid-qns',
        documentTypeValue:
          'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
        processScheme: 'cenbii-procid-ubl',
        processValue: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
        transportProtocol: 'peppol-transport-as4-v2_0',
        countryC1: 'BE',
        endUserId: `iso6523-actorid-upis::0208:000000000${k}`,
        mls: false,
        networkReport: false,
      });
    }
    // The same message again is a no-op.
    expect(await items.record({ ...(await items.listBetween(new Date(0), new Date('2100-01-01')))[0]! })).toBe(false);
  }, 120_000);
  afterAll(async () => {
    await ctx?.close();
  });

  const admin = (...args: string[]) => runAdmin(ctx.core, args) as Promise<Array<Record<string, unknown>>>;

  it('previews, generates once, shows the stored report, and refuses to send without our country', async () => {
    const preview = await admin('reporting', 'show', '--month', '2026-03', '--kind', 'tsr');
    expect(preview).toEqual([expect.objectContaining({ kind: 'tsr', generated: false })]);
    expect(preview[0]!['xml']).toContain('<Outgoing>2</Outgoing>');

    const generated = await admin('reporting', 'generate', '--month', '2026-03');
    expect(generated.map((g) => [g['kind'], g['documentId'], g['created']])).toEqual([
      ['tsr', 'peppol-tsr-2026-03', true],
      ['eusr', 'peppol-eusr-2026-03', true],
    ]);
    expect((await admin('reporting', 'generate', '--month', '2026-03')).map((g) => g['created'])).toEqual([
      false,
      false,
    ]);

    const shown = await admin('reporting', 'show', '--month', '2026-03');
    expect(shown.map((s) => s['generated'])).toEqual([true, true]);
    expect(shown[0]!['xml']).toContain('<ReporterID schemeID="CertSubjectCN">POP000002</ReporterID>');
    expect(shown[1]!['xml']).toContain('<SendingEndUsers>2</SendingEndUsers>');

    await expect(admin('reporting', 'send', '--month', '2026-03')).rejects.toThrow(/PEPPOL_REPORTING_COUNTRY/);
    await expect(admin('reporting', 'show', '--month', '2026-3')).rejects.toThrow(/YYYY-MM/);
  });
});
