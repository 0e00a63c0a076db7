import { XMLSerializer } from '@xmldom/xmldom';
import { heartbeat } from '@temporalio/activity';
import { DocumentState } from '../src/core/document-states';
import { GatewayError } from '../src/core/gateway-error';
import { parseSbd } from '../src/peppol/sbdh';
import type { BlobStore } from '../src/storage/blob-store';
import type { As4InboundRepository } from '../src/storage/as4/as4-inbound.repository';
import type { DetectionOutcome, ReceiveDocumentInput } from '../workflows/messages';
import { detectionOutcome } from './detection';

export interface As4ActivityDeps {
  as4Inbound: As4InboundRepository;
  blobs: BlobStore;
  maxDocumentBytes: number;
}

/** The business document inside a stored SBD, as the bytes format detection reads. */
function businessDocument(sbd: Buffer): Buffer {
  const { payload } = parseSbd(sbd);
  if (payload.kind === 'xml') return Buffer.from(new XMLSerializer().serializeToString(payload.element), 'utf8');
  if (payload.kind === 'binary') return payload.data;
  return Buffer.from(payload.text, 'utf8');
}

export function createAs4Activities(deps: As4ActivityDeps) {
  return {
    /** Detects the format of a received document and records it on the message (idempotent: same input, same write). */
    async detectReceivedFormat(input: ReceiveDocumentInput): Promise<DetectionOutcome> {
      const record = await deps.as4Inbound.findByMessageId(input.messageId);
      if (!record || record.tenantId !== input.tenantId) throw new GatewayError('DOCUMENT_NOT_FOUND', `received message ${input.messageId} not found`);
      const sbd = await deps.blobs.read(record.blobId, deps.maxDocumentBytes, () => heartbeat());
      const outcome = detectionOutcome(businessDocument(sbd));
      await deps.as4Inbound.recordState(
        input.messageId,
        outcome.ok ? { state: DocumentState.Detected, stateDetail: outcome.format.id, format: { ...outcome.format } } : { state: DocumentState.Rejected, stateDetail: `${outcome.code}: ${outcome.message}` },
      );
      return outcome;
    },
  };
}
