import { randomInt } from 'node:crypto';
import { parseXml, select, text } from '../../../src/formats/xml/secure-parser';
import { peppolParticipant } from '../../../src/peppol/identifiers';
import {
  IDENTIFIERS_NS,
  LOCATOR_NS,
  SML_ACTIONS,
  SOAP11_NS,
  SmlClient,
  SmlFaultError,
  createMigrationKey,
  isValidMigrationKey,
  type SoapTransport,
} from '../../../src/peppol/sml-client';
import { SoapSmlRegistrar } from '../../../src/peppol/sml-soap-registrar';

const NS = { S: SOAP11_NS, lrs: LOCATOR_NS, ids: IDENTIFIERS_NS, b: 'ec:services:wsdl:BDMSL:data:1.0' };
const WHO = peppolParticipant('0106:12345678');
const KEY = 'Ab3$cD4%efgh';

interface Sent {
  url: string;
  action: string;
  doc: ReturnType<typeof parseXml>;
}

/** A transport that records each request and answers with the next queued response. */
function fake(...answers: Array<{ status: number; body: string }>): SoapTransport & { sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    post(url, action, envelope) {
      sent.push({ url, action, doc: parseXml(envelope) });
      const a = answers.shift();
      if (!a) throw new Error('no answer queued');
      return Promise.resolve(a);
    },
  };
}

const ok = (body = '') => ({
  status: 200,
  body: `<S:Envelope xmlns:S="${SOAP11_NS}"><S:Body>${body}</S:Body></S:Envelope>`,
});
const fault = (kind: string, message: string) => ({
  status: 500,
  body:
    `<soap:Envelope xmlns:soap="${SOAP11_NS}"><soap:Body><soap:Fault><faultcode>soap:Server</faultcode>` +
    `<faultstring>${message}</faultstring><detail><ns2:${kind} xmlns:ns2="${LOCATOR_NS}">` +
    `<ns2:FaultMessage>[ERR-1] ${message}</ns2:FaultMessage></ns2:${kind}></detail></soap:Fault></soap:Body>` +
    `</soap:Envelope>`,
});

const client = (t: SoapTransport) =>
  new SmlClient({ url: 'https://sml.example.test/edelivery-sml/', smpId: 'SMP-1', transport: t });

describe('SmlClient requests (WSDL element names, namespaces and SOAPActions)', () => {
  it('Create participant', async () => {
    const t = fake(ok());
    await client(t).createParticipant(WHO);
    const [s] = t.sent as [Sent];
    expect(s.url).toBe('https://sml.example.test/edelivery-sml/manageparticipantidentifier');
    expect(s.action).toBe(SML_ACTIONS.createParticipant);
    expect(s.action).toBe('http://busdox.org/serviceMetadata/ManageBusinessIdentifierService/1.0/        :createIn');
    const body = select(s.doc, '/S:Envelope/S:Body/lrs:CreateParticipantIdentifier', NS);
    expect(body).toHaveLength(1);
    expect(text(s.doc, '//lrs:CreateParticipantIdentifier/lrs:ServiceMetadataPublisherID', NS)).toBe('SMP-1');
    expect(text(s.doc, '//lrs:CreateParticipantIdentifier/ids:ParticipantIdentifier', NS)).toBe('0106:12345678');
    expect(text(s.doc, '//lrs:CreateParticipantIdentifier/ids:ParticipantIdentifier/@scheme', NS)).toBe(
      'iso6523-actorid-upis',
    );
  });

  it('Delete, PrepareToMigrate and Migrate', async () => {
    const t = fake(ok(), ok(), ok());
    const c = client(t);
    await c.deleteParticipant(WHO);
    await c.prepareToMigrate(WHO, KEY);
    await c.migrate(WHO, KEY);
    const [d, p, m] = t.sent as [Sent, Sent, Sent];
    expect(d.action).toBe(SML_ACTIONS.deleteParticipant);
    expect(
      select(d.doc, '/S:Envelope/S:Body/lrs:DeleteParticipantIdentifier/ids:ParticipantIdentifier', NS),
    ).toHaveLength(1);
    expect(p.action).toBe(SML_ACTIONS.prepareToMigrate);
    expect(text(p.doc, '/S:Envelope/S:Body/lrs:PrepareMigrationRecord/lrs:MigrationKey', NS)).toBe(KEY);
    expect(text(p.doc, '//lrs:PrepareMigrationRecord/lrs:ServiceMetadataPublisherID', NS)).toBe('SMP-1');
    expect(m.action).toBe(SML_ACTIONS.migrate);
    expect(text(m.doc, '/S:Envelope/S:Body/lrs:CompleteMigrationRecord/lrs:MigrationKey', NS)).toBe(KEY);
    expect(text(m.doc, '//lrs:CompleteMigrationRecord/ids:ParticipantIdentifier', NS)).toBe('0106:12345678');
  });

  it('refuses a migration key outside the rule before sending anything', async () => {
    const t = fake();
    await expect(client(t).migrate(WHO, 'short')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(client(t).prepareToMigrate(WHO, 'abcdefgh12345678')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(t.sent).toHaveLength(0);
  });

  it('List pages and isOurs', async () => {
    const page = (ids: string[], next?: string) =>
      ok(
        `<ParticipantIdentifierPage xmlns="${LOCATOR_NS}" xmlns:ids="${IDENTIFIERS_NS}">` +
          ids
            .map((i) => `<ids:ParticipantIdentifier scheme="iso6523-actorid-upis">${i}</ids:ParticipantIdentifier>`)
            .join('') +
          `<ServiceMetadataPublisherID>SMP-1</ServiceMetadataPublisherID>` +
          (next ? `<NextPageIdentifier>${next}</NextPageIdentifier>` : '') +
          `</ParticipantIdentifierPage>`,
      );
    const t = fake(page(['0106:1'], 'p2'), page(['0106:12345678']), page(['0106:1']));
    const c = client(t);
    expect(await c.isOurs(peppolParticipant('0106:12345678'))).toBe(true);
    expect(text((t.sent[1] as Sent).doc, '//lrs:PageRequest/lrs:NextPageIdentifier', NS)).toBe('p2');
    expect(text((t.sent[0] as Sent).doc, '//lrs:PageRequest/lrs:ServiceMetadataPublisherID', NS)).toBe('SMP-1');
    expect(await c.isOurs(WHO)).toBe(false);
  });

  it('SMP Create / Read / Update / Delete', async () => {
    const t = fake(
      ok(),
      ok(
        `<ns2:ServiceMetadataPublisherService xmlns:ns2="${LOCATOR_NS}"><ns2:PublisherEndpoint>` +
          `<ns2:LogicalAddress>https://smp.example.test</ns2:LogicalAddress><ns2:PhysicalAddress>192.0.2.1` +
          `</ns2:PhysicalAddress></ns2:PublisherEndpoint><ns2:ServiceMetadataPublisherID>SMP-1` +
          `</ns2:ServiceMetadataPublisherID></ns2:ServiceMetadataPublisherService>`,
      ),
      ok(),
      ok(),
      fault('NotFoundFault', 'SMP not found'),
    );
    const c = client(t);
    await c.createSmp('https://smp.example.test', '192.0.2.1');
    expect(await c.readSmp()).toEqual({
      smpId: 'SMP-1',
      logicalAddress: 'https://smp.example.test',
      physicalAddress: '192.0.2.1',
    });
    await c.updateSmp('https://smp2.example.test', '192.0.2.2');
    await c.deleteSmp();
    expect(await c.readSmp()).toBeUndefined();
    const [create, read, update, del] = t.sent as [Sent, Sent, Sent, Sent];
    expect(create.url).toBe('https://sml.example.test/edelivery-sml/manageservicemetadata');
    expect(create.action).toBe('http://busdox.org/serviceMetadata/ManageServiceMetadataService/1.0/:createIn');
    expect(
      text(create.doc, '//lrs:CreateServiceMetadataPublisherService/lrs:PublisherEndpoint/lrs:LogicalAddress', NS),
    ).toBe('https://smp.example.test');
    expect(read.action).toBe(SML_ACTIONS.readSmp);
    expect(
      text(update.doc, '//lrs:UpdateServiceMetadataPublisherService/lrs:PublisherEndpoint/lrs:PhysicalAddress', NS),
    ).toBe('192.0.2.2');
    expect(text(del.doc, '/S:Envelope/S:Body/lrs:ServiceMetadataPublisherID', NS)).toBe('SMP-1');
  });

  it('PrepareChangeCertificate carries the PEM certificate and the date', async () => {
    const t = fake(ok());
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    await client(t).prepareChangeCertificate({ toString: () => pem } as never, '2030-01-31');
    const [s] = t.sent as [Sent];
    expect(s.url).toBe('https://sml.example.test/edelivery-sml/bdmslservice');
    expect(s.action).toBe('ec:services:wsdl:BDMSL:1.0:prepareChangeCertificateIn');
    expect(text(s.doc, '//b:PrepareChangeCertificate/b:newCertificatePublicKey', NS)).toBe(pem.trim());
    expect(text(s.doc, '//b:PrepareChangeCertificate/b:migrationDate', NS)).toBe('2030-01-31');
    await expect(client(fake()).prepareChangeCertificate({} as never, '31.1.2030')).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });
});

describe('SmlClient answers', () => {
  it.each(['NotFoundFault', 'UnauthorizedFault', 'BadRequestFault', 'InternalErrorFault'])('maps %s', async (kind) => {
    const e = await client(fake(fault(kind, 'nope')))
      .createParticipant(WHO)
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SmlFaultError);
    expect(e).toMatchObject({ fault: kind.replace(/Fault$/, ''), faultMessage: '[ERR-1] nope', operation: 'Create' });
  });

  it('a fault without detail is an InternalError with the faultstring', async () => {
    const body = `<S:Envelope xmlns:S="${SOAP11_NS}"><S:Body><S:Fault><faultcode>S:Client</faultcode><faultstring>bad action</faultstring></S:Fault></S:Body></S:Envelope>`;
    await expect(client(fake({ status: 500, body })).deleteParticipant(WHO)).rejects.toMatchObject({
      fault: 'InternalError',
      faultMessage: 'bad action',
    });
  });

  it('HTTP errors without an envelope and unreachable SMLs are DEPENDENCY_UNAVAILABLE', async () => {
    await expect(
      client(fake({ status: 502, body: '<html>bad gateway</html>' })).createParticipant(WHO),
    ).rejects.toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
    });
    const down: SoapTransport = { post: () => Promise.reject(new Error('ECONNREFUSED')) };
    await expect(client(down).createParticipant(WHO)).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
  });
});

describe('migration keys', () => {
  it('generated keys meet the BDMSL rule', () => {
    for (let i = 0; i < 2000; i++) expect(isValidMigrationKey(createMigrationKey(randomInt))).toBe(true);
  });
  it.each([
    ['Ab3$cD4%', true],
    ['AAbb11$$', true],
    ['Ab3$cD4%efgh ij', false],
    ['Ab3$cD4', false],
    ['Ab3$cD4%Ab3$cD4%Ab3$cD4%x', false],
    ['abcd1234$$', false],
    ['ABcd12$x', false],
  ])('%s → %s', (k, valid) => expect(isValidMigrationKey(k)).toBe(valid));
});

describe('SoapSmlRegistrar', () => {
  const smpUrl = 'https://smp.example.test/smp';
  it('creates our SMP record once before the first participant, then registers idempotently', async () => {
    const page = ok(
      `<lrs:ParticipantIdentifierPage xmlns:lrs="${LOCATOR_NS}" xmlns:ids="${IDENTIFIERS_NS}">` +
        `<ids:ParticipantIdentifier scheme="iso6523-actorid-upis">0106:12345678</ids:ParticipantIdentifier>` +
        `</lrs:ParticipantIdentifierPage>`,
    );
    const t = fake(fault('NotFoundFault', 'no smp'), ok(), ok(), fault('BadRequestFault', 'exists'), page);
    const r = new SoapSmlRegistrar({ client: client(t), smpUrl, smpAddress: '192.0.2.1' });
    await r.register(WHO, smpUrl);
    await r.register(WHO, `${smpUrl}/`);
    expect(t.sent.map((s) => s.action)).toEqual([
      SML_ACTIONS.readSmp,
      SML_ACTIONS.createSmp,
      SML_ACTIONS.createParticipant,
      SML_ACTIONS.createParticipant,
      SML_ACTIONS.list,
    ]);
  });

  it('a refused Create of a participant that is not ours stays refused; NotFound on delete is done', async () => {
    const empty = ok(`<lrs:ParticipantIdentifierPage xmlns:lrs="${LOCATOR_NS}"/>`);
    const t = fake(
      fault('BadRequestFault', 'exists'),
      empty,
      fault('NotFoundFault', 'gone'),
      fault('UnauthorizedFault', 'not yours'),
    );
    const r = new SoapSmlRegistrar({ client: client(t), smpUrl });
    await expect(r.register(WHO, smpUrl)).rejects.toMatchObject({ fault: 'BadRequest' });
    await expect(r.unregister(WHO)).resolves.toBeUndefined();
    await expect(r.unregister(WHO)).rejects.toMatchObject({ fault: 'Unauthorized' });
    await expect(r.register(WHO, 'https://elsewhere.test')).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});
