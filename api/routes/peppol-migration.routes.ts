import { randomInt } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { GatewayError } from '../../src/core/gateway-error';
import { isUnavailable, type PeppolApiServices } from '../../src/peppol/api-services';
import { formatId, type ParticipantId } from '../../src/peppol/identifiers';
import { SmlFaultError, createMigrationKey, isValidMigrationKey } from '../../src/peppol/sml-client';
import type { SmlMigration } from '../../src/peppol/sml-registrar';
import type { DirectoryRepository } from '../../src/storage/directory.repository';
import type { ServiceEntry } from '../../src/storage/peppol/peppol-directory.repository';
import { partyOf, requireParty } from '../access';
import { jsonBody } from '../request';
import { DEFAULT_SERVICES, invalid, objectBody, partyParticipant, readBoolean, readServices } from './peppol.routes';

/**
 * Participant migration between service providers (docs/decisions.md "Participant migration"): the provider a party
 * leaves prepares a migration key in the SML and hands it to the party; the provider it joins publishes the party in
 * its SMP first and then moves the SML entry with that key, so every lookup finds a serving SMP. The leaving provider
 * keeps serving until the switch and deregisters the party afterwards (PUT …/config/party/{partyId} registered=false,
 * which then leaves the SML entry, no longer ours, alone).
 */
export interface PeppolMigrationRouteDeps {
  directory: DirectoryRepository;
  peppol?: PeppolApiServices | undefined;
}

/** A refusal of the SML as an API answer: the SML's verdict on the key is the caller's to fix (422). */
function smlRefusal(e: unknown, what: string): GatewayError {
  if (e instanceof SmlFaultError) {
    if (e.fault === 'BadRequest' || e.fault === 'NotFound')
      return new GatewayError('UNPROCESSABLE', `The SML refused ${what}: ${e.faultMessage || e.fault}`, {
        cause: e,
        details: { smlFault: e.fault },
      });
    return new GatewayError('DEPENDENCY_UNAVAILABLE', `The SML refused ${what}: ${e.fault} ${e.faultMessage}`, {
      cause: e,
      details: { smlFault: e.fault },
    });
  }
  if (e instanceof GatewayError) return e;
  return new GatewayError('DEPENDENCY_UNAVAILABLE', `${what} failed: ${(e as Error).message}`, { cause: e });
}

export function registerPeppolMigrationRoutes(router: Router, deps: PeppolMigrationRouteDeps): void {
  const party = requireParty(deps.directory);
  const bodyJson = jsonBody('64kb', 'the body');
  const svc = (): PeppolApiServices => {
    if (!deps.peppol)
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'The Peppol layer is not configured in this API process');
    return deps.peppol;
  };
  const migrationOf = (s: PeppolApiServices): SmlMigration => {
    if (!s.registrar.migration)
      throw new GatewayError(
        'NOT_IMPLEMENTED',
        `Participant migration needs the SML's migration keys (PEPPOL_SML_REGISTRAR=sml); this gateway's SML ` +
          `registration is "${s.registrar.kind}"`,
      );
    return s.registrar.migration;
  };
  const view = (partyId: string, participant: ParticipantId, s: PeppolApiServices) => ({
    partyId,
    participantId: formatId(participant),
    smpUrl: s.settings.smpPublicUrl,
  });

  // Leaving us: a key for the next provider. Our SMP and the SML entry stay as they are until that provider migrates.
  router.post('/api/v1/peppol/:partyId/prepareToMigrate', party, async (_req: Request, res: Response) => {
    const p = partyOf(res);
    const s = svc();
    const participant = partyParticipant(p);
    const migration = migrationOf(s);
    const record = await s.directory.getParticipant(p.partyId);
    if (!record?.registered || record.smlState !== 'registered')
      throw new GatewayError(
        'CONFLICT',
        `${p.partyId} is not registered in the SML by this gateway (state ${record?.smlState ?? 'unregistered'}); ` +
          'only a registered participant can be migrated away',
      );
    const key = createMigrationKey(randomInt);
    const stored = await s.migrations.insert({ direction: 'outbound', tenantId: p.tenantId, partyId: p.partyId, key });
    try {
      await migration.prepareToMigrate(participant, key);
    } catch (e) {
      await s.migrations.remove(stored.id);
      throw smlRefusal(e, `the migration preparation of ${p.partyId}`);
    }
    res.json({
      ...view(p.partyId, participant, s),
      migrationKey: key,
      preparedOn: stored.createdOn.toISOString(),
      message:
        'Give this key to the new provider. This gateway keeps serving the party until the new provider has ' +
        'migrated it; then deregister it here (registered=false).',
    });
  });

  // Joining us with the previous provider's key.
  router.post('/api/v1/peppol/:partyId/migrate', party, bodyJson, async (req: Request, res: Response) => {
    const p = partyOf(res);
    const s = svc();
    const body = objectBody(req);
    const errors: { path: string; message: string }[] = [];
    const { migrationKey, documentTypes, reviews, ...rest } = body;
    for (const k of Object.keys(rest)) errors.push({ path: k, message: 'unknown field' });
    if (typeof migrationKey !== 'string' || !isValidMigrationKey(migrationKey))
      errors.push({
        path: 'migrationKey',
        message:
          'required: the key the previous provider prepared (8-24 characters: two each of upper-case, lower-case, ' +
          'digits and @#$%()[]{}*^_-!~|+=, no white space)',
      });
    const services = readServices(documentTypes, 'documentTypes', errors);
    const review = readBoolean(reviews, 'reviews', errors);
    if (services !== undefined && services.length === 0)
      errors.push({ path: 'documentTypes', message: 'a registered party receives at least one document type' });
    if (errors.length) throw invalid(errors);
    const key = migrationKey as string;
    const participant = partyParticipant(p);
    const migration = migrationOf(s);
    if (isUnavailable(s.smp))
      throw new GatewayError(
        'DEPENDENCY_UNAVAILABLE',
        `Our SMP is not configured, so ${p.partyId} cannot be taken over: ${s.smp.unavailable}`,
      );
    const previous = await s.directory.getParticipant(p.partyId);
    if (previous?.registered && previous.smlState === 'registered')
      throw new GatewayError('CONFLICT', `${p.partyId} is registered by this gateway already`);
    const tenant = await s.directory.getTenantConfig(p.tenantId);
    const chosen: ServiceEntry[] = services ?? previous?.services ?? tenant?.services ?? [...DEFAULT_SERVICES];
    const stored = await s.migrations.insert({ direction: 'inbound', tenantId: p.tenantId, partyId: p.partyId, key });

    // 1. Our SMP answers for the party before the SML sends anyone here.
    await s.directory.putParticipant({
      tenantId: p.tenantId,
      partyId: p.partyId,
      registered: true,
      services: chosen,
      reviews: review ?? previous?.reviews ?? tenant?.reviews ?? false,
    });
    await s.directory.setSmlState(p.partyId, 'pending');
    try {
      // Our service provider id (MLS go there) is served by the same SMP; registered before the switch.
      const spid = s.smp.serviceProviderId();
      if (spid) await s.registrar.register(spid, s.settings.smpPublicUrl);
      // 2. The SML entry moves to our SMP in one step.
      await migration.migrate(participant, key);
    } catch (e) {
      // Nothing moved: our SMP stops answering for the party again, and the key may be tried again.
      await s.directory.putParticipant({
        tenantId: p.tenantId,
        partyId: p.partyId,
        registered: previous?.registered ?? false,
        services: previous?.services ?? chosen,
        reviews: previous?.reviews ?? false,
      });
      await s.directory.setSmlState(p.partyId, previous?.smlState ?? 'unregistered', previous?.smlError ?? null);
      await s.migrations.remove(stored.id);
      throw smlRefusal(e, `the migration of ${p.partyId} to this gateway`);
    }
    const saved = await s.directory.setSmlState(p.partyId, 'registered');
    res.json({
      ...view(p.partyId, participant, s),
      registered: true,
      documentTypes: saved?.services ?? chosen,
      reviews: saved?.reviews ?? false,
      sml: {
        registrar: s.registrar.kind,
        state: saved?.smlState ?? 'registered',
        changedOn: saved?.smlChangedOn?.toISOString() ?? null,
      },
      migratedOn: stored.createdOn.toISOString(),
    });
  });
}
