import { Readable } from 'node:stream';
import { readBytes, whileBeating } from '../documents/loader';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  documentTypeId,
  processId,
  spidOfSeatId,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from '../peppol/identifiers';
import { peppolHookMlsTypes } from '../peppol/mls';
import type { RecipientLookup } from '../peppol/recipient-lookup';
import { recipientAlternatives } from '../transform/recipient';
import type {
  PeppolIdentifier,
  PeppolRoute,
  ResolveRecipientInput,
  ResolveRecipientOutcome,
} from '../../workflows/contracts/send-invoice';
import { conversionSource } from './conversion-source';
import type { PeppolSender, SendInvoiceDeps } from './ports';
import { checkSender } from './sender-check';
import { loadConfig } from '../config/load-config';
import { loadCodeLists, type CodeLists } from '../peppol/network-rules/code-lists';
import { networkRulesRefusal } from './network-rules-check';

let defaultRulesDir: string | undefined;

/**
 * The sender's code lists (the worker's composition gives them), else those of the process's rules cache (the
 * validation packs' cache), its directory read from the environment once, not on every send.
 */
function codeListsOf(sender: PeppolSender): CodeLists {
  if (sender.codeLists) return sender.codeLists();
  defaultRulesDir ??= loadConfig(process.env).validation.rulesDir;
  return loadCodeLists(defaultRulesDir);
}

const refused = (
  stage: 'configuration' | 'sender' | 'recipient' | 'lookup',
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

type FindEndpoint = (
  types: DocumentTypeId[],
  process: ProcessId | undefined,
) => ReturnType<RecipientLookup['findEndpoint']>;

/**
 * The transform step: the first conversion of the document (in recipientAlternatives' order) that passes the
 * official validation of its format and that the recipient's SMP lists, stored once for every send attempt;
 * `converted: 0` when the gateway could make no Peppol format of the document at all.
 */
async function findConversion(
  deps: SendInvoiceDeps,
  input: ResolveRecipientInput,
  ownDocumentTypeId: string,
  findEndpoint: FindEndpoint,
  addresses: { sender: PeppolIdentifier; receiver: PeppolIdentifier },
) {
  // A Factur-X / ZUGFeRD PDF goes in as it is: the conversion reads its embedded XML.
  const upload = await readBytes(deps, input.facts.blobId);
  // A format without a Peppol document type may lack the addresses every Peppol format requires.
  const bytes = input.format.documentTypeId ? upload : await conversionSource(upload, addresses, deps.transform);
  let converted = 0;
  for await (const alt of recipientAlternatives(bytes, ownDocumentTypeId, deps.transform)) {
    converted++;
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
      return { found, transform: undefined, converted };
    }
    const validation = await deps.validator.validate(alt.converted.xml);
    if (validation.assertions.some((a) => a.flag === 'error')) continue;
    const { xml, report } = alt.converted;
    // Computed once per document: every send attempt reads these bytes instead of converting again.
    const blob = await deps.blobs.put(Readable.from([xml]), {
      limit: xml.length,
      filename: `${input.documentId}.${alt.targetFormat}.xml`,
      contentType: 'application/xml',
      metadata: { tenantId: input.tenantId, documentId: input.documentId, convertedFrom: input.facts.blobId },
    });
    const transform: NonNullable<PeppolRoute['transform']> = {
      targetFormat: alt.targetFormat,
      targetName: report.target.name,
      notCarried: report.notCarried.length + report.unmapped.length,
      blobId: blob.blobId,
    };
    return { found, transform, converted };
  }
  return { found: undefined, transform: undefined, converted };
}

/**
 * Recipient resolution with route choice: the invoice's Peppol addresses (read by the document check) and the
 * receiver's checked AS4 endpoint for the document's own document type and process; when the SMP does not list it,
 * the conversion fallback. Every answer is data: only database and blob store failures throw.
 */
export async function resolveRecipient(
  deps: SendInvoiceDeps,
  input: ResolveRecipientInput,
): Promise<ResolveRecipientOutcome> {
  const sender = deps.peppolSender;
  if ('unavailable' in sender) {
    return refused('configuration', 'PEPPOL_NOT_CONFIGURED', `Peppol sending is not configured: ${sender.unavailable}`);
  }
  const { format, facts } = input;
  const routing = facts.routing;
  if (!routing && !format.documentTypeId) {
    return refused(
      'recipient',
      'NO_DOCUMENT_TYPE',
      `Not sent over Peppol: the format ${format.id} has no Peppol document type identifier, and the gateway ` +
        'cannot convert it to one that has',
    );
  }
  if (!routing) return refused('recipient', 'NOT_AN_INVOICE', 'Not sent: the document has no routing facts');
  if (!routing.ok) return refused('recipient', routing.code, `Not sent: ${routing.message}`);
  const recipient = routing.receiver.value;
  const senderRefusal = await checkSender(deps, input.tenantId, facts, routing.sender);
  if (senderRefusal) return refused('sender', senderRefusal.reasonCode, senderRefusal.message, recipient);
  const receiver: ParticipantId = routing.receiver;
  // The Peppol code lists by date: a recipient under a removed scheme is not looked up at all.
  const lists = codeListsOf(sender);
  const at = sender.now?.() ?? new Date();
  const schemeRefusal = networkRulesRefusal(lists, receiver, undefined, at);
  if (schemeRefusal) return refused('recipient', schemeRefusal.reasonCode, schemeRefusal.message, recipient);
  // The upload's own document type; none for a PDF (what goes out is its XML, converted) or a format without one.
  let own: { documentType: DocumentTypeId; process: ProcessId | undefined } | undefined;
  if (!facts.pdf && format.documentTypeId) {
    try {
      own = {
        documentType: documentTypeId(DOCTYPE_SCHEME_BUSDOX, format.documentTypeId),
        process: format.profileId ? processId(PROCESS_SCHEME, format.profileId) : undefined,
      };
    } catch (e) {
      return refused('recipient', 'INVALID_IDENTIFIER', `Not sent: ${(e as Error).message}`, recipient);
    }
  }
  // DNS and SMP requests are each bounded by PEPPOL_LOOKUP_TIMEOUT_MS, but several of them can outlast a heartbeat.
  const find =
    (s: PeppolSender): FindEndpoint =>
    (types, p) =>
      whileBeating(deps.heartbeat, () => s.lookup.findEndpoint(receiver, types, p));
  let found = own ? await find(sender)([own.documentType], own.process) : undefined;
  let transform: PeppolRoute['transform'];
  if (!found || (!found.ok && found.failure === 'document-type-not-supported')) {
    // A format of the document's content that the recipient does take, if there is one (for a PDF, its own XML's
    // type too: what goes out is the XML, never the PDF).
    const ownType = own ? (format.documentTypeId ?? '') : '';
    // Conversions and their validation run on the pool's threads: a large invoice's can outlast a heartbeat.
    const conversion = await whileBeating(deps.heartbeat, () =>
      findConversion(deps, input, ownType, find(sender), routing),
    );
    if (conversion.found) {
      found = conversion.found;
      transform = conversion.transform;
    } else if (!own && !facts.pdf && conversion.converted === 0) {
      return refused(
        'recipient',
        'CANNOT_CONVERT',
        `Not sent over Peppol: the format ${format.id} has no Peppol document type identifier, and the gateway ` +
          'cannot convert this document to any format sent over Peppol (the conversion of its content fails)',
        recipient,
      );
    }
  }
  if (!found) {
    return refused(
      'lookup',
      'DOCUMENT_TYPE_NOT_SUPPORTED',
      `The recipient ${recipient} does not receive over Peppol AS4 any format the gateway can make of this ` +
        `${format.name}${facts.pdf ? ' PDF' : ''}`,
      recipient,
    );
  }
  if (!found.ok) {
    switch (found.failure) {
      case 'participant-unknown':
        return refused(
          'lookup',
          'PARTICIPANT_UNKNOWN',
          `The recipient ${recipient} is not reachable on Peppol (${found.message}); ` +
            'the e-mail fallback is not available in this version',
          recipient,
        );
      case 'document-type-not-supported':
        return refused(
          'lookup',
          'DOCUMENT_TYPE_NOT_SUPPORTED',
          `The recipient ${recipient} does not receive ${format.documentTypeId} over Peppol AS4, ` +
            `nor a format the gateway can convert it to: ${found.message}`,
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
  const typeRefusal = networkRulesRefusal(lists, receiver, found.documentType, at);
  if (typeRefusal) return refused('recipient', typeRefusal.reasonCode, typeRefusal.message, recipient);
  const endpoint = found.result.endpoint;
  const mls = await mlsScopes(deps, sender, input.tenantId, facts.partyId);
  return {
    kind: 'found',
    route: {
      ...mls,
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
}

/**
 * What our SBDH asks of the receiving access point about message-level status: MLS_TO our own service provider id
 * (`0242:` + our Seat ID's digits, where our SMP publishes MLS receiving), and MLS_TYPE the sending party's Peppol hook
 * `mlsType`, else the environment's, else none (the receiver then applies the default, FAILURE_ONLY). Fixed with the
 * route, so every attempt carries the same SBD. An AP certificate whose CN is not a Seat ID gives no MLS_TO: there is
 * no service provider id to name (the receiver falls back to the same CN).
 */
async function mlsScopes(
  deps: SendInvoiceDeps,
  sender: PeppolSender,
  tenantId: string,
  partyId: string,
): Promise<Pick<PeppolRoute, 'mlsTo' | 'mlsType'>> {
  let mlsTo: PeppolIdentifier | undefined;
  try {
    mlsTo = { ...spidOfSeatId(sender.keys.seatId) };
  } catch {
    mlsTo = undefined;
  }
  const mlsType = peppolHookMlsTypes(await deps.hooks.listForRouting(tenantId, partyId), partyId).effective;
  return { ...(mlsTo ? { mlsTo } : {}), ...(mlsType ? { mlsType } : {}) };
}
