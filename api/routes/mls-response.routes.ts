import type { Request, Response, Router } from 'express';
import { GatewayError } from '../../src/core/gateway-error';
import { principalOf } from '../../src/auth/authenticate';
import type { BlobStore } from '../../src/storage/blob-store';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { DocumentRepository, StoredDocument } from '../../src/storage/document.repository';
import { MlsError, buildMls } from '../../src/peppol/mls';
import { peppolParticipant } from '../../src/peppol/identifiers';
import {
  sendMlsWorkflowId,
  type MlsLineSpec,
  type MlsReasonCode,
  type MlsStatusCode,
  type SendMlsInput,
} from '../../workflows/contracts/send-mls';
import { canReachParty, documentIdParam } from '../access';
import type { WorkflowStarter } from '../workflow-client';
import { badField, jsonBody } from '../request';

export interface MlsResponseRouteDeps {
  directory: DirectoryRepository;
  documents: DocumentRepository;
  blobs: BlobStore;
  workflows: WorkflowStarter;
}

const STATUS_CODES: ReadonlySet<string> = new Set<MlsStatusCode>(['AB', 'AP', 'RE']);
const REASON_CODES: ReadonlySet<string> = new Set<MlsReasonCode>(['FD', 'SV', 'BV', 'BW']);
const MAX_TEXT = 1000;
const MAX_LINES = 200;

const bad = badField;

function text(value: unknown, field: string, required: boolean): string | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw bad(`${field} must be a non-empty string`, field);
  if (value.length > MAX_TEXT) throw bad(`${field} is longer than ${MAX_TEXT} characters`, field);
  return value;
}

function onlyFields(o: Record<string, unknown>, allowed: readonly string[], where: string): void {
  const extra = Object.keys(o).filter((k) => !allowed.includes(k));
  if (extra.length > 0) throw bad(`${where} has unknown field(s): ${extra.slice(0, 5).join(', ')}`, extra[0]);
}

/** The body of spec 2.6, checked: status AB / AP / RE, a description, lines only (and at least one failure) for RE. */
export function parseMlsResponseBody(body: unknown): Pick<SendMlsInput, 'responseCode' | 'description' | 'lines'> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('The body must be a JSON object');
  const o = body as Record<string, unknown>;
  onlyFields(o, ['status', 'description', 'lines'], 'The body');
  if (typeof o['status'] !== 'string' || !STATUS_CODES.has(o['status']))
    throw bad('status must be one of AB, AP, RE', 'status');
  const responseCode = o['status'] as MlsStatusCode;
  const description = text(o['description'], 'description', responseCode === 'RE');
  let lines: MlsLineSpec[] | undefined;
  if (o['lines'] !== undefined) {
    if (responseCode !== 'RE') throw bad('lines are only allowed with status RE', 'lines');
    if (!Array.isArray(o['lines']) || o['lines'].length > MAX_LINES)
      throw bad(`lines must be an array of at most ${MAX_LINES} lines`, 'lines');
    lines = o['lines'].map((line: unknown, i) => {
      if (typeof line !== 'object' || line === null || Array.isArray(line))
        throw bad(`lines[${i}] must be an object`, 'lines');
      const l = line as Record<string, unknown>;
      onlyFields(l, ['statusReasonCode', 'description'], `lines[${i}]`);
      const code = l['statusReasonCode'];
      if (typeof code !== 'string' || !REASON_CODES.has(code))
        throw bad(`lines[${i}].statusReasonCode must be one of FD, SV, BV, BW`, 'lines');
      return {
        reasonCode: code as MlsReasonCode,
        description: text(l['description'], `lines[${i}].description`, true)!,
      };
    });
  }
  const spec = { responseCode, ...(description !== undefined ? { description } : {}), ...(lines ? { lines } : {}) };
  // The MLS rules themselves (a rejection needs a failure; BW only beside one), on a document built with stand-in ids.
  try {
    buildMls({
      referencedInstanceId: 'check',
      sender: peppolParticipant('0242:000000'),
      receiver: peppolParticipant('0242:000000'),
      ...spec,
    });
  } catch (e) {
    if (e instanceof MlsError) throw bad(e.message, 'lines');
    throw e;
  }
  return spec;
}

/**
 * POST /api/v1-beta/generic/{documentId}/response (spec 4.7, body 2.6): sends a message-level status for a document
 * received over Peppol by one of the caller's parties, in its own run (one MLS per document: a second request is a
 * 409). The document of another tenant, or of a party the token does not reach, is a 404.
 */
export function registerMlsResponseRoutes(router: Router, deps: MlsResponseRouteDeps): void {
  const bodyJson = jsonBody('256kb', 'the response');

  router.post('/api/v1-beta/generic/:documentId/response', bodyJson, async (req: Request, res: Response) => {
    const documentId = documentIdParam(req);
    const principal = principalOf(res);
    const notFound = new GatewayError('DOCUMENT_NOT_FOUND', `Received document ${documentId} not found`);
    let doc: StoredDocument | null = null;
    for (const tenantId of principal.tenantIds) {
      const found = await deps.documents.findStored(tenantId, documentId);
      if (found && found.direction === 'inbound') {
        doc = found;
        break;
      }
    }
    if (!doc) throw notFound;
    const party = await deps.directory.findParty(doc.partyId);
    if (!party || party.tenantId !== doc.tenantId || !canReachParty(principal, party)) throw notFound;
    const spec = parseMlsResponseBody(req.body);
    const meta = await deps.blobs.metadata(doc.blobId);
    if (typeof meta?.['as4MessageId'] !== 'string')
      throw new GatewayError(
        'CONFLICT',
        `Document ${documentId} did not arrive over Peppol: there is no sender to answer`,
      );
    if (!deps.workflows.startSendMls)
      throw new GatewayError('WORKFLOW_START_FAILED', 'Sending a message-level status is not available on this server');
    const started = await deps.workflows.startSendMls({
      tenantId: doc.tenantId,
      documentId,
      ...spec,
      requestedBy: 'api',
    });
    if (started === 'already-started')
      throw new GatewayError('CONFLICT', `A message-level status was already sent for document ${documentId}`, {
        details: { documentId },
      });
    res.status(202).json({ id: documentId, run: sendMlsWorkflowId(doc.tenantId, documentId) });
  });
}
