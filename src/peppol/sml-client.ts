/**
 * The SML management client (EXPERIMENTAL: built to the published protocol and tried against a local stand-in only,
 * not yet against the OpenPeppol SML test environment). SOAP 1.1, document/literal, three services under the
 * management URL (e.g. https://api.sml.test.tech.peppol.org/edelivery-sml), the SMP authenticated by its client
 * certificate (mutual TLS):
 *
 *   …/manageparticipantidentifier  ManageBusinessIdentifierService-1.0.wsdl: Create, Delete, List, PrepareToMigrate,
 *                                  Migrate (CreateList / DeleteList are not used)
 *   …/manageservicemetadata        ManageServiceMetadataService-1.0.wsdl: Create, Read, Update, Delete of our SMP
 *   …/bdmslservice                 BDMSLService-1.0.wsdl: PrepareChangeCertificate
 *
 * Element names, namespaces and SOAPAction values are those of the WSDL/XSD (docs/decisions.md "SML registration").
 * Faults are the four the WSDL declares, each an SmlFaultError with its kind and message.
 */
import type { X509Certificate } from 'node:crypto';
import type { Document, Element, Node } from '@xmldom/xmldom';
import { Agent, request, type Dispatcher } from 'undici';
import { escapeXml as esc } from '../formats/xml/helpers';
import { parseXml, select, text } from '../formats/xml/secure-parser';
import { GatewayError } from '../core/gateway-error';
import { formatId, parseParticipantId, type ParticipantId } from './identifiers';
import type { KeyMaterial } from './pki/key-material';

export const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const LOCATOR_NS = 'http://busdox.org/serviceMetadata/locator/1.0/';
export const IDENTIFIERS_NS = 'http://busdox.org/transport/identifiers/1.0/';
export const BDMSL_DATA_NS = 'ec:services:wsdl:BDMSL:data:1.0';

const MBIS = 'http://busdox.org/serviceMetadata/ManageBusinessIdentifierService/1.0/';
const MSMS = 'http://busdox.org/serviceMetadata/ManageServiceMetadataService/1.0/';
/** SOAPAction values as the WSDL binding writes them (the participant service's include the WSDL's spaces). */
export const SML_ACTIONS = {
  createParticipant: `${MBIS}        :createIn`,
  deleteParticipant: `${MBIS}        :deleteIn`,
  list: `${MBIS}        :listIn`,
  prepareToMigrate: `${MBIS}        :prepareMigrateIn`,
  migrate: `${MBIS}        :migrateIn`,
  createSmp: `${MSMS}:createIn`,
  readSmp: `${MSMS}:readIn`,
  updateSmp: `${MSMS}:updateIn`,
  deleteSmp: `${MSMS}:deleteIn`,
  prepareChangeCertificate: 'ec:services:wsdl:BDMSL:1.0:prepareChangeCertificateIn',
} as const;

export const SML_SERVICES = {
  participants: 'manageparticipantidentifier',
  smp: 'manageservicemetadata',
  bdmsl: 'bdmslservice',
} as const;

export type SmlFaultKind = 'NotFound' | 'Unauthorized' | 'BadRequest' | 'InternalError';
const FAULT_KINDS: readonly SmlFaultKind[] = ['NotFound', 'Unauthorized', 'BadRequest', 'InternalError'];

/** A fault the SML answered (one of the WSDL's four, or a SOAP fault without detail: `InternalError`). */
export class SmlFaultError extends Error {
  constructor(
    readonly fault: SmlFaultKind,
    readonly faultMessage: string,
    readonly operation: string,
  ) {
    super(`the SML refused ${operation}: ${fault}${faultMessage ? ` (${faultMessage})` : ''}`);
    this.name = 'SmlFaultError';
  }
}

/**
 * The migration key rule of the BDMSL (as peppol-commons CSMLDefault.MIGRATION_CODE_PATTERN states it): 8 to 24
 * characters without white space, at least two each of upper-case letters, lower-case letters, digits and the
 * specials `@#$%()[]{}*^_-!~|+=`.
 */
export const MIGRATION_KEY_PATTERN =
  /^(?=.{8,24}$)(?=(.*[@#$%()[\]{}*^_\-!~|+=]){2,})(?=(.*[A-Z]){2})(?=(.*[a-z]){2})(?=(.*[0-9]){2})(?=\S+$).*$/;

export function isValidMigrationKey(key: string): boolean {
  return MIGRATION_KEY_PATTERN.test(key);
}

const KEY_LOWER = 'abcdefghijklmnopqrstuvwxyz';
const KEY_UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const KEY_DIGITS = '0123456789';
const KEY_SPECIAL = '@#$%()[]{}*^-!~|+=';

/** A random 24-character key that meets the rule: two of each class, then any, shuffled (crypto-random). */
export function createMigrationKey(random: (n: number) => number): string {
  const all = KEY_LOWER + KEY_UPPER + KEY_DIGITS + KEY_SPECIAL;
  const pick = (set: string) => set[random(set.length)] as string;
  const chars = [KEY_LOWER, KEY_LOWER, KEY_UPPER, KEY_UPPER, KEY_DIGITS, KEY_DIGITS, KEY_SPECIAL, KEY_SPECIAL].map(
    pick,
  );
  while (chars.length < 24) chars.push(pick(all));
  for (let i = chars.length - 1; i > 0; i--) {
    const j = random(i + 1);
    [chars[i], chars[j]] = [chars[j] as string, chars[i] as string];
  }
  return chars.join('');
}

export interface SmpRecord {
  smpId: string;
  /** The SMP base URL the SML publishes. */
  logicalAddress: string;
  /** The SMP's IP address. */
  physicalAddress: string;
}

export interface ParticipantPage {
  participants: ParticipantId[];
  nextPageIdentifier?: string;
}

/** One SOAP exchange; the default sends it over HTTPS with our SMP's client certificate. */
export interface SoapTransport {
  post(url: string, soapAction: string, envelope: string): Promise<{ status: number; body: string }>;
}

export interface SmlClientOptions {
  /** The management base URL, e.g. https://api.sml.test.tech.peppol.org/edelivery-sml. */
  url: string;
  /** Our SMP id as registered in the SML. */
  smpId: string;
  transport: SoapTransport;
}

function participantXml(p: ParticipantId): string {
  return `<ids:ParticipantIdentifier scheme="${esc(p.scheme)}">${esc(p.value)}</ids:ParticipantIdentifier>`;
}

export function soapEnvelope(body: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>` +
    `<S:Envelope xmlns:S="${SOAP11_NS}"><S:Body>${body}</S:Body></S:Envelope>`
  );
}

const NS = { S: SOAP11_NS, lrs: LOCATOR_NS, ids: IDENTIFIERS_NS } as const;
const lrsOpen = (name: string) => `<lrs:${name} xmlns:lrs="${LOCATOR_NS}" xmlns:ids="${IDENTIFIERS_NS}">`;

export class SmlClient {
  constructor(private readonly options: SmlClientOptions) {
    try {
      new URL(options.url);
    } catch {
      throw new GatewayError('BAD_REQUEST', `the SML management URL "${options.url}" is not a URL`);
    }
    if (!options.smpId.trim()) throw new GatewayError('BAD_REQUEST', 'the SMP id for the SML is empty');
  }

  get smpId(): string {
    return this.options.smpId;
  }

  // Participants ------------------------------------------------------------------------------------------------------

  async createParticipant(participant: ParticipantId): Promise<void> {
    await this.call(
      'participants',
      'Create',
      SML_ACTIONS.createParticipant,
      this.forParticipant('Create', participant),
    );
  }

  async deleteParticipant(participant: ParticipantId): Promise<void> {
    await this.call(
      'participants',
      'Delete',
      SML_ACTIONS.deleteParticipant,
      this.forParticipant('Delete', participant),
    );
  }

  /** One page of our SMP's participants. */
  async listParticipants(nextPageIdentifier?: string): Promise<ParticipantPage> {
    const body =
      `${lrsOpen('PageRequest')}<lrs:ServiceMetadataPublisherID>${esc(this.smpId)}</lrs:ServiceMetadataPublisherID>` +
      (nextPageIdentifier ? `<lrs:NextPageIdentifier>${esc(nextPageIdentifier)}</lrs:NextPageIdentifier>` : '') +
      `</lrs:PageRequest>`;
    const doc = await this.call('participants', 'List', SML_ACTIONS.list, body);
    const page = select(doc, '/S:Envelope/S:Body/lrs:ParticipantIdentifierPage', NS)[0];
    if (!page)
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'the SML answered List without a ParticipantIdentifierPage');
    const participants = select(page, 'ids:ParticipantIdentifier', NS).map((n) => {
      const e = n as Element;
      return parseParticipantId(`${e.getAttribute('scheme') ?? ''}::${(e.textContent ?? '').trim()}`);
    });
    const next = text(page, 'lrs:NextPageIdentifier', NS);
    return next ? { participants, nextPageIdentifier: next } : { participants };
  }

  /** Whether `participant` is registered to our SMP, paging through List (at most `maxPages`). */
  async isOurs(participant: ParticipantId, maxPages = 1000): Promise<boolean> {
    const wanted = formatId(participant).toLowerCase();
    let next: string | undefined;
    for (let i = 0; i < maxPages; i++) {
      const page = await this.listParticipants(next);
      if (page.participants.some((p) => formatId(p).toLowerCase() === wanted)) return true;
      if (!page.nextPageIdentifier || page.participants.length === 0) return false;
      next = page.nextPageIdentifier;
    }
    throw new GatewayError('DEPENDENCY_UNAVAILABLE', `the SML's participant list has more than ${maxPages} pages`);
  }

  /** Called by the current owner: the SML accepts `key` from the next SMP (given to it out of band). */
  async prepareToMigrate(participant: ParticipantId, key: string): Promise<void> {
    await this.call(
      'participants',
      'PrepareToMigrate',
      SML_ACTIONS.prepareToMigrate,
      this.migrationRecord('PrepareMigrationRecord', participant, key),
    );
  }

  /** Called by the new owner with the previous owner's key: the participant's SML entry moves to our SMP. */
  async migrate(participant: ParticipantId, key: string): Promise<void> {
    await this.call(
      'participants',
      'Migrate',
      SML_ACTIONS.migrate,
      this.migrationRecord('CompleteMigrationRecord', participant, key),
    );
  }

  // Our SMP ---------------------------------------------------------------------------------------------------------

  async createSmp(logicalAddress: string, physicalAddress: string): Promise<void> {
    await this.call(
      'smp',
      'Create SMP',
      SML_ACTIONS.createSmp,
      this.smpBody('CreateServiceMetadataPublisherService', logicalAddress, physicalAddress),
    );
  }

  async updateSmp(logicalAddress: string, physicalAddress: string): Promise<void> {
    await this.call(
      'smp',
      'Update SMP',
      SML_ACTIONS.updateSmp,
      this.smpBody('UpdateServiceMetadataPublisherService', logicalAddress, physicalAddress),
    );
  }

  /** Our SMP's record, or undefined when the SML does not know it (NotFound). */
  async readSmp(): Promise<SmpRecord | undefined> {
    // Read takes the same type as Create; the SML reads only the id.
    const body = this.smpBody('ReadServiceMetadataPublisherService', '', '');
    let doc: Document;
    try {
      doc = await this.call('smp', 'Read SMP', SML_ACTIONS.readSmp, body);
    } catch (e) {
      if (e instanceof SmlFaultError && e.fault === 'NotFound') return undefined;
      throw e;
    }
    const r = select(doc, '/S:Envelope/S:Body/lrs:ServiceMetadataPublisherService', NS)[0];
    if (!r)
      throw new GatewayError(
        'DEPENDENCY_UNAVAILABLE',
        'the SML answered Read without a ServiceMetadataPublisherService',
      );
    return {
      smpId: text(r, 'lrs:ServiceMetadataPublisherID', NS) ?? '',
      logicalAddress: text(r, 'lrs:PublisherEndpoint/lrs:LogicalAddress', NS) ?? '',
      physicalAddress: text(r, 'lrs:PublisherEndpoint/lrs:PhysicalAddress', NS) ?? '',
    };
  }

  async deleteSmp(): Promise<void> {
    await this.call(
      'smp',
      'Delete SMP',
      SML_ACTIONS.deleteSmp,
      `<lrs:ServiceMetadataPublisherID xmlns:lrs="${LOCATOR_NS}">${esc(this.smpId)}</lrs:ServiceMetadataPublisherID>`,
    );
  }

  /**
   * Announces our SMP's next client certificate: from `migrationDate` (a date, not in the past; the SML's default
   * when omitted) the SML accepts it instead of the current one.
   */
  async prepareChangeCertificate(newCertificate: X509Certificate, migrationDate?: string): Promise<void> {
    if (migrationDate !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(migrationDate))
      throw new GatewayError('BAD_REQUEST', `the certificate migration date "${migrationDate}" is not YYYY-MM-DD`);
    const body =
      `<bdmsl:PrepareChangeCertificate xmlns:bdmsl="${BDMSL_DATA_NS}">` +
      `<bdmsl:newCertificatePublicKey>${esc(newCertificate.toString())}</bdmsl:newCertificatePublicKey>` +
      (migrationDate ? `<bdmsl:migrationDate>${migrationDate}</bdmsl:migrationDate>` : '') +
      `</bdmsl:PrepareChangeCertificate>`;
    await this.call('bdmsl', 'PrepareChangeCertificate', SML_ACTIONS.prepareChangeCertificate, body);
  }

  // -------------------------------------------------------------------------------------------------------------------

  private forParticipant(element: 'Create' | 'Delete', p: ParticipantId): string {
    return (
      `${lrsOpen(`${element}ParticipantIdentifier`)}` +
      `<lrs:ServiceMetadataPublisherID>${esc(this.smpId)}</lrs:ServiceMetadataPublisherID>${participantXml(p)}` +
      `</lrs:${element}ParticipantIdentifier>`
    );
  }

  private migrationRecord(element: string, p: ParticipantId, key: string): string {
    if (!isValidMigrationKey(key))
      throw new GatewayError(
        'BAD_REQUEST',
        'a migration key is 8-24 characters with at least two upper-case and two lower-case letters, two digits and ' +
          'two of @#$%()[]{}*^_-!~|+=, no white space',
      );
    return (
      `${lrsOpen(element)}<lrs:ServiceMetadataPublisherID>${esc(this.smpId)}</lrs:ServiceMetadataPublisherID>` +
      `${participantXml(p)}<lrs:MigrationKey>${esc(key)}</lrs:MigrationKey></lrs:${element}>`
    );
  }

  private smpBody(element: string, logical: string, physical: string): string {
    return (
      `${lrsOpen(element)}<lrs:PublisherEndpoint><lrs:LogicalAddress>${esc(logical)}</lrs:LogicalAddress>` +
      `<lrs:PhysicalAddress>${esc(physical)}</lrs:PhysicalAddress></lrs:PublisherEndpoint>` +
      `<lrs:ServiceMetadataPublisherID>${esc(this.smpId)}</lrs:ServiceMetadataPublisherID></lrs:${element}>`
    );
  }

  private async call(
    service: keyof typeof SML_SERVICES,
    operation: string,
    action: string,
    body: string,
  ): Promise<Document> {
    const url = `${this.options.url.replace(/\/+$/, '')}/${SML_SERVICES[service]}`;
    let res: { status: number; body: string };
    try {
      res = await this.options.transport.post(url, action, soapEnvelope(body));
    } catch (e) {
      throw new GatewayError(
        'DEPENDENCY_UNAVAILABLE',
        `the SML at ${url} cannot be reached for ${operation}: ${(e as Error).message}`,
        { cause: e },
      );
    }
    let doc: Document | undefined;
    try {
      doc = res.body.trim() ? parseXml(res.body) : undefined;
    } catch {
      doc = undefined;
    }
    const fault = doc ? select(doc, '/S:Envelope/S:Body/S:Fault', NS)[0] : undefined;
    if (fault) throw faultOf(fault, operation);
    if (res.status !== 200 || !doc)
      throw new GatewayError(
        'DEPENDENCY_UNAVAILABLE',
        `the SML answered ${operation} with HTTP ${res.status}${doc ? '' : ' and no SOAP envelope'}`,
      );
    if (select(doc, '/S:Envelope/S:Body', NS).length !== 1)
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', `the SML's answer to ${operation} is not a SOAP 1.1 envelope`);
    return doc;
  }
}

function faultOf(fault: Node, operation: string): SmlFaultError {
  const detail = select(fault, 'detail/*', NS)[0] as Element | undefined;
  const local = detail?.localName ?? '';
  const kind = FAULT_KINDS.find((k) => local === `${k}Fault`) ?? 'InternalError';
  const message = (detail ? text(detail, 'lrs:FaultMessage', NS) : undefined) ?? text(fault, 'faultstring', NS) ?? '';
  return new SmlFaultError(kind, message, operation);
}

/** HTTPS with our SMP's key and certificate as the client certificate; `ca` replaces the system roots (tests). */
export function mtlsTransport(options: {
  clientKey: KeyMaterial;
  ca?: readonly X509Certificate[];
  timeoutMs: number;
  maxBytes?: number;
}): SoapTransport & { close(): Promise<void> } {
  const agent: Dispatcher = new Agent({
    connect: {
      key: options.clientKey.privateKey.export({ format: 'pem', type: 'pkcs8' }),
      cert: [options.clientKey.certificate, ...options.clientKey.chain].map((c) => c.toString()).join(''),
      ...(options.ca ? { ca: options.ca.map((c) => c.toString()) } : {}),
    },
  });
  const maxBytes = options.maxBytes ?? 4 * 1024 * 1024;
  return {
    async post(url, soapAction, envelope) {
      if (new URL(url).protocol !== 'https:') throw new Error(`the SML URL ${url} is not https (mutual TLS)`);
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${soapAction}"` },
        body: envelope,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > maxBytes) {
          res.body.destroy();
          throw new Error(`the SML's answer exceeds ${maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      return { status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') };
    },
    close: () => agent.close(),
  };
}
