/**
 * Builds a Peppol MLS for a received business document. The input goes through the same rules as a received MLS
 * before anything is written (an input that would break one throws MlsError naming every broken rule), so what this
 * writes is what readMls accepts.
 */
import { randomUUID } from 'node:crypto';
import { el, leaf, serialize, type XmlElement } from '../../en16931/xml-write';
import { NS } from '../../formats/xml/namespaces';
import { formatId, isSpisId, type ParticipantId } from '../identifiers';
import { typedMls } from './read';
import { checkMls, type RawLine, type RawMls } from './rules';
import {
  MLS_CUSTOMIZATION_ID,
  MLS_NO_LOCATION,
  MLS_PROFILE_ID,
  MlsError,
  SPIS_SCHEME_ID,
  type Mls,
  type MlsProblem,
  type MlsResponseCode,
  type MlsStatusReasonCode,
} from './types';

export interface MlsLineInput {
  reasonCode: MlsStatusReasonCode;
  description: string;
  /** The failing rule (`BR-CO-10`); written as `[rule] description`. */
  ruleId?: string;
  /** XPath of the offending element in the business document; default `NA`. */
  location?: string;
}

export interface MlsBuildInput {
  responseCode: MlsResponseCode;
  /** The SBDH InstanceIdentifier of the business document answered. */
  referencedInstanceId: string;
  /** C3, our service provider id (`0242:nnnnnn`). */
  sender: ParticipantId;
  /** C2, the sending access point's service provider id (`0242:nnnnnn`, see mlsAddress). */
  receiver: ParticipantId;
  /** Mandatory for RE. */
  description?: string;
  /** At least one failure (BV, FD, SV) for RE; none for AP / AB (BW warnings are allowed). */
  lines?: readonly MlsLineInput[];
  /** Default: a random UUID. */
  id?: string;
  /** Default: now. Written in UTC. */
  issuedAt?: Date;
}

export interface BuiltMls {
  xml: string;
  mls: Mls;
}

const NOT_XML_CHARACTER = new RegExp(
  [
    '[\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF]',
    '[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])',
    '(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]',
  ].join('|'),
  'g',
);

/** Characters XML 1.0 cannot carry (C0 controls but tab / LF / CR, lone surrogates, U+FFFE / U+FFFF) are dropped. */
function xmlSafe(s: string): string {
  return s.replace(NOT_XML_CHARACTER, '');
}

function spisValue(p: ParticipantId, role: string, problems: MlsProblem[]): string {
  const path = `/ApplicationResponse/cac:${role === 'sender' ? 'Sender' : 'Receiver'}Party/cbc:EndpointID`;
  if (!isSpisId(p)) {
    problems.push({
      rule: 'MLS-SPIS',
      path,
      message: `the ${role} ${formatId(p)} is not a service provider id (0242:…)`,
    });
  }
  return p.value.startsWith(`${SPIS_SCHEME_ID}:`) ? p.value.slice(SPIS_SCHEME_ID.length + 1) : p.value;
}

/** Issues with the same location share one LineResponse, in the order they were given. */
function groupLines(lines: readonly MlsLineInput[]): Array<{ location: string; issues: MlsLineInput[] }> {
  const groups = new Map<string, MlsLineInput[]>();
  for (const line of lines) {
    const location = xmlSafe(line.location ?? '').trim() || MLS_NO_LOCATION;
    const group = groups.get(location);
    if (group) group.push(line);
    else groups.set(location, [line]);
  }
  return [...groups].map(([location, issues]) => ({ location, issues }));
}

function issueText(line: MlsLineInput): string {
  const text = xmlSafe(line.description);
  return line.ruleId ? `[${xmlSafe(line.ruleId)}] ${text}` : text;
}

/** An MLS document (UTF-8 XML text) and its typed form; throws MlsError when the input breaks an MLS rule. */
export function buildMls(input: MlsBuildInput): BuiltMls {
  const problems: MlsProblem[] = [];
  const issued = input.issuedAt ?? new Date();
  if (Number.isNaN(issued.getTime()))
    throw new MlsError([
      { rule: 'MLS-ISSUE-TIME', path: '/ApplicationResponse/cbc:IssueTime', message: 'invalid date' },
    ]);
  const iso = issued.toISOString();
  const issueDate = iso.slice(0, 10);
  const issueTime = iso.slice(11).replace('.000Z', 'Z');
  const id = xmlSafe(input.id ?? randomUUID());
  const sender = spisValue(input.sender, 'sender', problems);
  const receiver = spisValue(input.receiver, 'receiver', problems);
  const description = input.description === undefined ? undefined : xmlSafe(input.description);
  const referencedInstanceId = xmlSafe(input.referencedInstanceId);
  const groups = groupLines(input.lines ?? []);

  const raw: RawMls = {
    customizationId: [MLS_CUSTOMIZATION_ID],
    profileId: [MLS_PROFILE_ID],
    id: [id],
    issueDate: [issueDate],
    issueTime: [issueTime],
    senderParty: [{ endpointIds: [{ value: sender, schemeId: SPIS_SCHEME_ID }] }],
    receiverParty: [{ endpointIds: [{ value: receiver, schemeId: SPIS_SCHEME_ID }] }],
    documentResponses: [
      {
        responses: [
          { responseCodes: [input.responseCode], descriptions: description === undefined ? [] : [description] },
        ],
        references: [{ ids: [referencedInstanceId] }],
        lines: groups.map((g): RawLine => ({
          lineReferences: [{ lineIds: [g.location] }],
          responses: g.issues.map((l) => ({
            descriptions: [issueText(l)],
            statuses: [{ reasonCodes: [l.reasonCode] }],
          })),
        })),
      },
    ],
  };
  problems.push(...checkMls(raw));
  if (problems.length > 0) throw new MlsError(problems);
  const typed = typedMls(raw);
  if (!typed.ok) throw new MlsError(typed.problems);

  const root: XmlElement = el(
    'ApplicationResponse',
    { xmlns: NS.ublApplicationResponse, 'xmlns:cac': NS.cac, 'xmlns:cbc': NS.cbc },
    leaf('cbc:CustomizationID', MLS_CUSTOMIZATION_ID),
    leaf('cbc:ProfileID', MLS_PROFILE_ID),
    leaf('cbc:ID', id),
    leaf('cbc:IssueDate', issueDate),
    leaf('cbc:IssueTime', issueTime),
    el('cac:SenderParty', {}, leaf('cbc:EndpointID', sender, { schemeID: SPIS_SCHEME_ID })),
    el('cac:ReceiverParty', {}, leaf('cbc:EndpointID', receiver, { schemeID: SPIS_SCHEME_ID })),
    el(
      'cac:DocumentResponse',
      {},
      el('cac:Response', {}, leaf('cbc:ResponseCode', input.responseCode), leaf('cbc:Description', description)),
      el('cac:DocumentReference', {}, leaf('cbc:ID', referencedInstanceId)),
      groups.map((g) =>
        el(
          'cac:LineResponse',
          {},
          el('cac:LineReference', {}, leaf('cbc:LineID', g.location)),
          g.issues.map((l) =>
            el(
              'cac:Response',
              {},
              leaf('cbc:Description', issueText(l)),
              el('cac:Status', {}, leaf('cbc:StatusReasonCode', l.reasonCode)),
            ),
          ),
        ),
      ),
    ),
  );
  return { xml: serialize(root), mls: typed.mls };
}
