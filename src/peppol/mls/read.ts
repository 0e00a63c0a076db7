/**
 * Reads a Peppol MLS: the secure parser, then every rule of rules.ts. Elements are found by namespace and local name
 * (the prefixes a document uses are never relied upon); a document with any broken rule gives its problems, never a
 * half-read MLS.
 */
import type { Element, Node } from '@xmldom/xmldom';
import { isGatewayError } from '../../core/gateway-error';
import { NS } from '../../formats/xml/namespaces';
import { parseXml, select, type XmlLimits } from '../../formats/xml/secure-parser';
import { PARTICIPANT_SCHEME, participantId, participantIdProblem } from '../identifiers';
import { parseXsdDateTime } from '../sbdh';
import { checkMls, normalizeSpace, type RawDocumentResponse, type RawLine, type RawMls, type RawParty } from './rules';
import {
  SPIS_SCHEME_ID,
  type Mls,
  type MlsLine,
  type MlsProblem,
  type MlsReadResult,
  type MlsResponseCode,
  type MlsStatusReasonCode,
} from './types';

const UBL = { ar: NS.ublApplicationResponse, cac: NS.cac, cbc: NS.cbc } as const;
/** The first bracketed token of an issue description that looks like a rule id (`[BR-CO-10]`, `[CL-T77-R002]`). */
const RULE_ID_RE = /\[([A-Za-z0-9][A-Za-z0-9_.:-]*)\]/;

function elements(context: Node, path: string): Element[] {
  return select(context, path, UBL) as Element[];
}

function texts(context: Node, path: string): string[] {
  return elements(context, path).map((e) => e.textContent ?? '');
}

function readParty(party: Element): RawParty {
  return {
    endpointIds: elements(party, 'cbc:EndpointID').map((e) => ({
      value: e.textContent ?? '',
      schemeId: e.hasAttribute('schemeID') ? (e.getAttribute('schemeID') ?? '') : undefined,
    })),
  };
}

function readLine(line: Element): RawLine {
  return {
    lineReferences: elements(line, 'cac:LineReference').map((r) => ({ lineIds: texts(r, 'cbc:LineID') })),
    responses: elements(line, 'cac:Response').map((r) => ({
      descriptions: texts(r, 'cbc:Description'),
      statuses: elements(r, 'cac:Status').map((s) => ({ reasonCodes: texts(s, 'cbc:StatusReasonCode') })),
    })),
  };
}

function readDocumentResponse(dr: Element): RawDocumentResponse {
  return {
    responses: elements(dr, 'cac:Response').map((r) => ({
      responseCodes: texts(r, 'cbc:ResponseCode'),
      descriptions: texts(r, 'cbc:Description'),
    })),
    references: elements(dr, 'cac:DocumentReference').map((r) => ({ ids: texts(r, 'cbc:ID') })),
    lines: elements(dr, 'cac:LineResponse').map(readLine),
  };
}

/** The raw content of an ApplicationResponse element, as rules.ts checks it. */
export function readRawMls(root: Element): RawMls {
  return {
    customizationId: texts(root, 'cbc:CustomizationID'),
    profileId: texts(root, 'cbc:ProfileID'),
    id: texts(root, 'cbc:ID'),
    issueDate: texts(root, 'cbc:IssueDate'),
    issueTime: texts(root, 'cbc:IssueTime'),
    senderParty: elements(root, 'cac:SenderParty').map(readParty),
    receiverParty: elements(root, 'cac:ReceiverParty').map(readParty),
    documentResponses: elements(root, 'cac:DocumentResponse').map(readDocumentResponse),
  };
}

/** The rule id named in an issue description, if any. */
export function ruleIdOf(description: string): string | undefined {
  return RULE_ID_RE.exec(description)?.[1];
}

/**
 * The typed MLS of raw content that passed every rule, or the problems of the few things the rules leave open (a
 * service provider id that is no participant identifier).
 */
export function typedMls(raw: RawMls): MlsReadResult {
  const problems: MlsProblem[] = [];
  const spid = (party: RawParty | undefined, path: string): ReturnType<typeof participantId> | undefined => {
    const value = `${SPIS_SCHEME_ID}:${normalizeSpace(party?.endpointIds[0]?.value)}`;
    const problem = participantIdProblem(PARTICIPANT_SCHEME, value);
    if (problem === undefined) return participantId(PARTICIPANT_SCHEME, value);
    problems.push({ rule: 'MLS-SPIS', path, message: `${value} is not a participant identifier: ${problem}` });
    return undefined;
  };
  const sender = spid(raw.senderParty[0], '/ApplicationResponse/cac:SenderParty/cbc:EndpointID');
  const receiver = spid(raw.receiverParty[0], '/ApplicationResponse/cac:ReceiverParty/cbc:EndpointID');
  const issueDate = normalizeSpace(raw.issueDate[0]);
  const issueTime = normalizeSpace(raw.issueTime[0]);
  const issuedAt = parseXsdDateTime(`${issueDate}T${issueTime}`);
  if (!issuedAt) {
    problems.push({
      rule: 'MLS-ISSUE-TIME',
      path: '/ApplicationResponse/cbc:IssueTime',
      message: `IssueDate and IssueTime "${issueDate}T${issueTime}" are not an instant`,
    });
  }
  if (problems.length > 0 || !sender || !receiver || !issuedAt) return { ok: false, problems };

  const dr = raw.documentResponses[0] as RawDocumentResponse;
  const description = dr.responses[0]?.descriptions[0];
  const lines: MlsLine[] = dr.lines.flatMap((line) =>
    line.responses.map((r) => {
      const text = normalizeSpace(r.descriptions[0]);
      const ruleId = ruleIdOf(text);
      return {
        location: normalizeSpace(line.lineReferences[0]?.lineIds[0]),
        reasonCode: normalizeSpace(r.statuses[0]?.reasonCodes[0]) as MlsStatusReasonCode,
        description: text,
        ...(ruleId === undefined ? {} : { ruleId }),
      };
    }),
  );
  const mls: Mls = {
    id: normalizeSpace(raw.id[0]),
    customizationId: normalizeSpace(raw.customizationId[0]),
    profileId: normalizeSpace(raw.profileId[0]),
    issueDate,
    issueTime,
    issuedAt,
    sender,
    receiver,
    responseCode: normalizeSpace(dr.responses[0]?.responseCodes[0]) as MlsResponseCode,
    ...(description === undefined || normalizeSpace(description) === ''
      ? {}
      : { description: normalizeSpace(description) }),
    referencedInstanceId: normalizeSpace(dr.references[0]?.ids[0]),
    lines,
  };
  return { ok: true, mls };
}

/**
 * Reads and checks an MLS document. Never throws for bad input: unreadable or unsafe XML is the problem `MLS-XML`, any
 * other root element `MLS-ROOT`, and every broken rule is listed with its id.
 */
export function readMls(xml: Buffer | Uint8Array | string, limits?: Partial<XmlLimits>): MlsReadResult {
  let root: Element | null;
  try {
    root = parseXml(xml, limits).documentElement;
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    return { ok: false, problems: [{ rule: 'MLS-XML', path: '', message: `not readable XML: ${e.message}` }] };
  }
  if (!root || root.namespaceURI !== NS.ublApplicationResponse || root.localName !== 'ApplicationResponse') {
    const found = root ? `{${root.namespaceURI ?? ''}}${root.localName ?? ''}` : 'nothing';
    return {
      ok: false,
      problems: [
        {
          rule: 'MLS-ROOT',
          path: '/',
          message: `the root element is ${found}, expected {${NS.ublApplicationResponse}}ApplicationResponse`,
        },
      ],
    };
  }
  const raw = readRawMls(root);
  const problems = checkMls(raw);
  return problems.length > 0 ? { ok: false, problems } : typedMls(raw);
}
