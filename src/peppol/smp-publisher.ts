/**
 * Our own SMP's answers: the service group of one of our participants and its signed service metadata per document
 * type, every endpoint being our AS4 receiver with our access point certificate (Peppol SMP 1.x, the documents of
 * smp-documents.ts). Pure apart from signing: where the data comes from is the caller's business.
 */
import type { X509Certificate } from 'node:crypto';
import { PeppolError } from './peppol-error';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  TRANSPORT_PROFILE_AS4_V2,
  documentTypeId,
  documentTypeIdEquals,
  formatId,
  processId,
  spidOfSeatId,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from './identifiers';
import { commonNameOf } from './pki/certificates';
import type { KeyMaterial } from './pki/key-material';
import { buildServiceGroupXml, buildServiceMetadataXml, signServiceMetadata } from './smp-documents';

export const BIS3_INVOICE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
export const BIS3_CREDIT_NOTE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);
export const BILLING_PROCESS = processId(PROCESS_SCHEME, 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0');
export const MLS_DOCUMENT_TYPE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:ApplicationResponse-2::ApplicationResponse##urn:peppol:edec:mls:1.0::2.1',
);
export const MLS_PROCESS = processId(PROCESS_SCHEME, 'urn:peppol:edec:mls');

export interface PublishedService {
  documentType: DocumentTypeId;
  processes: ProcessId[];
}

export interface PublishedParticipant {
  participant: ParticipantId;
  services: PublishedService[];
}

export interface SmpPublisherOptions {
  /** External base URL of our SMP: the service group's references point there. */
  publicUrl: string;
  signer: KeyMaterial;
  /** Our AS4 receiver URL. */
  endpointUrl: string;
  /** Our access point certificates; during a rollover several, of which the newest valid one is published. */
  apCertificates: readonly X509Certificate[];
  technicalContactUrl?: string;
  serviceDescription?: string;
  now?: () => Date;
  /** Signed answers kept (the SMP is public; an RSA signature per request would be cheap to abuse). Default 1000. */
  cacheSize?: number;
}

/** Of `certs`, the one valid at `at` that was issued last; undefined when none is valid. */
export function currentCertificate(certs: readonly X509Certificate[], at: Date): X509Certificate | undefined {
  return certs
    .filter((c) => new Date(c.validFrom) <= at && at <= new Date(c.validTo))
    .reduce<X509Certificate | undefined>(
      (best, c) => (!best || new Date(c.validFrom) > new Date(best.validFrom) ? c : best),
      undefined,
    );
}

export class SmpPublisher {
  private readonly now: () => Date;
  /** Insertion-ordered: the oldest entry is evicted first. Keys hold everything that goes into the document. */
  private readonly signed = new Map<string, string>();

  constructor(private readonly options: SmpPublisherOptions) {
    if (options.apCertificates.length === 0) throw new Error('SmpPublisher needs the access point certificate');
    this.now = options.now ?? (() => new Date());
  }

  get publicUrl(): string {
    return this.options.publicUrl.replace(/\/+$/, '');
  }

  get endpointUrl(): string {
    return this.options.endpointUrl;
  }

  /**
   * Our service provider id (`0242:` + the Seat ID's digits), which we serve for MLS: undefined when the published AP
   * certificate's CN is not a Seat ID (or no certificate is valid now).
   */
  serviceProviderId(): ParticipantId | undefined {
    try {
      const cn = commonNameOf(this.apCertificate());
      return cn ? spidOfSeatId(cn) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The AP certificate published now; a clear error when every configured one is outside its validity. */
  apCertificate(): X509Certificate {
    const at = this.now();
    const cert = currentCertificate(this.options.apCertificates, at);
    if (!cert) {
      throw new PeppolError(
        'INTERNAL',
        'certificate-invalid',
        `no configured access point certificate is valid at ${at.toISOString()}; our SMP cannot publish an endpoint`,
        {
          retryable: false,
        },
      );
    }
    return cert;
  }

  serviceGroupXml(p: PublishedParticipant): string {
    return buildServiceGroupXml(
      this.publicUrl,
      p.participant,
      p.services.map((s) => s.documentType),
    );
  }

  /** Signed service metadata of one document type, or undefined when the participant does not receive it. */
  serviceMetadataXml(p: PublishedParticipant, documentType: DocumentTypeId): string | undefined {
    const service = p.services.find((s) => documentTypeIdEquals(s.documentType, documentType));
    if (!service) return undefined;
    const certificate = this.apCertificate();
    const key = [
      formatId(p.participant),
      formatId(service.documentType),
      ...service.processes.map(formatId),
      certificate.fingerprint256,
    ].join('\n');
    const hit = this.signed.get(key);
    if (hit !== undefined) return hit;
    const endpoint = {
      transportProfile: TRANSPORT_PROFILE_AS4_V2,
      url: this.options.endpointUrl,
      certificate,
      serviceDescription: this.options.serviceDescription ?? 'Invoice Gateway access point',
      technicalContactUrl: this.options.technicalContactUrl ?? '',
    };
    const xml = buildServiceMetadataXml(
      p.participant,
      service.documentType,
      service.processes.map((process) => ({ process, endpoints: [endpoint] })),
    );
    const out = signServiceMetadata(xml, this.options.signer);
    this.signed.set(key, out);
    if (this.signed.size > (this.options.cacheSize ?? 1000))
      this.signed.delete(this.signed.keys().next().value as string);
    return out;
  }
}
