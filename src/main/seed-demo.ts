import { randomUUID } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { generateClientSecret, hashClientSecret } from '../auth/secret-hash';
import { GatewayError } from '../core/gateway-error';
import { nameBasedUuid } from '../ids/name-uuid';
import { formatId, peppolParticipant, spidOfSeatId } from '../peppol/identifiers';
import type { NaptrRecord } from '../peppol/sml';
import { DnsZoneSmlRegistrar, type DnsZoneWriter } from '../peppol/sml-registrar';
import { BILLING_PROCESS, BIS3_CREDIT_NOTE, BIS3_INVOICE } from '../peppol/smp-publisher';
import { isDuplicateKeyError } from '../storage/connection';
import { HookRepository } from '../storage/hooks/hook.repository';
import { PeppolDirectoryRepository, type ServiceEntry } from '../storage/peppol/peppol-directory.repository';
import { validateHookBody } from '../webhooks';
import type { Core } from './compose';
import { allowListOf } from './webhooks';
import { loadAs4Keys } from '../peppol/as4/as4-keys';

export const DEMO = {
  tenantId: 'demo',
  tenantName: 'Demo tenant',
  /** The demo's sender: the party the Quick start uploads as. */
  partyId: '0106:12345678',
  legalEntityId: 'NL:0106:12345678',
  partyName: 'Demo Supplier B.V.',
  /** The demo's receiver: invoices to it go out over Peppol and come back in through our own AS4 receiver. */
  receiverPartyId: '0106:87654321',
  receiverLegalEntityId: 'NL:0106:87654321',
  receiverPartyName: 'Demo Customer B.V.',
  clientId: 'demo-client',
  /** The sender's mail hook: what the e-mail channel sends for it goes to the invoice's receiver address. */
  mailHook: {
    action: 'mailto',
    name: 'Demo e-mail delivery',
    url: 'mailto:[receiverEmailAddress]?fallback=demo-fallback@example.test&attach=pdf,xml,attachments',
    topics: ['Send*', 'Send*Fallback'],
  },
} as const;

/** Namespace of the demo's name-based ids (the mail hook's id is the same on every seed). */
const DEMO_NAMESPACE = '0b8f6f0e-3c1a-4f63-9d0c-5a7e2b9d4c11';
export const DEMO_MAIL_HOOK_ID = nameBasedUuid(DEMO_NAMESPACE, [DEMO.tenantId, DEMO.partyId, 'mail-hook']);

/** What both demo parties receive through our SMP: Peppol BIS Billing 3.0 invoices and credit notes. */
const DEMO_SERVICES: ServiceEntry[] = [BIS3_INVOICE, BIS3_CREDIT_NOTE].map((d) => ({
  documentTypeId: formatId(d),
  processIds: [formatId(BILLING_PROCESS)],
}));

export interface DemoCredentials {
  tenantId: string;
  /** The sender party (the upload path's `{partyId}`). */
  partyId: string;
  /** The receiver party. */
  receiverPartyId: string;
  parties: string[];
  clientId: string;
  clientSecret: string;
  mailHookId: string;
  /** Where our SMP serves the parties and, with a zone writer, where their SML entries point. */
  smpUrl: string;
  /** `dns-zone` when the SML entries were written to the given zone, `manual` when that is left to the operator. */
  sml: string;
}

export interface SeedDemoOptions {
  /** The local SML zone the parties are registered in (`npm start`'s DNS server reads it). */
  smlZone?: DnsZoneWriter;
}

/**
 * A DNS zone kept as a JSON file, `{ "<NAPTR name>": [NaptrRecord, …] }`: the zone `npm start`'s local SML server
 * (scripts/lib/local-sml.js) answers from. Written whole through a rename, so the server never reads half a file.
 */
export class JsonZoneFile implements DnsZoneWriter {
  constructor(private readonly file: string) {}

  read(): Record<string, NaptrRecord[]> {
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, NaptrRecord[]>;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw e;
    }
  }

  setRecords(name: string, records: NaptrRecord[]): void {
    this.write({ ...this.read(), [name.toLowerCase()]: records });
  }

  removeRecords(name: string): void {
    const { [name.toLowerCase()]: _removed, ...rest } = this.read();
    this.write(rest);
  }

  private write(zone: Record<string, NaptrRecord[]>): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(zone, null, 2)}\n`);
    renameSync(tmp, this.file);
  }
}

const sameServices = (a: readonly ServiceEntry[], b: readonly ServiceEntry[]): boolean =>
  JSON.stringify(a) === JSON.stringify(b);

/**
 * Creates what the demo needs, where missing: the demo tenant, its two parties (both published by our SMP for BIS
 * Billing 3.0 invoices and credit notes, and registered in the given SML zone), the sender's mail hook and the demo
 * client. Issues a fresh client secret on every run (earlier demo secrets are revoked), so the Quick start can always
 * print working credentials without storing a secret in clear.
 */
export async function seedDemo(core: Core, options: SeedDemoOptions = {}): Promise<DemoCredentials> {
  const d = core.directory;
  if (!(await d.getTenant(DEMO.tenantId))) await d.createTenant({ id: DEMO.tenantId, name: DEMO.tenantName });
  const parties = [
    { partyId: DEMO.partyId, legalEntityId: DEMO.legalEntityId, name: DEMO.partyName },
    { partyId: DEMO.receiverPartyId, legalEntityId: DEMO.receiverLegalEntityId, name: DEMO.receiverPartyName },
  ];
  for (const p of parties) if (!(await d.findParty(p.partyId))) await d.createParty({ tenantId: DEMO.tenantId, ...p });

  const peppol = new PeppolDirectoryRepository(core.db.models);
  const { smlZone, smpPublicUrl } = core.config.peppol;
  const registrar = options.smlZone ? new DnsZoneSmlRegistrar(smlZone, options.smlZone) : undefined;
  for (const { partyId } of parties) {
    const record = await peppol.getParticipant(partyId);
    if (!record?.registered || !sameServices(record.services, DEMO_SERVICES)) {
      await peppol.putParticipant({
        tenantId: DEMO.tenantId,
        partyId,
        registered: true,
        services: DEMO_SERVICES,
        reviews: false,
      });
    }
    // Our SMP answers first, then the SML points senders at it (as the Peppol configuration API does).
    if (registrar) await registrar.register(peppolParticipant(partyId), smpPublicUrl);
    const state = registrar ? 'registered' : 'manual';
    if (record?.smlState !== state) await peppol.setSmlState(partyId, state);
  }
  // Our service provider id too: the MLS of a demo invoice is addressed to it, and our SMP serves it.
  if (registrar && core.config.as4.enabled)
    await registrar.register(spidOfSeatId(loadAs4Keys(core.config.as4).keys.seatId), smpPublicUrl);

  const mailHookId = await seedMailHook(core);

  const clientSecret = generateClientSecret();
  const secret = { id: randomUUID(), hash: await hashClientSecret(clientSecret) };
  const existing = await d.getClient(DEMO.clientId);
  if (!existing) {
    await d.createClient({ clientId: DEMO.clientId, name: 'Demo integration', tenantIds: [DEMO.tenantId], secret });
  } else {
    await d.addClientSecret(DEMO.clientId, secret);
    for (const s of existing.secrets) if (!s.revokedAt) await d.revokeClientSecret(DEMO.clientId, s.id);
  }
  return {
    tenantId: DEMO.tenantId,
    partyId: DEMO.partyId,
    receiverPartyId: DEMO.receiverPartyId,
    parties: parties.map((p) => p.partyId),
    clientId: DEMO.clientId,
    clientSecret,
    mailHookId,
    smpUrl: smpPublicUrl,
    sml: registrar ? registrar.kind : 'manual',
  };
}

/** The sender's mail hook, checked as the hook API checks it; created once (a keyed insert under a fixed id). */
async function seedMailHook(core: Core): Promise<string> {
  const hooks = new HookRepository(core.db.models);
  const scope = { tenantId: DEMO.tenantId, partyId: DEMO.partyId };
  if (await hooks.get(scope, DEMO_MAIL_HOOK_ID)) return DEMO_MAIL_HOOK_ID;
  const c = core.config;
  const v = validateHookBody(
    { ...DEMO.mailHook, topics: [...DEMO.mailHook.topics] },
    {
      mode: 'create',
      allowOutput: false,
      hasStoredSecureKey: false,
      allowHttp: c.webhooks.allowHttp,
      allowList: allowListOf(c),
      maxTimeoutMs: c.webhooks.timeoutMs,
    },
  );
  if (!v.ok)
    throw new GatewayError(
      'BAD_REQUEST',
      `the demo mail hook is refused: ${v.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
    );
  try {
    await hooks.create({ id: DEMO_MAIL_HOOK_ID, ...scope, ...v.fields, secureKey: v.secureKey ?? null });
  } catch (e) {
    // Another seed created it meanwhile.
    if (!isDuplicateKeyError(e)) throw e;
  }
  return DEMO_MAIL_HOOK_ID;
}
