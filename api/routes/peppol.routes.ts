import type { X509Certificate } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { principalOf } from '../../src/auth/authenticate';
import { GatewayError } from '../../src/core/gateway-error';
import { ChannelStatus, channelKey, chooseChannel, nextSendTopic, PEPPOL_FALLBACK } from '../../src/core/channels';
import { createFilterPredicate } from '../../src/webhooks/filter';
import { sendingEventFilter } from '../../src/sending/channels';
import {
  DOCTYPE_SCHEME_BUSDOX,
  PROCESS_SCHEME,
  icdOf,
  documentTypeId,
  formatId,
  parseDocumentTypeId,
  parseProcessId,
  processId,
  type DocumentTypeId,
  type ParticipantId,
} from '../../src/peppol/identifiers';
import { commonNameOf, fingerprintSha256 } from '../../src/peppol/pki/certificates';
import {
  participantOf,
  type LookupRefusal,
  type RecipientEndpoint,
  type RecipientLookup,
} from '../../src/peppol/recipient-lookup';
import { BILLING_PROCESS, BIS3_CREDIT_NOTE, BIS3_INVOICE, currentCertificate } from '../../src/peppol/smp-publisher';
import type { DirectoryRepository, PartyRecord } from '../../src/storage/directory.repository';
import type { HookRecord } from '../../src/storage/hooks/hook.repository';
import type { PeppolParticipantRecord, ServiceEntry } from '../../src/storage/peppol/peppol-directory.repository';
import { environmentTenant, partyOf, requireParty } from '../access';
import { isUnavailable, type PeppolApiServices } from '../../src/peppol/api-services';
import { registrationServices } from '../../src/peppol/network-rules/registration';
import { jsonBody, queryString } from '../request';

/**
 * The Peppol directory API (our SMP's data and SML registration, docs/decisions.md "Peppol layer") and recipient
 * lookups (spec 4.4, 4.5). Environment-level configuration is per tenant and needs a client_credentials token; party
 * configuration follows party reach (403 outside it), as every `{partyId}` route.
 */

export interface PeppolRouteDeps {
  directory: DirectoryRepository;
  peppol?: PeppolApiServices | undefined;
}

const MAX_SERVICES = 50;
const MAX_PROCESSES = 10;
const MAX_RECIPIENTS = 20;

/** The built-in default: BIS Billing 3 invoices and credit notes in the billing process. */
export const DEFAULT_SERVICES: readonly ServiceEntry[] = [
  { documentTypeId: formatId(BIS3_INVOICE), processIds: [formatId(BILLING_PROCESS)] },
  { documentTypeId: formatId(BIS3_CREDIT_NOTE), processIds: [formatId(BILLING_PROCESS)] },
];

function certificateInfo(c: X509Certificate) {
  return {
    subject: c.subject.split('\n').join(', '),
    issuer: c.issuer.split('\n').join(', '),
    commonName: commonNameOf(c) ?? null,
    serialNumber: c.serialNumber,
    notBefore: new Date(c.validFrom).toISOString(),
    notAfter: new Date(c.validTo).toISOString(),
    fingerprintSha256: fingerprintSha256(c),
  };
}

export function invalid(errors: { path: string; message: string }[]): GatewayError {
  return new GatewayError(
    'BAD_REQUEST',
    `Invalid Peppol configuration: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
    { details: { errors } },
  );
}

/** `scheme::value`, or a bare value in the default scheme. */
function docTypeOf(text: string): DocumentTypeId {
  return text.includes('::') && !text.startsWith('urn:')
    ? parseDocumentTypeId(text)
    : documentTypeId(DOCTYPE_SCHEME_BUSDOX, text);
}

/** Reads `documentTypes` of a request body into service entries (URI forms, checked), collecting every problem. */
export function readServices(
  value: unknown,
  path: string,
  errors: { path: string; message: string }[],
): ServiceEntry[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    errors.push({ path, message: 'must be an array of { documentTypeId, processIds }' });
    return undefined;
  }
  if (value.length > MAX_SERVICES) errors.push({ path, message: `at most ${MAX_SERVICES} document types` });
  const out: ServiceEntry[] = [];
  value.slice(0, MAX_SERVICES).forEach((item: unknown, i) => {
    const p = `${path}[${i}]`;
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      errors.push({ path: p, message: 'must be an object { documentTypeId, processIds }' });
      return;
    }
    const { documentTypeId: d, processIds: ps, ...rest } = item as Record<string, unknown>;
    for (const k of Object.keys(rest)) errors.push({ path: `${p}.${k}`, message: 'unknown field' });
    let doc: DocumentTypeId | undefined;
    if (typeof d !== 'string') errors.push({ path: `${p}.documentTypeId`, message: 'required string' });
    else {
      try {
        doc = docTypeOf(d.trim());
      } catch (e) {
        errors.push({ path: `${p}.documentTypeId`, message: (e as Error).message });
      }
    }
    const processes: string[] = [];
    const list = ps === undefined ? [formatId(BILLING_PROCESS)] : ps;
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_PROCESSES) {
      errors.push({
        path: `${p}.processIds`,
        message: `must be an array of 1 to ${MAX_PROCESSES} process identifiers`,
      });
    } else {
      list.forEach((x: unknown, j) => {
        if (typeof x !== 'string')
          return void errors.push({ path: `${p}.processIds[${j}]`, message: 'must be a string' });
        try {
          const proc = x.includes('::') ? parseProcessId(x.trim()) : processId(PROCESS_SCHEME, x.trim());
          const uri = formatId(proc);
          if (!processes.includes(uri)) processes.push(uri);
        } catch (e) {
          errors.push({ path: `${p}.processIds[${j}]`, message: (e as Error).message });
        }
      });
    }
    if (doc) {
      const uri = formatId(doc);
      if (out.some((s) => s.documentTypeId === uri))
        errors.push({ path: `${p}.documentTypeId`, message: `${uri} is listed twice` });
      else out.push({ documentTypeId: uri, processIds: processes });
    }
  });
  return out;
}

export function readBoolean(
  value: unknown,
  path: string,
  errors: { path: string; message: string }[],
): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') errors.push({ path, message: 'must be true or false' });
  return typeof value === 'boolean' ? value : undefined;
}

export function objectBody(req: Request): Record<string, unknown> {
  const b = req.body as unknown;
  if (!b || typeof b !== 'object' || Array.isArray(b))
    throw invalid([{ path: '', message: 'the body must be a JSON object' }]);
  return b as Record<string, unknown>;
}

/** The Peppol participant of one of our parties; refused when the party id cannot be one. */
export function partyParticipant(party: PartyRecord): ParticipantId {
  try {
    const p = participantOf(party.partyId);
    // Whether its scheme is in force is the code lists' question, asked when it is registered (registrationServices).
    icdOf(p);
    return p;
  } catch (e) {
    throw new GatewayError(
      'BAD_REQUEST',
      `Party ${party.partyId} cannot be a Peppol participant: ${(e as Error).message}`,
    );
  }
}

/** How a lookup refusal counts for output rules, as the sendInvoice run counts it (404 not found, 500 retried). */
function lookupStatus(r: LookupRefusal): number {
  if (r.failure === 'smp-unreachable') return ChannelStatus.Exhausted;
  if (r.failure === 'invalid-identifier') return ChannelStatus.Refused;
  return ChannelStatus.NotFound;
}

const passesFilter = createFilterPredicate();

/**
 * What a send to one recipient would do (src/core/channels.ts, as the run chooses): Peppol when the first channel
 * is Peppol and the recipient is found; `peppol-fallback` when Peppol would fail and its output rule hands the
 * document to a mail hook; the mail hook's id when e-mail is the first channel; nothing for a drop hook or no channel.
 */
function planDelivery(
  kind: string,
  hooks: readonly HookRecord[],
  sender: { partyId: string; legalEntityId: string },
  id: string,
  found: RecipientEndpoint | LookupRefusal,
): {
  partyId: string;
  channel: string | null;
  description: string;
  message: string;
  /** Reachable over Peppol, and a fallback channel would take what fails there. */
  fallback?: { channel: string; description: string; message: string };
} {
  const details = { sender: sender.partyId, recipient: id };
  // Filters see the sending event as the run will show it: the uploading party, created through the API.
  const filter = sendingEventFilter(passesFilter, {
    partyId: sender.legalEntityId,
    createdBy: 'api',
    createdOn: new Date(),
  });
  const first = chooseChannel(`Send${kind}`, kind, hooks, { details, passesFilter: filter });
  const named = (hookId: string) => {
    const h = hooks.find((x) => x.id === hookId);
    return h?.name ? `${h.name} (${hookId})` : hookId;
  };
  if (!first.ok) return { partyId: id, channel: null, description: 'No delivery channel', message: first.reason };
  const c = first.channel;
  if (c.kind === 'drop') {
    return {
      partyId: id,
      channel: null,
      description: 'Dropped',
      message: `Not sent: the drop hook ${c.hookId} takes it`,
    };
  }
  if (c.kind === 'mailto') {
    return {
      partyId: id,
      channel: c.hookId,
      description: `E-mail through hook ${named(c.hookId)}`,
      message: 'Delivered by e-mail to the address the invoice or the hook names',
    };
  }
  const fallbackFor = (status: number) => {
    const next = nextSendTopic(c, status, kind);
    const fb = next
      ? chooseChannel(next, kind, hooks, { first: false, tried: [channelKey(c)], details, passesFilter: filter })
      : undefined;
    return fb?.ok && (fb.channel.kind === 'mailto' || fb.channel.kind === 'https') ? fb.channel : undefined;
  };
  /** What a fallback channel does, for descriptions. */
  const via = (fb: { kind: 'mailto' | 'https'; hookId: string }) =>
    fb.kind === 'mailto' ? `e-mail fallback through hook ${named(fb.hookId)}` : `handed on to hook ${named(fb.hookId)}`;
  if (found.ok) {
    // Reachable over Peppol; when a delivery there fails for good, the fallback (if any) still takes it.
    const later = c.kind === 'peppol' ? fallbackFor(ChannelStatus.Exhausted) : undefined;
    return {
      partyId: id,
      channel: 'peppol',
      description: 'Peppol network (AS4)',
      message: identifierView(id, found).message,
      ...(later
        ? {
            fallback: {
              channel: later.kind === 'mailto' ? PEPPOL_FALLBACK : later.hookId,
              description: `Peppol, with ${via(later)}`,
              message: `Delivered over Peppol; ${later.kind === 'mailto' ? 'e-mail' : 'the hook'} if that fails`,
            },
          }
        : {}),
    };
  }
  const fallback = c.kind === 'peppol' ? fallbackFor(lookupStatus(found)) : undefined;
  if (fallback) {
    // The mail fallback is the contract's `peppol-fallback` channel; an https hook taking the output topic is named.
    return {
      partyId: id,
      channel: fallback.kind === 'mailto' ? PEPPOL_FALLBACK : fallback.hookId,
      description: `Peppol, with ${via(fallback)}`,
      message: `${fallback.kind === 'mailto' ? 'Delivered by e-mail' : `Handed on to hook ${fallback.hookId}`}: ${found.message}`,
    };
  }
  return { partyId: id, channel: null, description: 'No delivery channel', message: found.message };
}

export function registerPeppolRoutes(router: Router, deps: PeppolRouteDeps): void {
  const party = requireParty(deps.directory);
  const svc = (): PeppolApiServices => {
    if (!deps.peppol)
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'The Peppol layer is not configured in this API process');
    return deps.peppol;
  };
  const lookup = (): RecipientLookup => {
    const l = svc().lookup;
    if (isUnavailable(l))
      throw new GatewayError('DEPENDENCY_UNAVAILABLE', `Recipient lookups are not configured: ${l.unavailable}`);
    return l;
  };

  const bodyJson = jsonBody('64kb', 'the body');

  async function defaultsOf(
    tenantId: string,
  ): Promise<{ services: ServiceEntry[]; reviews: boolean; changedOn: Date | null }> {
    const t = await svc().directory.getTenantConfig(tenantId);
    return t
      ? { services: t.services, reviews: t.reviews, changedOn: t.changedOn }
      : { services: [...DEFAULT_SERVICES], reviews: false, changedOn: null };
  }

  function environmentView(
    tenantId: string,
    defaults: { services: ServiceEntry[]; reviews: boolean; changedOn: Date | null },
  ) {
    const s = svc();
    const current = currentCertificate(s.settings.apCertificates, new Date());
    return {
      tenantId,
      accessPoint: {
        endpointUrl: s.settings.apEndpointUrl,
        transportProfile: 'peppol-transport-as4-v2_0',
        seatId: current ? (commonNameOf(current) ?? null) : null,
        certificate: current ? certificateInfo(current) : null,
        certificates: s.settings.apCertificates.map(certificateInfo),
      },
      smp: {
        url: s.settings.smpPublicUrl,
        available: !isUnavailable(s.smp),
        ...(isUnavailable(s.smp) ? { problem: s.smp.unavailable } : {}),
        signingCertificate: s.settings.smpCertificate ? certificateInfo(s.settings.smpCertificate) : null,
      },
      sml: { zone: s.settings.smlZone, registrar: s.registrar.kind },
      lookups: {
        available: !isUnavailable(s.lookup),
        ...(isUnavailable(s.lookup) ? { problem: s.lookup.unavailable } : {}),
      },
      defaults: { documentTypes: defaults.services, reviews: defaults.reviews },
      changedOn: defaults.changedOn ? defaults.changedOn.toISOString() : null,
    };
  }

  function partyView(
    p: PartyRecord,
    record: PeppolParticipantRecord | null,
    defaults: { services: ServiceEntry[]; reviews: boolean },
  ) {
    const s = svc();
    return {
      partyId: p.partyId,
      participantId: `iso6523-actorid-upis::${p.partyId.toLowerCase()}`,
      configured: record !== null,
      registered: record?.registered ?? false,
      documentTypes: record ? record.services : defaults.services,
      reviews: record ? record.reviews : defaults.reviews,
      smpUrl: s.settings.smpPublicUrl,
      sml: {
        registrar: s.registrar.kind,
        state: record?.smlState ?? 'unregistered',
        error: record?.smlError ?? null,
        changedOn: record?.smlChangedOn ? record.smlChangedOn.toISOString() : null,
      },
      changedOn: record ? record.changedOn.toISOString() : null,
    };
  }

  // Environment level.
  router.get('/api/v1/peppol/config', async (req: Request, res: Response) => {
    const tenantId = environmentTenant(req, principalOf(res));
    res.json(environmentView(tenantId, await defaultsOf(tenantId)));
  });

  router.put('/api/v1/peppol/config', bodyJson, async (req: Request, res: Response) => {
    const tenantId = environmentTenant(req, principalOf(res));
    const body = objectBody(req);
    const s = svc();
    const errors: { path: string; message: string }[] = [];
    const {
      defaults,
      tenantId: givenTenant,
      accessPoint,
      smp,
      sml,
      lookups: _lookups,
      changedOn: _changedOn,
      ...rest
    } = body;
    for (const k of Object.keys(rest)) errors.push({ path: k, message: 'unknown field' });
    if (givenTenant !== undefined && givenTenant !== tenantId)
      errors.push({ path: 'tenantId', message: `this call acts on tenant ${tenantId}` });
    // The operator's settings come back in a GET → PUT round trip; a changed value there would silently do nothing.
    const same = (path: string, given: unknown, actual: unknown, env: string) => {
      if (given !== undefined && given !== actual)
        errors.push({ path, message: `set by the operator (${env}), not through the API` });
    };
    same(
      'accessPoint.endpointUrl',
      (accessPoint as { endpointUrl?: unknown } | undefined)?.endpointUrl,
      s.settings.apEndpointUrl,
      'PEPPOL_AP_ENDPOINT_URL',
    );
    same('smp.url', (smp as { url?: unknown } | undefined)?.url, s.settings.smpPublicUrl, 'PEPPOL_SMP_PUBLIC_URL');
    same('sml.zone', (sml as { zone?: unknown } | undefined)?.zone, s.settings.smlZone, 'PEPPOL_SML_ZONE');
    if (defaults === undefined || !defaults || typeof defaults !== 'object' || Array.isArray(defaults)) {
      errors.push({ path: 'defaults', message: 'required object { documentTypes, reviews }' });
      throw invalid(errors);
    }
    const { documentTypes, reviews, ...restDefaults } = defaults as Record<string, unknown>;
    for (const k of Object.keys(restDefaults)) errors.push({ path: `defaults.${k}`, message: 'unknown field' });
    const services = readServices(documentTypes, 'defaults.documentTypes', errors);
    const review = readBoolean(reviews, 'defaults.reviews', errors);
    if (services !== undefined && services.length === 0)
      errors.push({ path: 'defaults.documentTypes', message: 'at least one document type' });
    if (errors.length) throw invalid(errors);
    const current = await defaultsOf(tenantId);
    const saved = await s.directory.putTenantConfig(tenantId, {
      services: services ?? current.services,
      reviews: review ?? current.reviews,
    });
    res.json(environmentView(tenantId, saved));
  });

  // Party level.
  router.get('/api/v1/peppol/config/party/:partyId', party, async (_req: Request, res: Response) => {
    const p = partyOf(res);
    const [record, defaults] = await Promise.all([svc().directory.getParticipant(p.partyId), defaultsOf(p.tenantId)]);
    res.json(partyView(p, record, defaults));
  });

  router.put('/api/v1/peppol/config/party/:partyId', party, bodyJson, async (req: Request, res: Response) => {
    const p = partyOf(res);
    const s = svc();
    const body = objectBody(req);
    const errors: { path: string; message: string }[] = [];
    const {
      registered,
      documentTypes,
      reviews,
      partyId: givenParty,
      participantId: _pid,
      configured: _c,
      smpUrl: _u,
      sml: _s,
      changedOn: _d,
      ...rest
    } = body;
    for (const k of Object.keys(rest)) errors.push({ path: k, message: 'unknown field' });
    if (givenParty !== undefined && givenParty !== p.partyId)
      errors.push({ path: 'partyId', message: `this call configures party ${p.partyId}` });
    if (typeof registered !== 'boolean') errors.push({ path: 'registered', message: 'required: true or false' });
    const services = readServices(documentTypes, 'documentTypes', errors);
    const review = readBoolean(reviews, 'reviews', errors);
    if (registered === true && services !== undefined && services.length === 0)
      errors.push({ path: 'documentTypes', message: 'a registered party receives at least one document type' });
    if (errors.length) throw invalid(errors);

    const participant = partyParticipant(p);
    const defaults = await defaultsOf(p.tenantId);
    const previous = await s.directory.getParticipant(p.partyId);
    const input = {
      tenantId: p.tenantId,
      partyId: p.partyId,
      registered: registered as boolean,
      services: services ?? previous?.services ?? defaults.services,
      reviews: review ?? previous?.reviews ?? defaults.reviews,
    };

    if (input.registered) {
      input.services = registrationServices(s.networkRules, `Party ${p.partyId}`, participant, input.services);
      // Refused before anything is stored: a registration our SMP cannot answer, or no way to reach the SML.
      if (isUnavailable(s.smp))
        throw new GatewayError(
          'DEPENDENCY_UNAVAILABLE',
          `Our SMP is not configured, so ${p.partyId} cannot be published: ${s.smp.unavailable}`,
        );
      // Without an SML registrar the registrar itself refuses, naming what to configure (501).
      if (s.registrar.kind === 'off') await s.registrar.register(participant, s.settings.smpPublicUrl);
      // Our SMP answers first, then the SML points senders at it.
      await s.directory.putParticipant(input);
      try {
        await s.registrar.register(participant, s.settings.smpPublicUrl);
        // Our own service provider id, which MLS documents are addressed to, is served by the same SMP.
        const spid = s.smp.serviceProviderId();
        if (spid) await s.registrar.register(spid, s.settings.smpPublicUrl);
      } catch (e) {
        const message = (e as Error).message;
        await s.directory.setSmlState(p.partyId, 'failed', message);
        throw new GatewayError(
          'DEPENDENCY_UNAVAILABLE',
          `${p.partyId} is published in our SMP but its SML registration failed (retry the PUT): ${message}`,
          { cause: e },
        );
      }
      const saved = await s.directory.setSmlState(p.partyId, s.registrar.kind === 'manual' ? 'manual' : 'registered');
      res.json(partyView(p, saved, defaults));
      return;
    }

    // Unregistering: the SML entry goes first, so no sender is sent to an SMP that no longer answers.
    if (previous && previous.smlState !== 'unregistered') {
      try {
        await s.registrar.unregister(participant);
      } catch (e) {
        // Migrated to another provider (a key was prepared here and the SML entry is no longer ours): ours to drop.
        const movedAway =
          s.registrar.migration &&
          (await s.migrations.hasOutbound(p.partyId)) &&
          !(await s.registrar.migration.isOurs(participant).catch(() => true));
        if (!movedAway)
          throw new GatewayError(
            'DEPENDENCY_UNAVAILABLE',
            `The SML registration of ${p.partyId} could not be removed; nothing was changed: ${(e as Error).message}`,
            { cause: e },
          );
      }
    }
    await s.directory.putParticipant(input);
    const saved =
      previous && previous.smlState !== 'unregistered'
        ? await s.directory.setSmlState(p.partyId, 'unregistered')
        : await s.directory.getParticipant(p.partyId);
    res.json(partyView(p, saved, defaults));
  });

  // Recipient lookups.
  router.post(
    '/api/v1/:partyId/salesInvoice/queryRecipientParty',
    party,
    bodyJson,
    async (req: Request, res: Response) => {
      const sender = partyOf(res);
      const { ids, isCredit } = readRecipientBody(req.body as unknown);
      const preferred = queryString(req, 'preferredDocumentTypeId');
      const includeText = queryString(req, 'includeOptions');
      if (includeText !== undefined && !['true', 'false'].includes(includeText))
        throw new GatewayError('BAD_REQUEST', 'includeOptions must be true or false');
      const includeOptions = includeText !== 'false';
      let documentTypes: DocumentTypeId[] = [isCredit ? BIS3_CREDIT_NOTE : BIS3_INVOICE];
      if (preferred !== undefined && preferred !== '') {
        let d: DocumentTypeId;
        try {
          d = docTypeOf(preferred.trim());
        } catch (e) {
          throw new GatewayError('BAD_REQUEST', `preferredDocumentTypeId: ${(e as Error).message}`);
        }
        documentTypes = [d, ...documentTypes.filter((x) => formatId(x) !== formatId(d))];
      }
      const l = lookup();
      const results = await Promise.all(ids.map((id) => l.findEndpoint(id, documentTypes)));
      const hooks = await svc().hooks.listForRouting(sender.tenantId, sender.partyId);
      const kind = isCredit ? 'CreditNote' : 'Invoice';
      // What send would do for each recipient: the same channel selection as the sendInvoice run.
      const plans = ids.map((id, i) =>
        planDelivery(kind, hooks, sender, id, results[i] as RecipientEndpoint | LookupRefusal),
      );
      const peppolIdentifiers = ids.map((id, i) => identifierView(id, results[i] as RecipientEndpoint | LookupRefusal));
      const options: Array<{ channel: string; description: string; identifiers: unknown[] }> = [
        { channel: 'peppol', description: 'Peppol network (AS4)', identifiers: peppolIdentifiers },
      ];
      // Beside Peppol, the fallback for recipients Peppol reaches (what takes a document Peppol fails for good).
      const later = plans.find((p) => p.fallback)?.fallback;
      const fallbackIds = plans.flatMap((p) =>
        p.fallback ? [{ partyId: p.partyId, isValid: true, message: p.fallback.message }] : [],
      );
      for (const plan of plans) {
        if (plan.channel === null || plan.channel === 'peppol') continue;
        if (options.some((o) => o.channel === plan.channel)) continue;
        options.push({
          channel: plan.channel,
          description: plan.description,
          identifiers: plans
            .filter((p) => p.channel === plan.channel)
            .map((p) => ({ partyId: p.partyId, isValid: true, message: p.message })),
        });
      }
      if (later) {
        const existing = options.find((o) => o.channel === later.channel);
        if (existing) existing.identifiers.push(...fallbackIds);
        else options.push({ channel: later.channel, description: later.description, identifiers: fallbackIds });
      }
      const best = plans.find((p) => p.channel !== null);
      const body = best
        ? { id: best.partyId, channel: best.channel, description: best.description, message: best.message }
        : {
            id: ids[0] as string,
            channel: null,
            description: 'No delivery channel',
            message: `Not deliverable: ${plans.map((p) => `${p.partyId}: ${p.message}`).join('; ')}`,
          };
      res.status(best ? 200 : 404).json({ ...body, options: includeOptions ? options : [] });
    },
  );

  router.get('/api/v1/peppol/deliveryOption', async (req: Request, res: Response) => {
    const raw = (req.query as Record<string, unknown>)['partyIds'];
    const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw])
      .flatMap((v) => (typeof v === 'string' ? v.split(',') : []))
      .map((v) => v.trim())
      .filter((v) => v.length > 0);
    if (list.length === 0)
      throw new GatewayError(
        'BAD_REQUEST',
        'partyIds is required: one or more recipient identifiers, comma-separated or repeated',
      );
    if (list.length > MAX_RECIPIENTS)
      throw new GatewayError('BAD_REQUEST', `at most ${MAX_RECIPIENTS} partyIds per call`);
    const family = queryString(req, 'documentFamily') ?? 'Invoice';
    if (family !== 'Invoice')
      throw new GatewayError(
        'BAD_REQUEST',
        `documentFamily "${family.slice(0, 64)}" is not supported; supported: Invoice`,
      );
    const creditText = queryString(req, 'isCredit') ?? 'false';
    if (!['true', 'false'].includes(creditText))
      throw new GatewayError('BAD_REQUEST', 'isCredit must be true or false');
    const ids = [...new Set(list)];
    const l = lookup();
    const results = await Promise.all(ids.map((id) => l.deliveryOptions(id, creditText === 'true')));
    const out = results.flatMap((r, i) =>
      Array.isArray(r)
        ? r.map((o) => ({
            partyId: ids[i] as string,
            documentTypeId: formatId(o.documentType),
            processId: formatId(o.process),
            protocol: o.transportProfile,
            url: o.url,
            certificate: o.certificateBase64,
          }))
        : [],
    );
    if (out.length === 0) {
      const errors = results
        .map((r, i) => (Array.isArray(r) ? null : { partyId: ids[i] as string, reason: r.failure, message: r.message }))
        .filter((e) => e !== null);
      throw new GatewayError(
        'NOT_FOUND',
        `No Peppol delivery option: ${errors.map((e) => `${e.partyId}: ${e.message}`).join('; ')}`,
        { details: { errors } },
      );
    }
    res.json(out);
  });
}

function identifierView(id: string, r: RecipientEndpoint | LookupRefusal) {
  if (r.ok) {
    return {
      partyId: id,
      isValid: true,
      message:
        `Receives ${r.documentType.value.split('##')[0]?.split('::').pop() ?? 'the document'} over Peppol ` +
        `AS4 at ${r.result.endpoint.url}`,
    };
  }
  return { partyId: id, isValid: false, message: r.message, reason: r.failure };
}

/** An array of identifiers, or `{ partyIds, metaAttributes }` (spec 4.4). */
function readRecipientBody(body: unknown): { ids: string[]; isCredit: boolean } {
  let ids: unknown;
  let isCredit = false;
  if (Array.isArray(body)) ids = body;
  else if (body && typeof body === 'object') {
    const { partyIds, metaAttributes, ...rest } = body as Record<string, unknown>;
    const unknownKeys = Object.keys(rest);
    if (unknownKeys.length) throw new GatewayError('BAD_REQUEST', `unknown field(s): ${unknownKeys.join(', ')}`);
    ids = partyIds;
    if (metaAttributes !== undefined) {
      if (!metaAttributes || typeof metaAttributes !== 'object' || Array.isArray(metaAttributes))
        throw new GatewayError('BAD_REQUEST', 'metaAttributes must be an object');
      // isCredit is the one attribute that changes the lookup (credit note instead of invoice); others are ignored.
      const c = (metaAttributes as Record<string, unknown>)['isCredit'];
      if (c !== undefined && c !== true && c !== false && c !== 'true' && c !== 'false')
        throw new GatewayError('BAD_REQUEST', 'metaAttributes.isCredit must be true or false');
      isCredit = c === true || c === 'true';
    }
  } else
    throw new GatewayError('BAD_REQUEST', 'the body must be an array of identifiers or { partyIds, metaAttributes }');
  if (!Array.isArray(ids) || ids.length === 0 || ids.some((x) => typeof x !== 'string' || x.trim() === '')) {
    throw new GatewayError(
      'BAD_REQUEST',
      'partyIds must be a non-empty array of identifier strings (<scheme>:<number>)',
    );
  }
  if (ids.length > MAX_RECIPIENTS)
    throw new GatewayError('BAD_REQUEST', `at most ${MAX_RECIPIENTS} identifiers per call`);
  return { ids: [...new Set((ids as string[]).map((x) => x.trim()))], isCredit };
}
