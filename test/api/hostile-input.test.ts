import { deflateSync, gzipSync } from 'node:zlib';
import { DOMParser, type Element } from '@xmldom/xmldom';
import request from 'supertest';
import { expectContract } from '../support/contract';
import { corpusFile, SAMPLE_UBL_INVOICE } from '../support/corpus';
import { createTestContext, RecordingWorkflowStarter, type TestContext } from '../support/test-app';
import { sniffDocumentKind } from '../../api/read-body';
import { truncateForEcho, truncateQuoted } from '../../src/core/truncate';
import { explainSchemaIssue } from '../../src/validation/explain';
import { elementPath } from '../../src/validation/locations';

/** Bodies a hostile or careless client sends, which must be refused before anything is stored, never changed. */

const PARTY = '0106:33333333';
const SEND = `/api/v1/${PARTY}/salesInvoice/send`;
const PDF_SAMPLE = 'facturx/mustang/EN16931_Einfach.pdf';

interface Problem {
  code: string;
  detail: string;
  status: number;
}

describe('hostile uploads and document bodies', () => {
  let ctx: TestContext;
  let token: string;
  const invoice = corpusFile(SAMPLE_UBL_INVOICE);
  const pdf = corpusFile(PDF_SAMPLE);

  beforeAll(async () => {
    ctx = await createTestContext('hostile', {
      workflows: new RecordingWorkflowStarter(),
      env: { MAX_UPLOAD_BYTES: String(2 * 1024 * 1024) },
    });
    await ctx.core.directory.createTenant({ id: 'tenantH', name: 'H' });
    const party = { tenantId: 'tenantH', partyId: PARTY, legalEntityId: `NL:${PARTY}`, name: 'H' };
    await ctx.core.directory.createParty(party);
    token = await ctx.token(await ctx.createClient(['tenantH']));
  });
  afterAll(async () => ctx.close());

  const blobCount = async () =>
    ctx.core.db.connection.db!.collection(ctx.core.db.blobs.filesCollection).countDocuments();
  const post = (path: string, body: Buffer, type: string) =>
    request(ctx.app).post(path).auth(token, { type: 'bearer' }).type(type).send(body);
  const send = (body: Buffer, type: string) => post(SEND, body, type);
  const MEDIA = 'UNSUPPORTED_MEDIA_TYPE';
  const download = (id: string) =>
    request(ctx.app)
      .get(`/api/v1/${PARTY}/generic/${id}/download`)
      .auth(token, { type: 'bearer' })
      .buffer(true)
      .parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => cb(null, Buffer.concat(chunks)));
      });

  /** The answer is a problem with this status and code, and nothing new was stored. */
  async function expectRefused(res: request.Response, status: number, code: string, detail: RegExp, before: number) {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status, code });
    expect((res.body as Problem).detail).toMatch(detail);
    expect(await blobCount()).toBe(before);
  }

  describe('Content-Encoding', () => {
    it('refuses a gzip or deflate upload with 415 naming the encoding; stores nothing', async () => {
      for (const [encoding, body] of [
        ['gzip', gzipSync(invoice)],
        ['deflate', deflateSync(invoice)],
        ['br', invoice],
      ] as const) {
        const before = await blobCount();
        const res = await send(body, 'application/xml').set('Content-Encoding', encoding);
        await expectRefused(res, 415, MEDIA, new RegExp(`Content-Encoding "${encoding}" is not accepted`), before);
        expect(res.headers['accept-encoding']).toBe('identity');
        expectContract('post', '/api/v1/:partyId/salesInvoice/send', res);
      }
    });

    it('accepts Content-Encoding: identity, and stores the bytes unchanged', async () => {
      const res = await send(invoice, 'application/xml').set('Content-Encoding', 'identity');
      expect(res.status).toBe(200);
      const stored = await download((res.body as { id: string }).id);
      expect(Buffer.compare(stored.body as Buffer, invoice)).toBe(0);
    });

    it('refuses a compressed body on validate and transform too', async () => {
      for (const path of ['/api/v1/generic/validate', '/api/v1/generic/transform?targetFormat=en16931-cii']) {
        const res = await request(ctx.app)
          .post(path)
          .auth(token, { type: 'bearer' })
          .type('application/xml')
          .set('Content-Encoding', 'gzip')
          .send(gzipSync(invoice));
        expect(res.status).toBe(415);
        expect(res.body).toMatchObject({ code: MEDIA, detail: expect.stringMatching(/Content-Encoding "gzip"/) });
      }
    });
  });

  describe('multipart', () => {
    it('refuses a second file part with 400 and keeps neither file', async () => {
      const before = await blobCount();
      const res = await request(ctx.app)
        .post(SEND)
        .auth(token, { type: 'bearer' })
        .attach('file', invoice, { filename: 'one.xml', contentType: 'application/xml' })
        .attach('other', invoice, { filename: 'two.xml', contentType: 'application/xml' });
      await expectRefused(res, 400, 'BAD_REQUEST', /more than one file/, before);
    });

    it('refuses a second file part also when the first is large (stored before the second arrives)', async () => {
      const before = await blobCount();
      const large = Buffer.concat([invoice, Buffer.alloc(1024 * 1024, 0x20)]);
      const res = await request(ctx.app)
        .post(SEND)
        .auth(token, { type: 'bearer' })
        .attach('file', large, { filename: 'one.xml', contentType: 'application/xml' })
        .attach('other', Buffer.from('<x/>'), { filename: 'two.xml', contentType: 'application/xml' });
      await expectRefused(res, 400, 'BAD_REQUEST', /more than one file/, before);
    });

    it('refuses a file part of another type, and keeps an untyped PDF part as a PDF', async () => {
      const before = await blobCount();
      const text = await request(ctx.app)
        .post(SEND)
        .auth(token, { type: 'bearer' })
        .attach('file', Buffer.from('hello'), { filename: 'a.txt', contentType: 'text/plain' });
      await expectRefused(text, 415, 'UNSUPPORTED_MEDIA_TYPE', /file part's Content-Type "text\/plain"/, before);

      const untyped = await request(ctx.app)
        .post(SEND)
        .auth(token, { type: 'bearer' })
        .attach('file', pdf, { filename: 'invoice.bin', contentType: 'application/octet-stream' });
      expect(untyped.status).toBe(200);
      const stored = await download((untyped.body as { id: string }).id);
      expect(stored.headers['content-type']).toBe('application/pdf');
      expect(Buffer.compare(stored.body as Buffer, pdf)).toBe(0);
    });
  });

  describe('declared type against the first bytes', () => {
    it('refuses XML declared as PDF and a PDF declared as XML with 415; stores nothing', async () => {
      let before = await blobCount();
      const xmlAsPdf = await send(invoice, 'application/pdf');
      await expectRefused(xmlAsPdf, 415, MEDIA, /declared application\/pdf, but it is XML/, before);
      before = await blobCount();
      const pdfAsXml = await send(pdf, 'application/xml');
      await expectRefused(pdfAsXml, 415, MEDIA, /declared application\/xml, but it is a PDF/, before);
      before = await blobCount();
      const multipart = await request(ctx.app)
        .post(SEND)
        .auth(token, { type: 'bearer' })
        .attach('file', invoice, { filename: 'invoice.pdf', contentType: 'application/pdf' });
      await expectRefused(multipart, 415, 'UNSUPPORTED_MEDIA_TYPE', /declared application\/pdf, but it is XML/, before);
    });

    it('refuses a body that is neither XML nor PDF', async () => {
      const before = await blobCount();
      const json = await send(Buffer.from('{"invoice": 1}'), 'application/xml');
      await expectRefused(json, 415, MEDIA, /is not XML/, before);
      const gif = await send(Buffer.from('GIF89a'), 'application/pdf');
      await expectRefused(gif, 415, MEDIA, /does not start like a PDF/, before);
    });

    it('accepts XML after a byte order mark and whitespace, and a PDF after a few leading bytes', async () => {
      const xml = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('\r\n  \n'), invoice]);
      const xmlRes = await send(xml, 'application/xml');
      expect(xmlRes.status).toBe(200);
      expect(Buffer.compare((await download((xmlRes.body as { id: string }).id)).body as Buffer, xml)).toBe(0);
      const lead = Buffer.concat([Buffer.alloc(300, 0x0a), pdf]);
      expect((await send(lead, 'application/pdf')).status).toBe(200);
    });

    it('validate and transform refuse a PDF declared as XML and XML declared as PDF', async () => {
      for (const path of ['/api/v1/generic/validate', '/api/v1/generic/transform?targetFormat=en16931-cii']) {
        const pdfAsXml = await post(path, pdf, 'application/xml');
        expect(pdfAsXml.status).toBe(415);
        expect((pdfAsXml.body as Problem).detail).toMatch(/declared application\/xml, but it is a PDF/);
        const xmlAsPdf = await post(path, invoice, 'application/pdf');
        expect(xmlAsPdf.status).toBe(415);
        expect((xmlAsPdf.body as Problem).detail).toMatch(/declared application\/pdf, but it is XML/);
      }
    });
  });

  describe('values echoed from a document are bounded', () => {
    const hugeName = `E${'x'.repeat(1024 * 1024)}`;

    it('a huge root element name does not come back whole in a problem', async () => {
      const body = Buffer.from(`<${hugeName} xmlns="urn:example:${'n'.repeat(5000)}"/>`);
      const res = await request(ctx.app)
        .post('/api/v1/generic/transform?targetFormat=en16931-cii')
        .auth(token, { type: 'bearer' })
        .type('application/xml')
        .send(body);
      expect(res.status).toBe(400);
      expect(res.text.length).toBeLessThan(8 * 1024);
    });

    it('truncateForEcho keeps short values and cuts long ones with an ellipsis, never inside a surrogate pair', () => {
      expect(truncateForEcho('short')).toBe('short');
      const cut = truncateForEcho('a'.repeat(1000));
      expect(cut).toHaveLength(200);
      expect(cut.endsWith('…')).toBe(true);
      const emoji = truncateForEcho(`${'a'.repeat(198)}😀😀`);
      expect(emoji).toBe(`${'a'.repeat(198)}…`);
      const quoted = truncateQuoted(`Element '${hugeName}': This element is not expected.`);
      expect(quoted).toBe(`Element 'E${'x'.repeat(198)}…': This element is not expected.`);
    });

    it('schema assertion texts and locations quote a huge element name or value bounded', () => {
      const amountXml = '<cbc:PriceAmount xmlns:cbc="urn:c">1</cbc:PriceAmount>';
      const xml = `<Invoice><${hugeName}>${amountXml}</${hugeName}></Invoice>`;
      const doc = new DOMParser().parseFromString(xml, 'text/xml');
      const amount = doc.getElementsByTagName('cbc:PriceAmount')[0] as Element;
      const path = elementPath(amount);
      expect(path.length).toBeLessThan(300);
      expect(path).toMatch(/^\/Invoice\/Ex+…\/cbc:PriceAmount$/);

      const value = `1e${'9'.repeat(100_000)}`;
      const issue = {
        line: 1,
        element: '{urn:c}PriceAmount',
        message: `Element '{urn:c}PriceAmount': '${value}' is not a valid value of the atomic type 'xs:decimal'.`,
      };
      const { text } = explainSchemaIssue(issue, amount);
      expect(text.length).toBeLessThan(2100);
      expect(text).not.toContain(value);
      expect(text).toContain(`'${value.slice(0, 199)}…'`);
    });

    it('sniffDocumentKind tells XML from PDF from anything else', () => {
      expect(sniffDocumentKind(Buffer.from('  <a/>'), true)).toBe('xml');
      expect(sniffDocumentKind(Buffer.from([0xff, 0xfe, 0x3c, 0x00, 0x61, 0x00]), true)).toBe('xml');
      expect(sniffDocumentKind(Buffer.from('%PDF-1.7'), true)).toBe('pdf');
      expect(sniffDocumentKind(Buffer.from('   '), false)).toBeUndefined();
      expect(sniffDocumentKind(Buffer.from('   '), true)).toBe('other');
      expect(sniffDocumentKind(Buffer.from('hello'), true)).toBe('other');
      const late = Buffer.concat([Buffer.alloc(1100, 0x41), Buffer.from('%PDF-')]);
      expect(sniffDocumentKind(late, true, 'pdf')).toBe('other');
      expect(sniffDocumentKind(Buffer.from('<html>%PDF-1.4'), true, 'pdf')).toBe('pdf');
    });
  });
});
