/**
 * A local SML stand-in on 127.0.0.1 that follows the SML management WSDLs (ManageBusinessIdentifierService,
 * ManageServiceMetadataService, BDMSLService PrepareChangeCertificate) over HTTPS with client certificates, as the
 * real SML does. State is in memory. It authenticates each SMP by its TLS client certificate (bound at SMP Create),
 * enforces ownership (only the owning SMP deletes or prepares a migration), moves a participant only for the key its
 * owner prepared, and keeps the DNS zone in step: each change writes the participant's U-NAPTR record pointing at the
 * SMP that owns it, in the same synchronous step as the ownership change.
 */
import { X509Certificate, generateKeyPairSync, randomBytes, webcrypto, type KeyObject } from 'node:crypto';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Element } from '@xmldom/xmldom';
import { escapeXml as esc } from '../../../src/formats/xml/helpers';
import { parseXml, select, text } from '../../../src/formats/xml/secure-parser';
import { x509 } from '../../../src/peppol/pki/x509-lib';
import { naptrName, type NaptrRecord } from '../../../src/peppol/sml';
import { IDENTIFIERS_NS, LOCATOR_NS, SML_ACTIONS, SOAP11_NS } from '../../../src/peppol/sml-client';
import { smpNaptrRecord } from '../../../src/peppol/sml-registrar';
import type { KeyMaterial } from '../../../src/peppol/pki/key-material';

const NS = { S: SOAP11_NS, lrs: LOCATOR_NS, ids: IDENTIFIERS_NS, b: 'ec:services:wsdl:BDMSL:data:1.0' };

export interface SmlZoneWriter {
  setRecords(name: string, records: NaptrRecord[]): void;
  removeRecords(name: string): void;
}

interface SmpEntry {
  fingerprints: Set<string>;
  logicalAddress: string;
  physicalAddress: string;
}

class Fault extends Error {
  constructor(
    readonly kind: 'NotFound' | 'Unauthorized' | 'BadRequest' | 'InternalError',
    message: string,
  ) {
    super(message);
  }
}

/** A TLS server certificate for 127.0.0.1 (self-signed, serverAuth), for the stand-in's HTTPS. */
export async function localhostTlsCertificate(): Promise<{ key: KeyObject; certificate: X509Certificate }> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
  const signingKey = await webcrypto.subtle.importKey(
    'pkcs8',
    privateKey.export({ format: 'der', type: 'pkcs8' }),
    alg,
    false,
    ['sign'],
  );
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomBytes(8)
        .toString('hex')
        .replace(/^[89a-f]/, '1'),
      subject: 'CN=127.0.0.1',
      issuer: 'CN=127.0.0.1',
      notBefore: new Date(Date.now() - 86_400_000),
      notAfter: new Date(Date.now() + 86_400_000),
      signingAlgorithm: alg,
      publicKey: new x509.PublicKey(publicKey.export({ format: 'der', type: 'spki' })),
      signingKey,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
        new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }], false),
      ],
    },
    webcrypto as unknown as Crypto,
  );
  return { key: privateKey, certificate: new X509Certificate(Buffer.from(cert.rawData)) };
}

export class LocalSml {
  /** Every operation answered, as `<operation> <smpId> <participant?> → ok|<fault>`. */
  readonly log: string[] = [];
  readonly smps = new Map<string, SmpEntry>();
  /** Lower-cased `scheme::value` → owning SMP id. */
  readonly participants = new Map<string, string>();
  private readonly migrationKeys = new Map<string, { key: string; from: string }>();
  private server: https.Server | undefined;
  private port = 0;
  tls: { key: KeyObject; certificate: X509Certificate } | undefined;

  constructor(
    private readonly zone: string,
    private readonly dns: SmlZoneWriter,
    /** The CAs SMP client certificates must chain to. */
    private readonly clientCas: readonly KeyMaterial[],
    private readonly pageSize = 100,
  ) {}

  /** The management base URL (…/edelivery-sml). */
  get url(): string {
    return `https://127.0.0.1:${this.port}/edelivery-sml`;
  }

  ownerOf(participant: { scheme: string; value: string }): string | undefined {
    return this.participants.get(`${participant.scheme}::${participant.value}`.toLowerCase());
  }

  async start(): Promise<this> {
    this.tls = await localhostTlsCertificate();
    const server = https.createServer(
      {
        key: this.tls.key.export({ format: 'pem', type: 'pkcs8' }),
        cert: this.tls.certificate.toString(),
        ca: this.clientCas.flatMap((c) => [c.certificate, ...c.chain]).map((c) => c.toString()),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => void this.handle(req, res),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const fingerprint = (req.socket as TLSSocket).getPeerCertificate().fingerprint256;
    const action = String(req.headers['soapaction'] ?? '').replace(/^"|"$/g, '');
    let out: string;
    let status = 200;
    try {
      if (req.method !== 'POST') throw new Fault('BadRequest', 'POST only');
      const doc = parseXml(Buffer.concat(chunks));
      const body = select(doc, '/S:Envelope/S:Body/*', NS)[0] as Element | undefined;
      if (!body) throw new Fault('BadRequest', 'no SOAP 1.1 body');
      out = this.operate(String(req.url), action, body, fingerprint ?? '');
    } catch (e) {
      const f = e instanceof Fault ? e : new Fault('InternalError', (e as Error).message);
      this.log.push(`fault ${f.kind}: ${f.message}`);
      status = 500;
      out =
        `<soap:Fault><faultcode>soap:Server</faultcode><faultstring>${esc(f.message)}</faultstring><detail>` +
        `<ns2:${f.kind}Fault xmlns:ns2="${LOCATOR_NS}"><ns2:FaultMessage>${esc(f.message)}</ns2:FaultMessage>` +
        `</ns2:${f.kind}Fault></detail></soap:Fault>`;
    }
    res.writeHead(status, { 'content-type': 'text/xml; charset=utf-8' });
    res.end(`<soap:Envelope xmlns:soap="${SOAP11_NS}"><soap:Body>${out}</soap:Body></soap:Envelope>`);
  }

  /** The SMP id in `body`, which must belong to the calling certificate. */
  private caller(body: Element, fingerprint: string, mustExist = true): string {
    const id = text(body, 'lrs:ServiceMetadataPublisherID', NS) ?? '';
    if (!id) throw new Fault('BadRequest', 'ServiceMetadataPublisherID missing');
    const smp = this.smps.get(id);
    if (!smp) {
      if (mustExist) throw new Fault('NotFound', `SMP ${id} not found`);
      return id;
    }
    if (!smp.fingerprints.has(fingerprint)) throw new Fault('Unauthorized', `SMP ${id} belongs to another certificate`);
    return id;
  }

  private participantOf(body: Element): { key: string; scheme: string; value: string } {
    const e = select(body, 'ids:ParticipantIdentifier', NS)[0] as Element | undefined;
    const scheme = e?.getAttribute('scheme') ?? '';
    const value = (e?.textContent ?? '').trim();
    if (!scheme || !value) throw new Fault('BadRequest', 'ParticipantIdentifier missing');
    return { key: `${scheme}::${value}`.toLowerCase(), scheme, value };
  }

  private publish(p: { scheme: string; value: string }, smpId: string): void {
    const smp = this.smps.get(smpId) as SmpEntry;
    this.dns.setRecords(naptrName(p, this.zone), [smpNaptrRecord(smp.logicalAddress)]);
  }

  private operate(path: string, action: string, body: Element, fp: string): string {
    const name = body.localName;
    const expect = (service: string, act: string, element: string) => {
      if (!path.endsWith(`/edelivery-sml/${service}`))
        throw new Fault('BadRequest', `${element} is not served at ${path}`);
      if (action !== act) throw new Fault('BadRequest', `SOAPAction "${action}" does not match ${element}`);
    };
    switch (name) {
      case 'CreateParticipantIdentifier': {
        expect('manageparticipantidentifier', SML_ACTIONS.createParticipant, name);
        const smp = this.caller(body, fp);
        const p = this.participantOf(body);
        if (this.participants.has(p.key)) throw new Fault('BadRequest', `participant ${p.key} already exists`);
        this.participants.set(p.key, smp);
        this.publish(p, smp);
        this.log.push(`Create ${smp} ${p.key}`);
        return '';
      }
      case 'DeleteParticipantIdentifier': {
        expect('manageparticipantidentifier', SML_ACTIONS.deleteParticipant, name);
        const smp = this.caller(body, fp);
        const p = this.participantOf(body);
        const owner = this.participants.get(p.key);
        if (!owner) throw new Fault('NotFound', `participant ${p.key} not found`);
        if (owner !== smp) throw new Fault('Unauthorized', `participant ${p.key} belongs to another SMP`);
        this.participants.delete(p.key);
        this.migrationKeys.delete(p.key);
        this.dns.removeRecords(naptrName(p, this.zone));
        this.log.push(`Delete ${smp} ${p.key}`);
        return '';
      }
      case 'PageRequest': {
        expect('manageparticipantidentifier', SML_ACTIONS.list, name);
        const smp = this.caller(body, fp);
        const all = [...this.participants].filter(([, o]) => o === smp).map(([k]) => k);
        const start = Number(text(body, 'lrs:NextPageIdentifier', NS) || '0');
        const page = all.slice(start, start + this.pageSize);
        const next = start + this.pageSize < all.length ? String(start + this.pageSize) : undefined;
        return (
          `<ns2:ParticipantIdentifierPage xmlns:ns2="${LOCATOR_NS}" xmlns:ids="${IDENTIFIERS_NS}">` +
          page
            .map((k) => {
              const [scheme, value] = k.split('::') as [string, string];
              return `<ids:ParticipantIdentifier scheme="${esc(scheme)}">${esc(value)}</ids:ParticipantIdentifier>`;
            })
            .join('') +
          `<ns2:ServiceMetadataPublisherID>${esc(smp)}</ns2:ServiceMetadataPublisherID>` +
          (next ? `<ns2:NextPageIdentifier>${next}</ns2:NextPageIdentifier>` : '') +
          `</ns2:ParticipantIdentifierPage>`
        );
      }
      case 'PrepareMigrationRecord': {
        expect('manageparticipantidentifier', SML_ACTIONS.prepareToMigrate, name);
        const smp = this.caller(body, fp);
        const p = this.participantOf(body);
        const key = text(body, 'lrs:MigrationKey', NS) ?? '';
        if (!key) throw new Fault('BadRequest', 'MigrationKey missing');
        const owner = this.participants.get(p.key);
        if (!owner) throw new Fault('NotFound', `participant ${p.key} not found`);
        if (owner !== smp) throw new Fault('Unauthorized', `participant ${p.key} belongs to another SMP`);
        this.migrationKeys.set(p.key, { key, from: smp });
        this.log.push(`PrepareToMigrate ${smp} ${p.key}`);
        return '';
      }
      case 'CompleteMigrationRecord': {
        expect('manageparticipantidentifier', SML_ACTIONS.migrate, name);
        const smp = this.caller(body, fp);
        const p = this.participantOf(body);
        const key = text(body, 'lrs:MigrationKey', NS) ?? '';
        if (!this.participants.has(p.key)) throw new Fault('NotFound', `participant ${p.key} not found`);
        const prepared = this.migrationKeys.get(p.key);
        if (!prepared || prepared.key !== key || prepared.from !== this.participants.get(p.key))
          throw new Fault('BadRequest', `no migration of ${p.key} was prepared with this key`);
        // One step: the owner and the DNS record change together.
        this.participants.set(p.key, smp);
        this.migrationKeys.delete(p.key);
        this.publish(p, smp);
        this.log.push(`Migrate ${smp} ${p.key}`);
        return '';
      }
      case 'CreateServiceMetadataPublisherService':
      case 'UpdateServiceMetadataPublisherService': {
        const create = name.startsWith('Create');
        expect('manageservicemetadata', create ? SML_ACTIONS.createSmp : SML_ACTIONS.updateSmp, name);
        const id = this.caller(body, fp, !create);
        if (create && this.smps.has(id)) throw new Fault('BadRequest', `SMP ${id} already exists`);
        const logicalAddress = text(body, 'lrs:PublisherEndpoint/lrs:LogicalAddress', NS) ?? '';
        const physicalAddress = text(body, 'lrs:PublisherEndpoint/lrs:PhysicalAddress', NS) ?? '';
        if (!/^https?:\/\//.test(logicalAddress)) throw new Fault('BadRequest', 'LogicalAddress is not a URL');
        const fingerprints = this.smps.get(id)?.fingerprints ?? new Set([fp]);
        this.smps.set(id, { fingerprints, logicalAddress, physicalAddress });
        if (!create) for (const [k, o] of this.participants) if (o === id) this.republish(k, id);
        this.log.push(`${create ? 'Create' : 'Update'}SMP ${id}`);
        return '';
      }
      case 'ReadServiceMetadataPublisherService': {
        expect('manageservicemetadata', SML_ACTIONS.readSmp, name);
        const id = this.caller(body, fp);
        const smp = this.smps.get(id) as SmpEntry;
        return (
          `<ns2:ServiceMetadataPublisherService xmlns:ns2="${LOCATOR_NS}"><ns2:PublisherEndpoint>` +
          `<ns2:LogicalAddress>${esc(smp.logicalAddress)}</ns2:LogicalAddress>` +
          `<ns2:PhysicalAddress>${esc(smp.physicalAddress)}</ns2:PhysicalAddress></ns2:PublisherEndpoint>` +
          `<ns2:ServiceMetadataPublisherID>${esc(id)}</ns2:ServiceMetadataPublisherID>` +
          `</ns2:ServiceMetadataPublisherService>`
        );
      }
      case 'PrepareChangeCertificate': {
        expect('bdmslservice', SML_ACTIONS.prepareChangeCertificate, name);
        const pem = text(body, 'b:newCertificatePublicKey', NS) ?? '';
        let next: X509Certificate;
        try {
          next = new X509Certificate(pem);
        } catch {
          throw new Fault('BadRequest', 'newCertificatePublicKey is not a certificate');
        }
        const owned = [...this.smps.values()].filter((s) => s.fingerprints.has(fp));
        if (owned.length === 0) throw new Fault('Unauthorized', 'no SMP has this certificate');
        // The stand-in accepts the new certificate at once (the migration date is not waited for).
        for (const s of owned) s.fingerprints.add(next.fingerprint256);
        this.log.push('PrepareChangeCertificate');
        return '';
      }
      default:
        throw new Fault('BadRequest', `unknown operation ${name}`);
    }
  }

  private republish(key: string, smpId: string): void {
    const [scheme, value] = key.split('::') as [string, string];
    this.publish({ scheme, value }, smpId);
  }
}
