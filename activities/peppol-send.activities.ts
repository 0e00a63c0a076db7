import { X509Certificate } from 'node:crypto';
import { heartbeat } from '@temporalio/activity';
import { DocumentState, sendAttemptKey } from '../src/core/document-states';
import { GatewayError } from '../src/core/gateway-error';
import { buildPeppolMessage } from '../src/peppol/as4/message';
import { stableMessageIds } from '../src/peppol/as4/message-ids';
import { sendAs4Message } from '../src/peppol/as4/sender';
import type { RevocationChecker } from '../src/peppol/pki/revocation';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  formatId,
  processId,
  type DocumentTypeId,
  type ProcessId,
} from '../src/peppol/identifiers';
import { readInvoiceRouting } from '../src/peppol/invoice-routing';
import type { ApKeyRing } from '../src/peppol/pki/key-ring';
import type { RecipientLookup } from '../src/peppol/recipient-lookup';
import { buildSbd } from '../src/peppol/sbdh';
import { extractFromPdf, isPdf } from '../src/formats';
import type { BlobStore } from '../src/storage/blob-store';
import { convertForRecipient, recipientAlternatives } from '../src/transform/recipient';
import type { TransformRunner } from '../src/transform/transform';
import type { ValidateOptions, ValidationResult } from '../src/validation';
import type { DocumentRepository } from '../src/storage/document.repository';
import type {
  PeppolRoute,
  ResolveRecipientOutcome,
  SendInvoiceInput,
  SendPeppolInput,
  SendPeppolOutcome,
} from '../workflows/messages';

/** What a worker needs to send over Peppol: recipient lookups (SML → SMP) and our AP keys. */
export interface PeppolSender {
  lookup: Pick<RecipientLookup, 'findEndpoint'>;
  keys: ApKeyRing;
  apCertificateAuthorities: readonly X509Certificate[];
  /** Checks the receipt signer's certificate for revocation (AS4_REVOCATION_CHECK); absent when switched off. */
  revocation?: RevocationChecker;
  /** One AS4 exchange; default 120 s. */
  sendTimeoutMs?: number;
}

export interface PeppolSendActivityDeps {
  documents: DocumentRepository;
  blobs: BlobStore;
  maxDocumentBytes: number;
  /** Absent or `unavailable`: this worker cannot send, and each invoice ends saying which settings are missing. */
  peppolSender?: PeppolSender | { unavailable: string };
  /** Validates a document converted for its recipient before it is offered (the validation step's validator). */
  validator?: { validate(input: Buffer, options?: ValidateOptions): Promise<ValidationResult> };
  /** Converts for a recipient: on the document pool's threads in the worker process, else in process. */
  transform?: TransformRunner;
}

const refused = (
  stage: 'configuration' | 'recipient' | 'lookup',
  reasonCode: string,
  message: string,
  recipient?: string,
  retryable = false,
): ResolveRecipientOutcome => ({
  kind: 'refused',
  retryable,
  stage,
  reasonCode,
  message,
  ...(recipient ? { recipient } : {}),
});

/** Runs `work` with a heartbeat every 5 s (the proxies' heartbeat timeout is 30 s). */
async function whileBeating<T>(work: () => Promise<T>): Promise<T> {
  heartbeat();
  const beat = setInterval(() => heartbeat(), 5_000);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}

type FindEndpoint = (
  types: DocumentTypeId[],
  process: ProcessId | undefined,
) => ReturnType<RecipientLookup['findEndpoint']>;

export function createPeppolSendActivities(deps: PeppolSendActivityDeps) {
  /**
   * The first conversion of the document (in recipientAlternatives' order) that passes the official validation of
   * its format and that the recipient's SMP lists; undefined when there is none.
   */
  async function findConvertedFormat(bytes: Buffer, ownDocumentTypeId: string, findEndpoint: FindEndpoint) {
    if (!deps.validator) return undefined;
    for await (const alt of recipientAlternatives(bytes, ownDocumentTypeId, deps.transform)) {
      let types: DocumentTypeId[];
      let process: ProcessId | undefined;
      try {
        types = [documentTypeId(DOCTYPE_SCHEME_BUSDOX, alt.documentTypeId)];
        process = alt.profileId ? processId(PROCESS_SCHEME, alt.profileId) : undefined;
      } catch {
        continue;
      }
      const found = await findEndpoint(types, process);
      if (!found.ok) {
        if (found.failure === 'document-type-not-supported') continue;
        return { found, transform: undefined };
      }
      const { converted } = alt;
      const validation = await deps.validator.validate(converted.xml);
      if (validation.assertions.some((a) => a.flag === 'error')) continue;
      return {
        found,
        transform: {
          targetFormat: alt.targetFormat,
          targetName: converted.report.target.name,
          notCarried: converted.report.notCarried.length + converted.report.unmapped.length,
        },
      };
    }
    return undefined;
  }

  /** The record (with its history, for the format detection found, when `withState`) and its bytes. */
  async function load(input: SendInvoiceInput, withState: boolean) {
    const stored = await deps.documents.findStored(input.tenantId, input.documentId);
    if (!stored) throw new GatewayError('DOCUMENT_NOT_FOUND', `document ${input.documentId} not found`);
    const [record, bytes] = await Promise.all([
      withState ? deps.documents.withHistory(stored) : undefined,
      deps.blobs.read(stored.blobId, deps.maxDocumentBytes, () => heartbeat()),
    ]);
    return { record, bytes };
  }

  return {
    /**
     * The invoice's Peppol addresses (BT-49 receiver, BT-34 sender) and the receiver's checked AS4 endpoint for the
     * document's own document type and process. Every answer is data: only database and blob store failures throw.
     */
    async resolveRecipient(input: SendInvoiceInput): Promise<ResolveRecipientOutcome> {
      const sender = deps.peppolSender;
      if (!sender || 'unavailable' in sender) {
        return refused(
          'configuration',
          'PEPPOL_NOT_CONFIGURED',
          `Peppol sending is not configured: ${sender?.unavailable ?? 'no Peppol sender in this worker'}`,
        );
      }
      const { record, bytes } = await load(input, true);
      const format = record?.format;
      if (!format?.documentTypeId) {
        return refused(
          'recipient',
          'NO_DOCUMENT_TYPE',
          `Not sent over Peppol: the format ${format?.id ?? '(unknown)'} has no Peppol document type identifier`,
        );
      }
      // A Factur-X / ZUGFeRD PDF is not a Peppol document: its embedded XML is converted for the recipient (below).
      const container = isPdf(bytes);
      const routing = readInvoiceRouting(container ? extractFromPdf(bytes).xml : bytes);
      if (!routing.ok) return refused('recipient', routing.code, `Not sent: ${routing.message}`);
      const recipient = routing.receiver.value;
      let documentType: DocumentTypeId;
      let process: ProcessId | undefined;
      try {
        documentType = documentTypeId(DOCTYPE_SCHEME_BUSDOX, format.documentTypeId);
        process = format.profileId ? processId(PROCESS_SCHEME, format.profileId) : undefined;
      } catch (e) {
        return refused('recipient', 'INVALID_IDENTIFIER', `Not sent: ${(e as Error).message}`, recipient);
      }
      // DNS and SMP requests are each bounded by PEPPOL_LOOKUP_TIMEOUT_MS, but several of them can outlast a heartbeat.
      let found = container
        ? undefined
        : await whileBeating(() => sender.lookup.findEndpoint(routing.receiver, [documentType], process));
      let transform: PeppolRoute['transform'];
      if (!found || (!found.ok && found.failure === 'document-type-not-supported')) {
        // The transform step: a format of the document's content that the recipient does take, if there is one (for
        // a PDF, its own XML's type too: what goes out is the XML, never the PDF).
        const converted = await findConvertedFormat(bytes, container ? '' : format.documentTypeId, (types, p) =>
          whileBeating(() => sender.lookup.findEndpoint(routing.receiver, types, p)),
        );
        if (converted) {
          found = converted.found;
          transform = converted.transform;
        }
      }
      if (!found) {
        return refused(
          'lookup',
          'DOCUMENT_TYPE_NOT_SUPPORTED',
          `The recipient ${recipient} does not receive over Peppol AS4 any format the gateway can make of this ${format.name} PDF`,
          recipient,
        );
      }
      if (!found.ok) {
        switch (found.failure) {
          case 'participant-unknown':
            return refused(
              'lookup',
              'PARTICIPANT_UNKNOWN',
              `The recipient ${recipient} is not reachable on Peppol (${found.message}); the e-mail fallback is not available in this version`,
              recipient,
            );
          case 'document-type-not-supported':
            return refused(
              'lookup',
              'DOCUMENT_TYPE_NOT_SUPPORTED',
              `The recipient ${recipient} does not receive ${format.documentTypeId} over Peppol AS4, nor a format the gateway can convert it to: ${found.message}`,
              recipient,
            );
          case 'smp-unreachable':
            return refused(
              'lookup',
              'SMP_UNREACHABLE',
              `The recipient's Peppol registration could not be read: ${found.message}`,
              recipient,
              true,
            );
          case 'certificate-problem':
            return refused(
              'lookup',
              'CERTIFICATE_PROBLEM',
              `The recipient's Peppol registration does not check out: ${found.message}`,
              recipient,
            );
          case 'invalid-identifier':
            return refused('recipient', 'ENDPOINT_INVALID', `Not sent: ${found.message}`, recipient);
        }
      }
      const endpoint = found.result.endpoint;
      return {
        kind: 'found',
        route: {
          sender: { ...routing.sender },
          receiver: { ...routing.receiver },
          countryC1: routing.countryC1,
          documentType: { ...found.documentType },
          process: { ...found.process },
          smpUrl: found.smpUrl,
          endpointUrl: endpoint.url,
          receiverCertificate: endpoint.certificate.raw.toString('base64'),
          ...(transform ? { transform } : {}),
        },
      };
    },

    /**
     * One delivery attempt: SBDH + AS4 message with the document's stable ids and the first attempt's timestamp (so
     * a resend is the same message), POSTed and classified. The attempt and its outcome go on the record under the key
     * `send-attempt-<n>`. What the peer does is a result; only our own infrastructure failures throw.
     */
    async sendPeppol(input: SendPeppolInput): Promise<SendPeppolOutcome> {
      const sender = deps.peppolSender;
      if (!sender || 'unavailable' in sender) {
        // Only reachable when workers differ in configuration (this one resolved nowhere): another worker may send it.
        throw new GatewayError(
          'DEPENDENCY_UNAVAILABLE',
          `Peppol sending is not configured on this worker: ${sender?.unavailable ?? 'no Peppol sender'}`,
          { retryable: true },
        );
      }
      const { route } = input;
      const loaded = await load(input, false);
      const bytes = route.transform
        ? (await convertForRecipient(loaded.bytes, route.transform.targetFormat, deps.transform)).xml
        : loaded.bytes;
      const firstAttemptAt = new Date(input.firstAttemptAt);
      const ids = stableMessageIds(`${input.tenantId}:${input.documentId}`);
      const header = {
        sender: route.sender,
        receiver: route.receiver,
        documentType: route.documentType,
        process: route.process,
      };
      const sbd = buildSbd({
        ...header,
        countryC1: route.countryC1,
        // The same instance identifier and creation time on every attempt: a resend carries the same SBD.
        instanceIdentifier: ids.conversationId,
        creationDateAndTime: firstAttemptAt,
        payload: { xml: bytes },
      });
      const receiverCertificate = new X509Certificate(Buffer.from(route.receiverCertificate, 'base64'));
      const message = buildPeppolMessage({
        sbd: sbd.xml,
        header,
        signer: sender.keys.signing(),
        receiverCertificate,
        timestamp: firstAttemptAt,
        ...ids,
      });
      // The exchange can take up to the AS4 timeout; heartbeats keep a live attempt from being taken for a dead worker.
      const out = await whileBeating(() =>
        sendAs4Message(message, route.endpointUrl, {
          apCertificateAuthorities: sender.apCertificateAuthorities,
          receiverCertificate,
          ...(sender.revocation ? { revocation: sender.revocation } : {}),
          ...(sender.sendTimeoutMs ? { timeoutMs: sender.sendTimeoutMs } : {}),
        }),
      );
      const result: SendPeppolOutcome = {
        outcome: out.outcome,
        messageId: message.messageId,
        endpoint: route.endpointUrl,
        ...(out.httpStatus !== undefined ? { httpStatus: out.httpStatus } : {}),
        ...('reason' in out ? { reason: out.reason } : {}),
        ...(out.outcome === 'delivered' ? { receiptMessageId: out.receiptMessageId } : {}),
      };
      const status = out.httpStatus !== undefined ? `HTTP ${out.httpStatus}` : 'no HTTP answer';
      await deps.documents.appendHistory(input.tenantId, input.documentId, {
        state: DocumentState.Sending,
        key: sendAttemptKey(input.attempt),
        detail: `attempt ${input.attempt} to ${formatId(route.receiver)} at ${route.endpointUrl} (AS4 MessageId ${message.messageId}): ${out.outcome}, ${status}${result.reason ? `: ${result.reason}` : ''}`,
      });
      return result;
    },
  };
}
