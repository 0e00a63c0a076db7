/**
 * Peppol Business Message Envelope 2.0 (SBDH): build and parse a Standard Business Document.
 *
 * Parsing goes through the project's secure XML parser and reads elements by namespace and local name only. The
 * validation follows the Peppol rules as implemented by the reference reader (peppol-commons): exactly one sender and
 * receiver in `iso6523-actorid-upis`, mandatory DOCUMENTID / PROCESSID / COUNTRY_C1 scopes, optional MLS_TO / MLS_TYPE,
 * DocumentIdentification consistent with the payload. All problems are collected; the first one becomes the error
 * reason and all of them travel in `details.errors`.
 *
 * Building splices the payload text after the header instead of re-serialising a DOM, so the business document keeps
 * its exact characters (a signed payload stays verifiable).
 */
import { randomUUID } from 'node:crypto';
import { XMLSerializer, type Document, type Element, type Node } from '@xmldom/xmldom';
import { isGatewayError } from '../core/gateway-error';
import { childElements, escapeXmlKeepingCr as esc, isElement } from '../formats/xml/helpers';
import { decodeXml, parseXml, scanXmlInput, type XmlLimits } from '../formats/xml/secure-parser';
import type { ScanVisitor } from '../formats/xml/xml-scanner';
import { readXmlDeclaration } from '../formats/xml/xml-scanner';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PARTICIPANT_SCHEME,
  PROCESS_SCHEME,
  documentTypeIdProblem,
  documentTypeParts,
  formatId,
  isSpisId,
  participantId,
  participantIdProblem,
  processIdProblem,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from './identifiers';
import { PeppolError, type SbdhErrorCode } from './peppol-error';

export const SBDH_NS = 'http://www.unece.org/cefact/namespaces/StandardBusinessDocumentHeader';
/** Envelope 1.2 wrapper for non-XML payloads (`BinaryContent`, `TextContent`). */
export const SBDH_PAYLOAD_NS = 'http://peppol.eu/xsd/ticc/envelope/1.0';
export const SBDH_HEADER_VERSION = '1.0';

export const SCOPE_DOCUMENT_ID = 'DOCUMENTID';
export const SCOPE_PROCESS_ID = 'PROCESSID';
export const SCOPE_COUNTRY_C1 = 'COUNTRY_C1';
export const SCOPE_MLS_TO = 'MLS_TO';
export const SCOPE_MLS_TYPE = 'MLS_TYPE';

export type MlsType = 'ALWAYS_SEND' | 'FAILURE_ONLY';
/** Per the Peppol Network Policy: no MLS_TYPE scope means failures only. */
export const DEFAULT_MLS_TYPE: MlsType = 'FAILURE_ONLY';

const COUNTRY_C1_RE = /^[A-Z0-9][A-Z0-9]$/;
const XSD_DATE_TIME_RE = /^(-?\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))?$/;

export interface SbdhAdditionalAttribute {
  name: string;
  /** Null when the scope carries no (or an empty) InstanceIdentifier. */
  value: string | null;
}

export interface SbdhHeader {
  sender: ParticipantId;
  receiver: ParticipantId;
  documentType: DocumentTypeId;
  process: ProcessId;
  /** Always set unless parsing ran with `requireCountryC1: false` and the scope is absent. */
  countryC1: string | undefined;
  standard: string;
  typeVersion: string;
  type: string;
  instanceIdentifier: string;
  /** As written in the document. */
  creationDateAndTime: string;
  /** The same instant; a value without time zone is read as UTC. */
  creationTime: Date;
  mlsTo: ParticipantId | undefined;
  /** The effective MLS type (FAILURE_ONLY when the scope is absent); `mlsTypeExplicit` says whether it was present. */
  mlsType: MlsType;
  mlsTypeExplicit: boolean;
  additionalAttributes: SbdhAdditionalAttribute[];
  /** Non-fatal findings, e.g. an MLS_TO that is not a service provider id. */
  warnings: string[];
}

export type SbdPayload =
  | { kind: 'xml'; element: Element }
  | { kind: 'binary'; mimeType: string; data: Buffer }
  | { kind: 'text'; mimeType: string; text: string };

export interface ParsedSbd {
  header: SbdhHeader;
  payload: SbdPayload;
  /** The parsed document, for callers that need more than the header. */
  document: Document;
}

export interface SbdhProblem {
  code: SbdhErrorCode;
  field: string;
  message: string;
}

export interface ParseSbdOptions {
  /** COUNTRY_C1 has been mandatory since 2024-01-01; only switch this off to read old archives. Default true. */
  requireCountryC1?: boolean;
  limits?: Partial<XmlLimits>;
}

// ---------------------------------------------------------------------------------------------------------------------
// Validation shared by parse and build

interface RawPartner {
  authority: string | undefined;
  value: string | undefined;
}
interface RawScope {
  type: string | undefined;
  instanceIdentifier: string | undefined;
  identifier: string | undefined;
}
interface RawHeader {
  headerVersion: string | undefined;
  senders: RawPartner[];
  receivers: RawPartner[];
  documentIdentification:
    | {
        standard?: string;
        typeVersion?: string;
        instanceIdentifier?: string;
        type?: string;
        creationDateAndTime?: string;
      }
    | undefined;
  /** Undefined when there is no BusinessScope element. */
  scopes: RawScope[] | undefined;
}
type PayloadShape =
  | { kind: 'xml' | 'binary' | 'text'; namespaceURI: string | null; localName: string }
  | { kind: 'missing'; why: string }
  | { kind: 'invalid'; why: string };

/** Parses an xsd:dateTime; undefined when the text is not one. */
export function parseXsdDateTime(s: string): Date | undefined {
  const m = XSD_DATE_TIME_RE.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 24 || minute > 59 || second > 59) return undefined;
  if (hour === 24 && (minute !== 0 || second !== 0 || (m[7] && Number(m[7]) !== 0))) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  if (m[9] !== undefined && (Number(m[9]) > 14 || Number(m[10]) > 59)) return undefined;
  const iso = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[7] ? m[7].slice(0, 4) : ''}${m[8] ?? 'Z'}`;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/**
 * `building` adds one check the reference reader does not make on receipt: the payload root must be the element the
 * document type names (`<namespace>::<local name>##…`), so we never send an Invoice labelled as a CreditNote.
 */
function check(
  raw: RawHeader,
  payload: PayloadShape,
  requireCountryC1: boolean,
  building = false,
): { problems: SbdhProblem[]; header?: SbdhHeader } {
  const problems: SbdhProblem[] = [];
  const warnings: string[] = [];
  const add = (code: SbdhErrorCode, field: string, message: string): void => {
    problems.push({ code, field, message });
  };

  if (raw.headerVersion !== SBDH_HEADER_VERSION) {
    add(
      'invalid-header-version',
      'HeaderVersion',
      `HeaderVersion is "${raw.headerVersion ?? ''}", expected "${SBDH_HEADER_VERSION}"`,
    );
  }

  const partner = (list: RawPartner[], role: 'Sender' | 'Receiver'): ParticipantId | undefined => {
    const lower = role.toLowerCase() as 'sender' | 'receiver';
    if (list.length !== 1) {
      add(`invalid-${lower}-count`, role, `expected exactly one ${role}, found ${list.length}`);
      if (list.length === 0) return undefined;
    }
    const first = list[0] as RawPartner;
    let ok = true;
    if (first.authority !== PARTICIPANT_SCHEME) {
      add(
        `invalid-${lower}-authority`,
        `${role}/Identifier/@Authority`,
        `${role} Identifier Authority is "${first.authority ?? ''}", expected "${PARTICIPANT_SCHEME}"`,
      );
      ok = false;
    }
    const value = first.value ?? '';
    if (value === '') {
      add(`invalid-${lower}-value`, `${role}/Identifier`, `${role} Identifier is empty`);
      return undefined;
    }
    const problem = participantIdProblem(PARTICIPANT_SCHEME, value);
    if (problem) {
      add(
        `invalid-${lower}-value`,
        `${role}/Identifier`,
        `${role} Identifier "${value}" is not a valid participant identifier: ${problem}`,
      );
      return undefined;
    }
    return ok ? participantId(PARTICIPANT_SCHEME, value) : undefined;
  };
  const sender = partner(raw.senders, 'Sender');
  const receiver = partner(raw.receivers, 'Receiver');

  let documentType: DocumentTypeId | undefined;
  let process: ProcessId | undefined;
  let countryC1: string | undefined;
  let mlsTo: ParticipantId | undefined;
  let mlsType: MlsType | undefined;
  const additionalAttributes: SbdhAdditionalAttribute[] = [];

  if (!raw.scopes) {
    add('business-scope-missing', 'BusinessScope', 'BusinessScope is missing');
  } else {
    const minimum = requireCountryC1 ? 3 : 2;
    if (raw.scopes.length < minimum) {
      add(
        'invalid-scope-count',
        'BusinessScope',
        `BusinessScope has ${raw.scopes.length} Scope elements, at least ${minimum} are required`,
      );
    }
    const seen = new Map<string, number>();
    raw.scopes.forEach((scope, i) => {
      const field = `BusinessScope/Scope[${i + 1}]`;
      const type = scope.type ?? '';
      if (type === '') {
        add('invalid-scope', field, `Scope #${i + 1} has no Type`);
        return;
      }
      const count = (seen.get(type) ?? 0) + 1;
      seen.set(type, count);
      const known = [SCOPE_DOCUMENT_ID, SCOPE_PROCESS_ID, SCOPE_COUNTRY_C1, SCOPE_MLS_TO, SCOPE_MLS_TYPE].includes(
        type,
      );
      if (known && count === 2) add('duplicate-scope', field, `BusinessScope has more than one ${type} scope`);
      if (known && count > 1) return;
      const instance = scope.instanceIdentifier ?? '';
      switch (type) {
        case SCOPE_DOCUMENT_ID: {
          // The scheme was added in Envelope 1.1; without it busdox-docid-qns is meant.
          const scheme = scope.identifier ?? DOCTYPE_SCHEME_BUSDOX;
          const problem = instance === '' ? 'the InstanceIdentifier is empty' : documentTypeIdProblem(scheme, instance);
          if (problem)
            add('invalid-document-type-identifier', `${field}/InstanceIdentifier`, `DOCUMENTID scope: ${problem}`);
          else documentType = Object.freeze({ scheme, value: instance });
          break;
        }
        case SCOPE_PROCESS_ID: {
          const scheme = scope.identifier ?? PROCESS_SCHEME;
          const problem = instance === '' ? 'the InstanceIdentifier is empty' : processIdProblem(scheme, instance);
          if (problem) add('invalid-process-identifier', `${field}/InstanceIdentifier`, `PROCESSID scope: ${problem}`);
          else process = Object.freeze({ scheme, value: instance });
          break;
        }
        case SCOPE_COUNTRY_C1:
          if (!COUNTRY_C1_RE.test(instance)) {
            add(
              'invalid-country-c1',
              `${field}/InstanceIdentifier`,
              `COUNTRY_C1 "${instance}" is not a two-character upper-case country code`,
            );
          } else countryC1 = instance;
          break;
        case SCOPE_MLS_TO: {
          if (scope.instanceIdentifier === undefined || instance === '') {
            add('invalid-mls-to', `${field}/InstanceIdentifier`, 'MLS_TO scope has no InstanceIdentifier value');
            break;
          }
          if (scope.identifier !== PARTICIPANT_SCHEME) {
            add(
              'invalid-mls-to',
              `${field}/Identifier`,
              `MLS_TO scope Identifier is "${scope.identifier ?? ''}", expected "${PARTICIPANT_SCHEME}"`,
            );
            break;
          }
          const problem = participantIdProblem(PARTICIPANT_SCHEME, instance);
          if (problem) {
            add(
              'invalid-mls-to',
              `${field}/InstanceIdentifier`,
              `MLS_TO "${instance}" is not a valid participant identifier: ${problem}`,
            );
            break;
          }
          mlsTo = participantId(PARTICIPANT_SCHEME, instance);
          if (!isSpisId(mlsTo)) {
            warnings.push(
              `MLS_TO ${formatId(mlsTo)} is not a Peppol service provider id (0242:nnnnnn); MLS goes to the ` +
                `sender's default SPID`,
            );
          }
          break;
        }
        case SCOPE_MLS_TYPE:
          if (instance !== 'ALWAYS_SEND' && instance !== 'FAILURE_ONLY') {
            add(
              'invalid-mls-type',
              `${field}/InstanceIdentifier`,
              `MLS_TYPE "${instance}" is neither ALWAYS_SEND nor FAILURE_ONLY (case-sensitive)`,
            );
          } else mlsType = instance;
          break;
        default:
          additionalAttributes.push({ name: type, value: instance === '' ? null : instance });
      }
    });
    if (!seen.has(SCOPE_DOCUMENT_ID))
      add('missing-document-type-identifier', 'BusinessScope', 'BusinessScope has no DOCUMENTID scope');
    if (!seen.has(SCOPE_PROCESS_ID))
      add('missing-process-identifier', 'BusinessScope', 'BusinessScope has no PROCESSID scope');
    if (requireCountryC1 && !seen.has(SCOPE_COUNTRY_C1)) {
      add('missing-country-c1', 'BusinessScope', 'BusinessScope has no COUNTRY_C1 scope (mandatory since 2024-01-01)');
    }
  }

  if (payload.kind === 'missing') add('missing-business-message', 'StandardBusinessDocument', payload.why);
  if (payload.kind === 'invalid') add('invalid-business-message', 'StandardBusinessDocument', payload.why);

  const di = raw.documentIdentification;
  let creationTime: Date | undefined;
  if (!di) {
    add('missing-document-identification', 'DocumentIdentification', 'DocumentIdentification is missing');
  } else {
    const standard = di.standard ?? '';
    const typeVersion = di.typeVersion ?? '';
    const type = di.type ?? '';
    if (payload.kind === 'xml') {
      if (documentType) {
        if (standard === '' || standard !== (payload.namespaceURI ?? '') || !documentType.value.startsWith(standard)) {
          add(
            'invalid-standard',
            'DocumentIdentification/Standard',
            `Standard "${standard}" must equal the payload namespace "${payload.namespaceURI ?? ''}" and start the ` +
              `document type "${documentType.value}"`,
          );
        }
        if (typeVersion === '' || typeVersion.includes(':') || !documentType.value.endsWith(`:${typeVersion}`)) {
          add(
            'invalid-type-version',
            'DocumentIdentification/TypeVersion',
            `TypeVersion "${typeVersion}" must be the version at the end of the document type "${documentType.value}"`,
          );
        }
      }
      if (type !== payload.localName) {
        add(
          'invalid-type',
          'DocumentIdentification/Type',
          `Type "${type}" must equal the payload element name "${payload.localName}"`,
        );
      } else if (building && documentType) {
        const named = documentTypeParts(documentType.value)?.localName;
        if (named !== undefined && named !== payload.localName) {
          add(
            'invalid-type',
            'DocumentIdentification/Type',
            `the payload element is "${payload.localName}" but the document type names "${named}"`,
          );
        }
      }
    } else if (payload.kind === 'binary' || payload.kind === 'text') {
      // Non-XML payloads have no root element to compare with; the Standard names the syntax (e.g.
      // urn:peppol:doctype:pdf+xml).
      if (documentType && (standard === '' || !documentType.value.startsWith(standard))) {
        add(
          'invalid-standard',
          'DocumentIdentification/Standard',
          `Standard "${standard}" must start the document type "${documentType.value}"`,
        );
      }
      if (typeVersion === '') add('invalid-type-version', 'DocumentIdentification/TypeVersion', 'TypeVersion is empty');
      if (type === '') add('invalid-type', 'DocumentIdentification/Type', 'Type is empty');
    }
    if ((di.instanceIdentifier ?? '') === '') {
      add('invalid-instance-identifier', 'DocumentIdentification/InstanceIdentifier', 'InstanceIdentifier is empty');
    }
    creationTime = parseXsdDateTime(di.creationDateAndTime ?? '');
    if (!creationTime) {
      add(
        'invalid-creation-date-time',
        'DocumentIdentification/CreationDateAndTime',
        `CreationDateAndTime "${di.creationDateAndTime ?? ''}" is not an xsd:dateTime`,
      );
    }
  }

  if (problems.length > 0 || !sender || !receiver || !documentType || !process || !di || !creationTime)
    return { problems };
  return {
    problems,
    header: {
      sender,
      receiver,
      documentType,
      process,
      countryC1,
      standard: di.standard as string,
      typeVersion: di.typeVersion as string,
      type: di.type as string,
      instanceIdentifier: di.instanceIdentifier as string,
      creationDateAndTime: di.creationDateAndTime as string,
      creationTime,
      mlsTo,
      mlsType: mlsType ?? DEFAULT_MLS_TYPE,
      mlsTypeExplicit: mlsType !== undefined,
      additionalAttributes,
      warnings,
    },
  };
}

function fail(problems: SbdhProblem[]): never {
  const first = problems[0] as SbdhProblem;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
  throw new PeppolError('UNPROCESSABLE', `sbdh:${first.code}`, `Invalid SBDH: ${first.message}${more}`, {
    details: { errors: problems },
  });
}

// ---------------------------------------------------------------------------------------------------------------------
// Parsing

function children(parent: Node, localName: string, ns = SBDH_NS): Element[] {
  return childElements(parent).filter((e) => e.namespaceURI === ns && e.localName === localName);
}

/** Trimmed text of the first child with that name, or undefined when there is no such child. */
function childText(parent: Node, localName: string): string | undefined {
  const e = children(parent, localName)[0];
  return e ? (e.textContent ?? '').trim() : undefined;
}

function readHeader(sbdh: Element): RawHeader {
  const partners = (role: string): RawPartner[] =>
    children(sbdh, role).map((p) => {
      const id = children(p, 'Identifier')[0];
      return {
        authority: id?.hasAttribute('Authority') ? (id.getAttribute('Authority') ?? undefined) : undefined,
        value: id ? (id.textContent ?? '').trim() : undefined,
      };
    });
  const diEl = children(sbdh, 'DocumentIdentification')[0];
  const scopeEl = children(sbdh, 'BusinessScope')[0];
  return {
    headerVersion: childText(sbdh, 'HeaderVersion'),
    senders: partners('Sender'),
    receivers: partners('Receiver'),
    documentIdentification: diEl
      ? {
          standard: childText(diEl, 'Standard'),
          typeVersion: childText(diEl, 'TypeVersion'),
          instanceIdentifier: childText(diEl, 'InstanceIdentifier'),
          type: childText(diEl, 'Type'),
          creationDateAndTime: childText(diEl, 'CreationDateAndTime'),
        }
      : undefined,
    scopes: scopeEl
      ? children(scopeEl, 'Scope').map((s) => ({
          type: childText(s, 'Type'),
          instanceIdentifier: childText(s, 'InstanceIdentifier'),
          identifier: childText(s, 'Identifier'),
        }))
      : undefined,
  };
}

function payloadShape(root: Element, header: Element): { shape: PayloadShape; element?: Element } {
  const after: Element[] = [];
  let text = '';
  let pastHeader = false;
  for (let c = root.firstChild; c; c = c.nextSibling) {
    if (c === header) {
      pastHeader = true;
      continue;
    }
    if (isElement(c)) {
      if (pastHeader) after.push(c);
    } else if (c.nodeType === 3 || c.nodeType === 4) {
      text += c.nodeValue ?? '';
    }
  }
  if (after.length === 0) {
    return {
      shape: {
        kind: 'missing',
        why:
          text.trim() !== ''
            ? 'the business message is text, not an element'
            : 'there is no business message after the StandardBusinessDocumentHeader',
      },
    };
  }
  if (after.length > 1) {
    return {
      shape: { kind: 'invalid', why: `expected one business message element after the header, found ${after.length}` },
    };
  }
  if (text.trim() !== '')
    return {
      shape: { kind: 'invalid', why: 'the StandardBusinessDocument contains text beside the business message' },
    };
  const element = after[0] as Element;
  if (
    element.namespaceURI === SBDH_PAYLOAD_NS &&
    (element.localName === 'BinaryContent' || element.localName === 'TextContent')
  ) {
    return {
      shape: {
        kind: element.localName === 'BinaryContent' ? 'binary' : 'text',
        namespaceURI: SBDH_PAYLOAD_NS,
        localName: element.localName ?? '',
      },
      element,
    };
  }
  return { shape: { kind: 'xml', namespaceURI: element.namespaceURI, localName: element.localName ?? '' }, element };
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

function readWrappedPayload(element: Element): SbdPayload {
  const mimeType = (element.getAttribute('mimeType') ?? '').trim();
  if (mimeType === '')
    fail([
      {
        code: 'invalid-business-message',
        field: element.localName ?? '',
        message: `${element.localName} has no mimeType attribute`,
      },
    ]);
  const content = element.textContent ?? '';
  if (element.localName === 'TextContent') return { kind: 'text', mimeType, text: content };
  const encoding = element.getAttribute('encoding');
  if (encoding && encoding !== 'Base64') {
    fail([
      {
        code: 'invalid-business-message',
        field: 'BinaryContent/@encoding',
        message: `BinaryContent encoding "${encoding}" is not supported (only Base64)`,
      },
    ]);
  }
  const compact = content.replace(/[\s]+/g, '');
  if (compact.length % 4 !== 0 || !BASE64_RE.test(compact)) {
    fail([{ code: 'invalid-business-message', field: 'BinaryContent', message: 'BinaryContent is not valid Base64' }]);
  }
  return { kind: 'binary', mimeType, data: Buffer.from(compact, 'base64') };
}

/**
 * Parses and validates a Standard Business Document. Throws PeppolError with reason `sbdh:<code>` (see SbdhErrorCode);
 * bytes that are not (safe) XML give `sbdh:invalid-sbd-xml` with the parser's error as cause.
 */
export function parseSbd(input: Buffer | Uint8Array | string | Document, options: ParseSbdOptions = {}): ParsedSbd {
  let doc: Document;
  if (typeof input === 'object' && 'documentElement' in input) doc = input;
  else {
    try {
      doc = parseXml(input, options.limits);
    } catch (e) {
      unreadable(e);
    }
  }
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== SBDH_NS || root.localName !== 'StandardBusinessDocument') {
    fail([
      {
        code: 'invalid-sbd-xml',
        field: '',
        message:
          `the root element is {${root?.namespaceURI ?? ''}}${root?.localName ?? ''}, expected ` +
          `{${SBDH_NS}}StandardBusinessDocument`,
      },
    ]);
  }
  const header = children(root, 'StandardBusinessDocumentHeader')[0];
  if (!header)
    fail([
      {
        code: 'missing-sbdh',
        field: 'StandardBusinessDocumentHeader',
        message: 'the StandardBusinessDocumentHeader is missing',
      },
    ]);
  if (childElements(root)[0] !== header) {
    fail([
      {
        code: 'invalid-sbd-xml',
        field: '',
        message: 'the StandardBusinessDocumentHeader must be the first element of the StandardBusinessDocument',
      },
    ]);
  }

  const { shape, element } = payloadShape(root, header);
  const { problems, header: parsed } = check(readHeader(header), shape, options.requireCountryC1 ?? true);
  if (problems.length > 0 || !parsed || !element) fail(problems);
  const payload: SbdPayload = shape.kind === 'xml' ? { kind: 'xml', element } : readWrappedPayload(element);
  return { header: parsed, payload, document: doc };
}

function unreadable(e: unknown): never {
  if (isGatewayError(e) && (e.code === 'INVALID_XML' || e.code === 'UNSAFE_XML' || e.code === 'PAYLOAD_TOO_LARGE')) {
    throw new PeppolError(
      e.code === 'PAYLOAD_TOO_LARGE' ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST',
      'sbdh:invalid-sbd-xml',
      `Invalid SBDH: the document is not readable XML: ${e.message}`,
      {
        cause: e,
        details: { errors: [{ code: 'invalid-sbd-xml', field: '', message: e.message }] },
      },
    );
  }
  throw e;
}

/**
 * The header of a Standard Business Document with the same checks as parseSbd, without a DOM of the business
 * message: one lexical scan of the whole document (well-formedness, DOCTYPE refusal, limits, namespaces) notes the
 * elements under the root, then only the root's start and the header are parsed. A receiving access point needs the
 * header to route and de-duplicate; the receive workflow parses the business message anyway. For a 5 MB invoice this
 * is the difference between a lexical pass and a full DOM. Wrapped payloads (BinaryContent, TextContent) and anything
 * unusual take the full parse, whose errors are the precise ones.
 */
/** The business document inside an SBD, as bytes (an XML payload serialized on its own; binary or text as carried). */
export function businessDocumentOf(sbd: Buffer | Uint8Array | string, options: ParseSbdOptions = {}): Buffer {
  const { payload } = parseSbd(sbd, options);
  if (payload.kind === 'xml') return Buffer.from(new XMLSerializer().serializeToString(payload.element), 'utf8');
  if (payload.kind === 'binary') return payload.data;
  return Buffer.from(payload.text, 'utf8');
}

export function readSbdHeader(input: Buffer | Uint8Array, options: ParseSbdOptions = {}): { header: SbdhHeader } {
  const under: Array<{ namespaceURI: string; localName: string }> = [];
  let depth = 0;
  let rootName = '';
  let headerClose = -1;
  let text = '';
  const visitor: ScanVisitor = {
    startElement(name, _attributes, _offset, namespaceURI, localName) {
      if (depth === 0) rootName = name;
      else if (depth === 1) under.push({ namespaceURI, localName });
      depth += 1;
    },
    endElement(_name, offset) {
      depth -= 1;
      if (depth === 1 && under.length === 1) headerClose = offset;
    },
    get wantsText() {
      return depth === 1;
    },
    text(value) {
      if (text.length < 64) text += value.trim();
    },
  };
  let decoded: string;
  try {
    decoded = scanXmlInput(input, options.limits, visitor).text;
  } catch (e) {
    unreadable(e);
  }
  const first = under[0];
  const business = under[1];
  const wrapped =
    business?.namespaceURI === SBDH_PAYLOAD_NS &&
    (business.localName === 'BinaryContent' || business.localName === 'TextContent');
  const end = headerClose < 0 ? -1 : decoded.indexOf('>', headerClose);
  if (
    wrapped ||
    !first ||
    first.namespaceURI !== SBDH_NS ||
    first.localName !== 'StandardBusinessDocumentHeader' ||
    end < 0
  )
    return parseSbd(input, options);
  let doc: Document;
  try {
    doc = parseXml(`${decoded.slice(0, end + 1)}</${rootName}>`, options.limits);
  } catch {
    return parseSbd(input, options);
  }
  const root = doc.documentElement;
  const header = root ? children(root, 'StandardBusinessDocumentHeader')[0] : undefined;
  if (!root || root.namespaceURI !== SBDH_NS || root.localName !== 'StandardBusinessDocument' || !header)
    return parseSbd(input, options);
  let shape: PayloadShape;
  if (!business)
    shape = {
      kind: 'missing',
      why:
        text !== ''
          ? 'the business message is text, not an element'
          : 'there is no business message after the StandardBusinessDocumentHeader',
    };
  else if (under.length > 2)
    shape = {
      kind: 'invalid',
      why: `expected one business message element after the header, found ${under.length - 1}`,
    };
  else if (text !== '')
    shape = { kind: 'invalid', why: 'the StandardBusinessDocument contains text beside the business message' };
  else shape = { kind: 'xml', namespaceURI: business.namespaceURI, localName: business.localName };
  const { problems, header: parsed } = check(readHeader(header), shape, options.requireCountryC1 ?? true);
  if (problems.length > 0 || !parsed) fail(problems);
  return { header: parsed };
}

// ---------------------------------------------------------------------------------------------------------------------
// Building

export type SbdBuildPayload =
  | {
      xml: Buffer | Uint8Array | string;
      /** The payload's root element, when the caller already parsed this XML: it is then not parsed again. */
      root?: { namespaceURI: string; localName: string };
    }
  /** Non-XML payloads: the Standard / Type / TypeVersion cannot be derived and must be given (e.g. for Factur-X). */
  | { binary: Buffer | Uint8Array; mimeType: string; standard: string; type: string; typeVersion: string }
  | { text: string; mimeType: string; standard: string; type: string; typeVersion: string };

export interface SbdBuildInput {
  sender: ParticipantId;
  receiver: ParticipantId;
  documentType: DocumentTypeId;
  process: ProcessId;
  countryC1: string;
  /** Default: a random UUID. */
  instanceIdentifier?: string;
  /** Default: now. A string is written as given (must be an xsd:dateTime). */
  creationDateAndTime?: Date | string;
  mlsTo?: ParticipantId;
  mlsType?: MlsType;
  additionalAttributes?: ReadonlyArray<SbdhAdditionalAttribute>;
  payload: SbdBuildPayload;
  limits?: Partial<XmlLimits>;
}

export interface BuiltSbd {
  xml: Buffer;
  header: SbdhHeader;
}

/** The payload text without XML declaration, and its root element's name. */
function preparePayloadXml(
  xml: Buffer | Uint8Array | string,
  limits?: Partial<XmlLimits>,
  knownRoot?: { namespaceURI: string; localName: string },
): { text: string; root: { namespaceURI: string | null; localName: string | null } } {
  const root = knownRoot ?? (parseXml(xml, limits).documentElement as Element);
  const { text } = decodeXml(xml, Number.MAX_SAFE_INTEGER);
  const decl = readXmlDeclaration(text);
  return { text: (decl ? text.slice(decl.length) : text).replace(/^\s+/, ''), root };
}

/** Builds a Standard Business Document; throws the same PeppolError reasons as parsing for inconsistent input. */
export function buildSbd(input: SbdBuildInput): BuiltSbd {
  const created = input.creationDateAndTime ?? new Date();
  const createdText = typeof created === 'string' ? created : created.toISOString();
  const instanceIdentifier = input.instanceIdentifier ?? randomUUID();

  let payloadXml: string;
  let shape: PayloadShape;
  let standard: string;
  let type: string;
  let typeVersion: string;
  if ('xml' in input.payload) {
    const { text, root } = preparePayloadXml(input.payload.xml, input.limits, input.payload.root);
    payloadXml = text;
    shape = { kind: 'xml', namespaceURI: root.namespaceURI, localName: root.localName ?? '' };
    const parts = documentTypeParts(input.documentType.value);
    standard = root.namespaceURI ?? '';
    type = root.localName ?? '';
    typeVersion = parts?.version ?? '';
  } else {
    const p = input.payload;
    standard = p.standard;
    type = p.type;
    typeVersion = p.typeVersion;
    if ('binary' in p) {
      payloadXml =
        `<BinaryContent xmlns="${SBDH_PAYLOAD_NS}" mimeType="${esc(p.mimeType)}" ` +
        `encoding="Base64">${Buffer.from(p.binary).toString('base64')}</BinaryContent>`;
      shape = { kind: 'binary', namespaceURI: SBDH_PAYLOAD_NS, localName: 'BinaryContent' };
    } else {
      payloadXml = `<TextContent xmlns="${SBDH_PAYLOAD_NS}" mimeType="${esc(p.mimeType)}">${esc(p.text)}</TextContent>`;
      shape = { kind: 'text', namespaceURI: SBDH_PAYLOAD_NS, localName: 'TextContent' };
    }
  }

  const scopes: RawScope[] = [
    { type: SCOPE_DOCUMENT_ID, instanceIdentifier: input.documentType.value, identifier: input.documentType.scheme },
    { type: SCOPE_PROCESS_ID, instanceIdentifier: input.process.value, identifier: input.process.scheme },
    { type: SCOPE_COUNTRY_C1, instanceIdentifier: input.countryC1, identifier: undefined },
  ];
  if (input.mlsTo)
    scopes.push({ type: SCOPE_MLS_TO, instanceIdentifier: input.mlsTo.value, identifier: input.mlsTo.scheme });
  if (input.mlsType) scopes.push({ type: SCOPE_MLS_TYPE, instanceIdentifier: input.mlsType, identifier: undefined });
  for (const a of input.additionalAttributes ?? [])
    scopes.push({ type: a.name, instanceIdentifier: a.value ?? '', identifier: undefined });

  const raw: RawHeader = {
    headerVersion: SBDH_HEADER_VERSION,
    senders: [{ authority: input.sender.scheme, value: input.sender.value }],
    receivers: [{ authority: input.receiver.scheme, value: input.receiver.value }],
    documentIdentification: { standard, typeVersion, instanceIdentifier, type, creationDateAndTime: createdText },
    scopes,
  };
  const { problems, header } = check(raw, shape, true, true);
  if (problems.length > 0 || !header) fail(problems);

  const scopeXml = scopes
    .map(
      (s) =>
        `<sh:Scope><sh:Type>${esc(s.type ?? '')}</sh:Type><sh:InstanceIdentifier>${esc(s.instanceIdentifier ?? '')}` +
        `</sh:InstanceIdentifier>` +
        `${s.identifier !== undefined ? `<sh:Identifier>${esc(s.identifier)}</sh:Identifier>` : ''}</sh:Scope>`,
    )
    .join('');
  const xml =
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<sh:StandardBusinessDocument xmlns:sh="${SBDH_NS}">` +
    `<sh:StandardBusinessDocumentHeader>` +
    `<sh:HeaderVersion>${SBDH_HEADER_VERSION}</sh:HeaderVersion>` +
    `<sh:Sender><sh:Identifier Authority="${esc(input.sender.scheme)}">${esc(input.sender.value)}</sh:Identifier>` +
    `</sh:Sender>` +
    `<sh:Receiver><sh:Identifier Authority="${esc(input.receiver.scheme)}">${esc(input.receiver.value)}` +
    `</sh:Identifier></sh:Receiver>` +
    `<sh:DocumentIdentification>` +
    `<sh:Standard>${esc(standard)}</sh:Standard>` +
    `<sh:TypeVersion>${esc(typeVersion)}</sh:TypeVersion>` +
    `<sh:InstanceIdentifier>${esc(instanceIdentifier)}</sh:InstanceIdentifier>` +
    `<sh:Type>${esc(type)}</sh:Type>` +
    `<sh:CreationDateAndTime>${esc(createdText)}</sh:CreationDateAndTime>` +
    `</sh:DocumentIdentification>` +
    `<sh:BusinessScope>${scopeXml}</sh:BusinessScope>` +
    `</sh:StandardBusinessDocumentHeader>\n` +
    payloadXml +
    `\n</sh:StandardBusinessDocument>\n`;
  return { xml: Buffer.from(xml, 'utf8'), header };
}
