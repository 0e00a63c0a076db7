/**
 * The rules of MLS 1.0 (Schematron 1.0.1, `SCH-MLS-01` … `SCH-MLS-31`) evaluated in code over the raw content of an
 * ApplicationResponse, plus the checks the Schematron leaves to the UBL schema (ours, `MLS-*`). The reader fills the
 * raw model from the document and the builder from its input, so what we build is checked by the rules we read with.
 *
 * Values are compared after XPath normalize-space, as the Schematron does. Every rule is evaluated, as a Schematron
 * run would, so one defect can break several rules (a missing EndpointID is also an empty one).
 */
import {
  MLS_CUSTOMIZATION_ID,
  MLS_FAILURE_CODES,
  MLS_PROFILE_ID,
  SPIS_SCHEME_ID,
  isMlsResponseCode,
  isMlsStatusReasonCode,
  type MlsProblem,
} from './types';

/** Every field is the list of the elements found, so cardinality is checked too. */
export interface RawMls {
  customizationId: string[];
  profileId: string[];
  id: string[];
  issueDate: string[];
  issueTime: string[];
  senderParty: RawParty[];
  receiverParty: RawParty[];
  documentResponses: RawDocumentResponse[];
}
export interface RawParty {
  endpointIds: Array<{ value: string; schemeId: string | undefined }>;
}
export interface RawDocumentResponse {
  responses: Array<{ responseCodes: string[]; descriptions: string[] }>;
  references: Array<{ ids: string[] }>;
  lines: RawLine[];
}
export interface RawLine {
  lineReferences: Array<{ lineIds: string[] }>;
  responses: RawLineResponse[];
}
export interface RawLineResponse {
  descriptions: string[];
  statuses: Array<{ reasonCodes: string[] }>;
}

/** XPath normalize-space: trim and collapse runs of XML white space. */
export function normalizeSpace(s: string | undefined): string {
  return (s ?? '').replace(/[ \t\r\n]+/g, ' ').trim();
}

/** `<6 digits>[-<use case 3–12>[.<suffix 3–24>]]`, case-insensitive (SPIS main ID with optional use case). */
export const SPIS_VALUE_RE = /^[0-9]{6}(-[0-9A-Z_]{3,12}(\.[0-9A-Z\-._~]{3,24})?)?$/i;
const TIME_ZONE_END_RE = /([+-]\d{2}:\d{2}|Z)$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_RE = /^(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;
const ROOT = '/ApplicationResponse';

function first(values: readonly string[]): string {
  return normalizeSpace(values[0]);
}

function isCalendarDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function isTimeOfDay(s: string): boolean {
  const m = TIME_RE.exec(s);
  if (!m) return false;
  const [hour, minute, second] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (hour > 23 || minute > 59 || second > 59) return false;
  return m[6] === undefined || (Number(m[6]) <= 14 && Number(m[7]) <= 59);
}

/** Every broken rule, in the order a Schematron run reports them. */
export function checkMls(raw: RawMls): MlsProblem[] {
  const problems: MlsProblem[] = [];
  const add = (rule: string, path: string, message: string): void => {
    problems.push({ rule, path, message });
  };
  const atMostOnce = (path: string, name: string, count: number): void => {
    if (count > 1) add('MLS-CARDINALITY', path, `${name} may occur once, found ${count}`);
  };

  atMostOnce(ROOT, 'cbc:CustomizationID', raw.customizationId.length);
  atMostOnce(ROOT, 'cbc:ProfileID', raw.profileId.length);
  atMostOnce(ROOT, 'cbc:ID', raw.id.length);
  atMostOnce(ROOT, 'cbc:IssueDate', raw.issueDate.length);
  atMostOnce(ROOT, 'cbc:IssueTime', raw.issueTime.length);
  atMostOnce(ROOT, 'cac:SenderParty', raw.senderParty.length);
  atMostOnce(ROOT, 'cac:ReceiverParty', raw.receiverParty.length);

  const customizationId = first(raw.customizationId);
  if (customizationId !== MLS_CUSTOMIZATION_ID)
    add(
      'SCH-MLS-01',
      `${ROOT}/cbc:CustomizationID`,
      `CustomizationID is "${customizationId}", not ${MLS_CUSTOMIZATION_ID}`,
    );
  const profileId = first(raw.profileId);
  if (profileId !== MLS_PROFILE_ID)
    add('SCH-MLS-02', `${ROOT}/cbc:ProfileID`, `ProfileID is "${profileId}", not ${MLS_PROFILE_ID}`);
  if (first(raw.id) === '') add('SCH-MLS-03', `${ROOT}/cbc:ID`, 'the MLS has no ID');

  const issueDate = first(raw.issueDate);
  if (issueDate.length !== 10) {
    add('SCH-MLS-04', `${ROOT}/cbc:IssueDate`, `IssueDate "${issueDate}" is not a date without time zone`);
  } else if (!isCalendarDate(issueDate)) {
    add('MLS-ISSUE-DATE', `${ROOT}/cbc:IssueDate`, `IssueDate "${issueDate}" is not a calendar date (YYYY-MM-DD)`);
  }
  const issueTime = first(raw.issueTime);
  if (raw.issueTime.length === 0) add('SCH-MLS-05', `${ROOT}/cbc:IssueTime`, 'the MLS has no IssueTime');
  if (!TIME_ZONE_END_RE.test(issueTime)) {
    add('SCH-MLS-06', `${ROOT}/cbc:IssueTime`, `IssueTime "${issueTime}" has no time zone`);
  } else if (!isTimeOfDay(issueTime)) {
    add('MLS-ISSUE-TIME', `${ROOT}/cbc:IssueTime`, `IssueTime "${issueTime}" is not a time of day (hh:mm:ss)`);
  }

  const party = (parties: RawParty[], element: string, rules: readonly string[], role: string): void => {
    const path = `${ROOT}/${element}/cbc:EndpointID`;
    const endpoints = parties.flatMap((p) => p.endpointIds);
    for (const p of parties) atMostOnce(`${ROOT}/${element}`, 'cbc:EndpointID', p.endpointIds.length);
    const endpoint = endpoints[0];
    const value = normalizeSpace(endpoint?.value);
    const [present, notEmpty, spis, schemePresent, schemeSpis] = rules as [string, string, string, string, string];
    if (!endpoint) add(present, path, `the ${role} has no EndpointID`);
    if (value === '') add(notEmpty, path, `the ${role} EndpointID is empty`);
    if (!SPIS_VALUE_RE.test(value))
      add(spis, path, `the ${role} EndpointID "${value}" is not a Peppol service provider id (6 digits [-use case])`);
    if (endpoint?.schemeId === undefined)
      add(schemePresent, `${path}/@schemeID`, `the ${role} EndpointID has no schemeID`);
    if (endpoint?.schemeId !== SPIS_SCHEME_ID) {
      add(
        schemeSpis,
        `${path}/@schemeID`,
        `the ${role} EndpointID schemeID is "${endpoint?.schemeId ?? ''}", not the SPIS scheme ${SPIS_SCHEME_ID}`,
      );
    }
  };
  party(
    raw.senderParty,
    'cac:SenderParty',
    ['SCH-MLS-07', 'SCH-MLS-08', 'SCH-MLS-09', 'SCH-MLS-10', 'SCH-MLS-11'],
    'sender',
  );
  party(
    raw.receiverParty,
    'cac:ReceiverParty',
    ['SCH-MLS-12', 'SCH-MLS-13', 'SCH-MLS-14', 'SCH-MLS-15', 'SCH-MLS-16'],
    'receiver',
  );

  if (raw.documentResponses.length !== 1) {
    add(
      'SCH-MLS-17',
      `${ROOT}/cac:DocumentResponse`,
      `an MLS has exactly one DocumentResponse, found ${raw.documentResponses.length}`,
    );
  }
  raw.documentResponses.forEach((dr, i) => checkDocumentResponse(dr, `${ROOT}/cac:DocumentResponse[${i + 1}]`, add));
  return problems;
}

function checkDocumentResponse(
  dr: RawDocumentResponse,
  path: string,
  add: (rule: string, path: string, message: string) => void,
): void {
  if (dr.responses.length > 1)
    add('MLS-CARDINALITY', path, `cac:Response may occur once, found ${dr.responses.length}`);
  const response = dr.responses[0];
  if (response && response.responseCodes.length > 1)
    add(
      'MLS-CARDINALITY',
      `${path}/cac:Response`,
      `cbc:ResponseCode may occur once, found ${response.responseCodes.length}`,
    );
  if (response && response.descriptions.length > 1)
    add(
      'MLS-CARDINALITY',
      `${path}/cac:Response`,
      `cbc:Description may occur once, found ${response.descriptions.length}`,
    );
  const code = first(response?.responseCodes ?? []);
  const description = response?.descriptions[0];
  const statusCodes = dr.lines.flatMap((l) => l.responses.map((r) => first(r.statuses[0]?.reasonCodes ?? [])));
  const hasFailure = statusCodes.some((c) => isMlsStatusReasonCode(c) && MLS_FAILURE_CODES.has(c));
  const rc = `${path}/cac:Response/cbc:ResponseCode`;

  if (!response || response.responseCodes.length === 0) add('SCH-MLS-18', rc, 'the MLS has no ResponseCode');
  if (!isMlsResponseCode(code)) add('SCH-MLS-19', rc, `ResponseCode "${code}" is none of AP, AB, RE`);
  if (code === 'RE' && description === undefined)
    add('SCH-MLS-20', `${path}/cac:Response/cbc:Description`, 'a negative MLS (RE) needs a Description');
  if (code === 'RE' && normalizeSpace(description) === '')
    add('SCH-MLS-21', `${path}/cac:Response/cbc:Description`, 'the Description of a negative MLS (RE) is empty');
  if (dr.references.length !== 1) {
    add(
      'SCH-MLS-22',
      `${path}/cac:DocumentReference`,
      `an MLS references exactly one document, found ${dr.references.length} DocumentReference`,
    );
  }
  if (code === 'RE' && dr.lines.length === 0)
    add('SCH-MLS-23', `${path}/cac:LineResponse`, 'a negative MLS (RE) needs at least one issue (LineResponse)');
  if (code === 'RE' && !hasFailure)
    add('SCH-MLS-24', `${path}/cac:LineResponse`, 'a negative MLS (RE) needs at least one failure (BV, FD or SV)');
  if (code !== 'RE' && hasFailure)
    add('SCH-MLS-25', `${path}/cac:LineResponse`, `a positive MLS (${code}) may not carry failures (BV, FD or SV)`);

  dr.references.forEach((ref, i) => {
    const refPath = `${path}/cac:DocumentReference[${i + 1}]/cbc:ID`;
    if (ref.ids.length > 1) add('MLS-CARDINALITY', refPath, `cbc:ID may occur once, found ${ref.ids.length}`);
    if (first(ref.ids) === '')
      add('SCH-MLS-26', refPath, 'the referenced document id (SBDH InstanceIdentifier) is empty');
  });
  dr.lines.forEach((line, i) => checkLine(line, `${path}/cac:LineResponse[${i + 1}]`, add));
}

function checkLine(line: RawLine, path: string, add: (rule: string, path: string, message: string) => void): void {
  const ref = line.lineReferences[0];
  if (line.lineReferences.length > 1)
    add('MLS-CARDINALITY', path, `cac:LineReference may occur once, found ${line.lineReferences.length}`);
  if (ref && ref.lineIds.length > 1)
    add('MLS-CARDINALITY', `${path}/cac:LineReference`, `cbc:LineID may occur once, found ${ref.lineIds.length}`);
  if (first(ref?.lineIds ?? []) === '')
    add('SCH-MLS-27', `${path}/cac:LineReference/cbc:LineID`, 'the issue location (LineID) is empty; use NA for none');
  if (line.responses.length === 0) add('MLS-LINE', path, 'the LineResponse has no Response');
  line.responses.forEach((r, j) => {
    const rPath = `${path}/cac:Response[${j + 1}]`;
    if (r.descriptions.length > 1)
      add('MLS-CARDINALITY', rPath, `cbc:Description may occur once, found ${r.descriptions.length}`);
    if (r.descriptions.length === 0) add('SCH-MLS-28', `${rPath}/cbc:Description`, 'the issue has no Description');
    if (first(r.descriptions) === '') add('SCH-MLS-29', `${rPath}/cbc:Description`, 'the issue Description is empty');
    if (r.statuses.length === 0) add('SCH-MLS-30', `${rPath}/cac:Status`, 'the issue has no Status');
    if (r.statuses.length > 1) add('MLS-CARDINALITY', rPath, `cac:Status may occur once, found ${r.statuses.length}`);
    r.statuses.forEach((s, k) => {
      const sPath = `${rPath}/cac:Status[${k + 1}]/cbc:StatusReasonCode`;
      if (s.reasonCodes.length > 1)
        add('MLS-CARDINALITY', sPath, `cbc:StatusReasonCode may occur once, found ${s.reasonCodes.length}`);
      const code = first(s.reasonCodes);
      if (!isMlsStatusReasonCode(code))
        add('SCH-MLS-31', sPath, `StatusReasonCode "${code}" is none of BV, BW, FD, SV`);
    });
  });
}
