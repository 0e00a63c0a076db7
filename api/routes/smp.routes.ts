import type { Request, Response, Router } from 'express';
import { GatewayError } from '../../src/core/gateway-error';
import {
  PARTICIPANT_SCHEME,
  formatId,
  parseDocumentTypeId,
  parseParticipantId,
  parseProcessId,
  participantIdEquals,
  type DocumentTypeId,
  type ParticipantId,
} from '../../src/peppol/identifiers';
import {
  MLS_DOCUMENT_TYPE,
  MLS_PROCESS,
  type PublishedParticipant,
  type SmpPublisher,
} from '../../src/peppol/smp-publisher';
import { isUnavailable, type PeppolApiServices } from '../../src/peppol/api-services';
import { publishedAt } from '../../src/peppol/network-rules/smp-rules';

/**
 * Our SMP (Peppol SMP 1.x, busdox): unauthenticated, as every SMP.
 *
 *   GET {base}/{participant}                      → ServiceGroup of a registered party
 *   GET {base}/{participant}/services/{doctype}   → SignedServiceMetadata (our AS4 endpoint and AP certificate)
 *
 * Besides our registered parties it serves our own service provider id (`0242:<Seat ID digits>`, from the AP
 * certificate's CN) for MLS, the address peers send message-level status to by default.
 */
export interface SmpRouteDeps {
  /** e.g. `/smp`; routes are registered with it so the served paths are the real ones. */
  basePath: string;
  peppol?: PeppolApiServices | undefined;
}

function notFound(what: string): GatewayError {
  return new GatewayError('NOT_FOUND', `${what} is not registered in this SMP`);
}

function idParam<T>(req: Request, name: string, parse: (s: string) => T, what: string): T {
  const raw = String(req.params[name] ?? '');
  try {
    return parse(raw);
  } catch (e) {
    throw new GatewayError(
      'BAD_REQUEST',
      `"${raw.slice(0, 200)}" is not a ${what} identifier (scheme::value, percent-encoded): ${(e as Error).message}`,
    );
  }
}

export function registerSmpRoutes(router: Router, deps: SmpRouteDeps): void {
  const base = deps.basePath.replace(/\/+$/, '');
  const publisher = (): SmpPublisher => {
    if (!deps.peppol)
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'The Peppol layer is not configured in this API process');
    const smp = deps.peppol.smp;
    if (isUnavailable(smp))
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', `Our SMP is not configured: ${smp.unavailable}`);
    return smp;
  };

  async function published(participant: ParticipantId): Promise<PublishedParticipant> {
    const smp = publisher();
    if (participant.scheme !== PARTICIPANT_SCHEME) throw notFound(formatId(participant));
    const spid = smp.serviceProviderId();
    if (spid && participantIdEquals(spid, participant))
      return { participant: spid, services: [{ documentType: MLS_DOCUMENT_TYPE, processes: [MLS_PROCESS] }] };
    const record = await (deps.peppol as PeppolApiServices).directory.findByParticipantValue(participant.value);
    if (!record || !record.registered) throw notFound(formatId(participant));
    const rules = (deps.peppol as PeppolApiServices).networkRules;
    // The code lists by date: nothing under a removed scheme, no removed document type; 0208 serves both billing types.
    const served = publishedAt(
      {
        participant,
        // Written through the API, which checked every identifier.
        services: record.services.map((s) => ({
          documentType: parseDocumentTypeId(s.documentTypeId),
          processes: s.processIds.map(parseProcessId),
        })),
      },
      rules.codeLists(),
      rules.now(),
    );
    if (!served) throw notFound(formatId(participant));
    return served;
  }

  const xml = (res: Response, body: string) => {
    res.status(200).type('application/xml').send(body);
  };

  router.get(`${base}/:participantId`, async (req: Request, res: Response) => {
    const participant = idParam(req, 'participantId', parseParticipantId, 'participant');
    const p = await published(participant);
    xml(res, publisher().serviceGroupXml(p));
  });

  router.get(`${base}/:participantId/services/:documentTypeId`, async (req: Request, res: Response) => {
    const participant = idParam(req, 'participantId', parseParticipantId, 'participant');
    const documentType: DocumentTypeId = idParam(req, 'documentTypeId', parseDocumentTypeId, 'document type');
    const p = await published(participant);
    const signed = publisher().serviceMetadataXml(p, documentType);
    if (!signed) throw notFound(`${formatId(documentType)} for ${formatId(participant)}`);
    xml(res, signed);
  });
}
