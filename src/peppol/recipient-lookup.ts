/**
 * Can a recipient be reached over Peppol, and where: SML (U-NAPTR through DNS) → SMP → signed service metadata →
 * checked AS4 endpoint. Every failure ends in one of a few categories callers can act on, with the precise cause kept
 * in the message:
 *
 *   participant-unknown          not in the SML, or its SMP does not know it
 *   document-type-not-supported  known, but not for this document type / process / AS4 (or the endpoint is inactive)
 *   smp-unreachable              DNS or SMP down or answering nonsense (worth retrying later)
 *   certificate-problem          the SMP signature or a certificate does not check out
 *   invalid-identifier           not a Peppol participant identifier
 */
import { isGatewayError } from '../core/gateway-error';
import {
  TRANSPORT_PROFILE_AS4_V2,
  documentTypeIdEquals,
  documentTypeParts,
  formatId,
  parseParticipantId,
  peppolParticipant,
  processIdEquals,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from './identifiers';
import { PeppolError, type PeppolErrorReason } from './peppol-error';
import { lookupSmp, type DnsResolverLike } from './sml';
import type { EndpointLookupResult, SignedServiceMetadata, SmpClient } from './smp-client';
import { BILLING_PROCESS, BIS3_CREDIT_NOTE, BIS3_INVOICE } from './smp-publisher';

export type LookupFailure =
  | 'participant-unknown'
  | 'document-type-not-supported'
  | 'smp-unreachable'
  | 'certificate-problem'
  | 'invalid-identifier';

const CATEGORY: Record<string, LookupFailure> = {
  'invalid-identifier': 'invalid-identifier',
  'participant-not-registered': 'participant-unknown',
  'no-matching-smp-service': 'participant-unknown',
  'participant-unknown': 'participant-unknown',
  'document-type-not-supported': 'document-type-not-supported',
  'process-not-supported': 'document-type-not-supported',
  'transport-profile-not-supported': 'document-type-not-supported',
  'endpoint-not-active': 'document-type-not-supported',
  'dns-failure': 'smp-unreachable',
  'smp-unreachable': 'smp-unreachable',
  'smp-response-invalid': 'smp-unreachable',
  'smp-redirect-invalid': 'smp-unreachable',
  'smp-not-https': 'certificate-problem',
  'smp-signature-invalid': 'certificate-problem',
  'smp-certificate-untrusted': 'certificate-problem',
  'endpoint-certificate-invalid': 'certificate-problem',
  'certificate-invalid': 'certificate-problem',
};

export function failureCategory(reason: PeppolErrorReason): LookupFailure {
  return CATEGORY[reason] ?? 'smp-unreachable';
}

export interface LookupRefusal {
  ok: false;
  failure: LookupFailure;
  /** The precise PeppolError reason. */
  reason: PeppolErrorReason;
  message: string;
}

export interface RecipientEndpoint {
  ok: true;
  participant: ParticipantId;
  smpUrl: string;
  documentType: DocumentTypeId;
  process: ProcessId;
  result: EndpointLookupResult;
}

export interface DeliveryOption {
  participant: ParticipantId;
  documentType: DocumentTypeId;
  process: ProcessId;
  transportProfile: string;
  url: string;
  /** The receiving AP certificate, base64 DER as the SMP publishes it. */
  certificateBase64: string;
}

export interface RecipientLookupOptions {
  /** SML DNS zone. */
  zone: string;
  resolver: DnsResolverLike;
  client: SmpClient;
  legacyCnameFallback?: boolean;
}

/** `0106:123` or `iso6523-actorid-upis::0106:123` → participant; PeppolError(invalid-identifier) otherwise. */
export function participantOf(id: string): ParticipantId {
  const trimmed = id.trim();
  return trimmed.includes('::') ? parseParticipantId(trimmed) : peppolParticipant(trimmed);
}

function refusal(e: unknown): LookupRefusal {
  if (e instanceof PeppolError)
    return { ok: false, failure: failureCategory(e.reason), reason: e.reason, message: e.message };
  // Anything else is a fault of ours or of the network stack; it is reported, never thrown past the caller's loop.
  const message = isGatewayError(e) ? e.message : `lookup failed: ${(e as Error).message}`;
  return { ok: false, failure: 'smp-unreachable', reason: 'smp-unreachable', message };
}

/** Invoice family membership and rank (lower = better for us to send): BIS Billing 3 first, CII last. */
export function familyRank(documentType: DocumentTypeId, isCredit: boolean): number | undefined {
  const parts = documentTypeParts(documentType.value);
  const local = parts?.localName;
  if (!parts || !local) return undefined;
  const ubl = isCredit ? local === 'CreditNote' : local === 'Invoice';
  const cii = local === 'CrossIndustryInvoice';
  if (!ubl && !cii) return undefined;
  if (documentTypeIdEquals(documentType, isCredit ? BIS3_CREDIT_NOTE : BIS3_INVOICE)) return 0;
  if (ubl && parts.customizationId.startsWith('urn:cen.eu:en16931:2017')) return 1;
  if (ubl) return 2;
  return 3;
}

/** The processes worth trying, best first: the billing process, then the others in SMP order. */
function rankProcesses(metadata: SignedServiceMetadata): ProcessId[] {
  const all = metadata.processes.map((p) => p.process);
  return [
    ...all.filter((p) => processIdEquals(p, BILLING_PROCESS)),
    ...all.filter((p) => !processIdEquals(p, BILLING_PROCESS)),
  ];
}

export class RecipientLookup {
  constructor(private readonly options: RecipientLookupOptions) {}

  get zone(): string {
    return this.options.zone;
  }

  private async smpUrlOf(participant: ParticipantId): Promise<string> {
    const sml = await lookupSmp(participant, {
      zone: this.options.zone,
      resolver: this.options.resolver,
      ...(this.options.legacyCnameFallback ? { legacyCnameFallback: true } : {}),
    });
    return sml.smpUrl;
  }

  /** The checked endpoint of `process` (or the best process) out of verified metadata. */
  private async endpointOf(metadata: SignedServiceMetadata, process?: ProcessId): Promise<EndpointLookupResult> {
    const candidates = process ? [process] : rankProcesses(metadata);
    let last: unknown = new PeppolError(
      'UNPROCESSABLE',
      'process-not-supported',
      `${formatId(metadata.participant)} lists no process for ${formatId(metadata.documentType)}`,
    );
    for (const p of candidates) {
      try {
        return await this.options.client.selectEndpoint(metadata, p, TRANSPORT_PROFILE_AS4_V2);
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }

  /**
   * Where `id` receives the first of `documentTypes` (in preference order) that it supports over Peppol AS4. Only
   * "document type not supported" moves on to the next type; any other failure is the answer.
   */
  async findEndpoint(
    id: string | ParticipantId,
    documentTypes: readonly DocumentTypeId[],
    process?: ProcessId,
  ): Promise<RecipientEndpoint | LookupRefusal> {
    let participant: ParticipantId;
    try {
      participant = typeof id === 'string' ? participantOf(id) : id;
    } catch (e) {
      return refusal(e);
    }
    let smpUrl: string;
    try {
      smpUrl = await this.smpUrlOf(participant);
    } catch (e) {
      return refusal(e);
    }
    let first: LookupRefusal | undefined;
    for (const documentType of documentTypes) {
      try {
        const metadata = await this.options.client.getServiceMetadata(smpUrl, participant, documentType);
        const result = await this.endpointOf(metadata, process);
        return { ok: true, participant, smpUrl, documentType, process: result.process, result };
      } catch (e) {
        const r = refusal(e);
        // "Not this document type" is the one outcome where trying the next type helps.
        if (r.reason !== 'document-type-not-supported') return r;
        first ??= r;
      }
    }
    return (
      first ?? {
        ok: false,
        failure: 'document-type-not-supported',
        reason: 'document-type-not-supported',
        message: `no document type was asked for ${formatId(participant)}`,
      }
    );
  }

  /**
   * Every AS4 endpoint through which `id` receives a document of the invoice (or credit note) family, best first:
   * BIS Billing 3, other EN 16931 UBL, other UBL, CII; within a rank the SMP's order. A refusal when there is none.
   */
  async deliveryOptions(id: string, isCredit: boolean): Promise<DeliveryOption[] | LookupRefusal> {
    let participant: ParticipantId;
    let smpUrl: string;
    try {
      participant = participantOf(id);
      smpUrl = await this.smpUrlOf(participant);
    } catch (e) {
      return refusal(e);
    }
    let group;
    try {
      group = await this.options.client.getServiceGroup(smpUrl, participant);
    } catch (e) {
      return refusal(e);
    }
    const ranked = group.documentTypes
      .map((d, i) => ({ d, i, rank: familyRank(d, isCredit) }))
      .filter((x): x is { d: DocumentTypeId; i: number; rank: number } => x.rank !== undefined)
      .sort((a, b) => a.rank - b.rank || a.i - b.i);
    if (ranked.length === 0) {
      return {
        ok: false,
        failure: 'document-type-not-supported',
        reason: 'document-type-not-supported',
        message:
          `${formatId(participant)} receives no ${isCredit ? 'credit note' : 'invoice'} document type ` +
          `(its SMP lists ${group.documentTypes.length} document type(s))`,
      };
    }
    const options: DeliveryOption[] = [];
    let firstRefusal: LookupRefusal | undefined;
    for (const { d } of ranked) {
      try {
        const metadata = await this.options.client.getServiceMetadata(smpUrl, participant, d);
        for (const process of rankProcesses(metadata)) {
          try {
            const r = await this.options.client.selectEndpoint(metadata, process, TRANSPORT_PROFILE_AS4_V2);
            options.push({
              participant,
              documentType: d,
              process: r.process,
              transportProfile: r.endpoint.transportProfile,
              url: r.endpoint.url,
              certificateBase64: r.endpoint.certificate.raw.toString('base64'),
            });
          } catch (e) {
            firstRefusal ??= refusal(e);
          }
        }
      } catch (e) {
        firstRefusal ??= refusal(e);
      }
    }
    return options.length > 0 ? options : (firstRefusal as LookupRefusal);
  }
}

/** The document types a sender's invoice may go as, by preference: the one asked for, else BIS Billing 3. */
export function invoiceDocumentTypes(isCredit: boolean): DocumentTypeId[] {
  return [isCredit ? BIS3_CREDIT_NOTE : BIS3_INVOICE];
}
