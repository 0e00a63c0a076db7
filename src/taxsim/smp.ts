/**
 * The reference tax authority's own SMP: its participants receive the Tax Data Document (the TDD document type and
 * process of src/reporting/tdd) at its AS4 endpoint, with its AP certificate. Signed with the SMP key given, built
 * with the gateway's SMP documents (src/peppol/smp-documents), so the gateway's normal SML → SMP lookup finds it.
 */
import type { Request, Response, Router } from 'express';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  TRANSPORT_PROFILE_AS4_V2,
  documentTypeId,
  documentTypeIdEquals,
  participantIdEquals,
  parseDocumentTypeId,
  parseParticipantId,
  processId,
  type ParticipantId,
} from '../peppol/identifiers';
import type { KeyMaterial } from '../peppol/pki/key-material';
import { buildServiceGroupXml, buildServiceMetadataXml, signServiceMetadata } from '../peppol/smp-documents';
import { VIDA_TDD_DOCUMENT_TYPE_ID, VIDA_TDD_PROCESS_ID } from '../reporting/tdd';

/** `busdox-docid-qns::…` / `cenbii-procid-ubl::…` with or without the scheme. */
function withoutScheme(id: string, scheme: string): string {
  return id.startsWith(`${scheme}::`) ? id.slice(scheme.length + 2) : id;
}

export const TDD_DOCUMENT_TYPE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  withoutScheme(VIDA_TDD_DOCUMENT_TYPE_ID, DOCTYPE_SCHEME_BUSDOX),
);
export const TDD_PROCESS = processId(PROCESS_SCHEME, withoutScheme(VIDA_TDD_PROCESS_ID, PROCESS_SCHEME));

export interface TaxsimSmpOptions {
  /** Base URL the SMP is published under (what the SML records point at), e.g. `http://127.0.0.1:8090/smp`. */
  baseUrl: string;
  signer: KeyMaterial;
  participants: readonly ParticipantId[];
  as4Url: string;
  /** The AP certificate the endpoint publishes (encryption and Seat ID). */
  apCertificate: KeyMaterial['certificate'];
}

/** GET /smp/{participant} (service group) and GET /smp/{participant}/services/{documentType} (signed metadata). */
export function registerSmpRoutes(router: Router, options: TaxsimSmpOptions): void {
  const served = (raw: string): ParticipantId | undefined => {
    try {
      const p = parseParticipantId(raw);
      return options.participants.find((q) => participantIdEquals(p, q));
    } catch {
      return undefined;
    }
  };
  const xml = (res: Response, body: string) => res.status(200).type('application/xml').send(body);
  const notFound = (res: Response, what: string) => res.status(404).type('text/plain').send(`${what} not found`);

  router.get('/smp/:participant', (req: Request, res: Response) => {
    const p = served(String(req.params['participant']));
    if (!p) return void notFound(res, 'participant');
    xml(res, buildServiceGroupXml(options.baseUrl, p, [TDD_DOCUMENT_TYPE]));
  });

  router.get('/smp/:participant/services/:documentType', (req: Request, res: Response) => {
    const p = served(String(req.params['participant']));
    if (!p) return void notFound(res, 'participant');
    let requested;
    try {
      requested = parseDocumentTypeId(String(req.params['documentType']));
    } catch {
      return void notFound(res, 'document type');
    }
    if (!documentTypeIdEquals(requested, TDD_DOCUMENT_TYPE)) return void notFound(res, 'document type');
    const metadata = buildServiceMetadataXml(p, TDD_DOCUMENT_TYPE, [
      {
        process: TDD_PROCESS,
        endpoints: [
          {
            transportProfile: TRANSPORT_PROFILE_AS4_V2,
            url: options.as4Url,
            certificate: options.apCertificate,
            serviceDescription: 'Invoice Gateway taxsim (reference tax authority, for tests)',
          },
        ],
      },
    ]);
    xml(res, signServiceMetadata(metadata, options.signer));
  });
}
