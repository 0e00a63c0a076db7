import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { userInfo } from 'node:os';
import { loadConfig } from '../config/load-config';
import { GatewayError } from '../core/gateway-error';
import { isLegalEntityId, isPartyId, legalEntityIdOf } from '../core/identifiers';
import { generateClientSecret, hashClientSecret, hashSecret, validateIntegrationPassword } from '../auth/secret-hash';
import { composeCore, type Core } from './compose';
import { JsonZoneFile, seedDemo } from './seed-demo';
import { runSelfCheck } from './self-check';
import { reconcileStorage, type SendRunLookup } from '../maintenance/reconcile';
import { resendDocument, retryDocumentNow, type SendRunControl } from '../sending/operator';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { connectTemporalClient } from '../temporal/client';
import { runReportingCommand } from './network-reporting';
import { runLegalHoldCommand } from './retention';
import { requestTaxReport, type TaxReportStarter } from '../reporting/tax-report-request';
import { parseTaxReportType } from '../core/document-states';
import {
  isReplayReport,
  renderReplayReport,
  runReplayCommand,
  terminalProgress,
  type ReplayServices,
} from './admin-replay';
import { runHookCommand, type HookCommandServices } from './admin-hooks';
import { composeAdminServices } from './admin-services';
import { runSmlCommand, type SmlCommandClient } from './admin-sml';
import { composeSmlClient } from './peppol';
import { loadKeyMaterial } from '../peppol/pki/key-material';
import { runPartnerCommand } from './partners-admin';
import { runHookAuthCommand } from './hook-auth-admin';

const USAGE = `Usage: npm run admin -- <command> [options] [--json]

  tenant create --name NAME [--id ID]
  tenant list
  party create --tenant ID --party-id SCHEME:NUMBER (--country CC | --legal-entity-id CC:SCHEME:NUMBER) --name NAME
  party list [--tenant ID]
  client create --name NAME --tenant ID[,ID...] [--client-id ID]     prints the secret once
  client list
  client grant --client ID --tenant ID
  client disable|enable --client ID
  secret add --client ID                                             prints the secret once
  secret revoke --client ID --secret-id ID
  user create --tenant ID --username NAME --password PW [--party P1,P2]
  user list [--tenant ID]
  user link|unlink --username NAME --party SCHEME:NUMBER
  seed-demo [--sml-zone-file FILE]   demo tenant, its two parties in our SMP (and in the local SML zone FILE),
                                     the sender's mail hook, the demo client + fresh secret
  reconcile [--dry-run]          compare stored documents with their workflows, remove bytes nothing refers to
  document resend --tenant ID --document-id ID      a sales invoice in InvoiceSentError gets a new run
  document retry-now --tenant ID --document-id ID   a sales invoice waiting between attempts makes its next one now
  document tax-report --tenant ID --document-id ID --type submit|resubmit|disregard
                                 another tax report of a sent (C2) or received (C3) invoice: a submit again after one
                                 not accepted, a resubmit or a disregard (needs TAX_REPORTING_CONFIG)
  document hold TENANT DOCUMENT_ID --reason TEXT [--by NAME]   a legal hold: retention keeps the document
  document release TENANT DOCUMENT_ID                          lifts it; retention applies its periods again
  document holds [--tenant ID]                                 the legal holds in place
  reporting generate|show|send --month YYYY-MM [--kind tsr|eusr]
                                 the Peppol network reports (TSR, EUSR) of a month: generate (once, validated),
                                 show (stored, or a preview), send (over AS4 to PEPPOL_REPORTING_RECEIVER)
  partner create --id ID --name NAME | partner list      software partners (Subscription-Key, spec 2.1 layer 4)
  subscription-key create --partner ID                     prints the key once; only its hash is stored
  subscription-key list [--partner ID] | revoke --key-id ID
  hook-auth oauth2 --tenant ID --hook ID --token-url URL --client-id ID --client-secret-file FILE
            [--scope S] [--audience A] [--client-auth client_secret_basic|client_secret_post]
  hook-auth cert --tenant ID --hook ID --name NAME   mutual TLS with WEBHOOK_CLIENT_CERT_DIR/NAME.crt + NAME.key
  hook-auth clear|show --tenant ID --hook ID          delivery authentication beyond the signature (spec 5.12)
  self-check                     rule packs, xmllint, the demo invoice validated, the Peppol key (exit 1 on a failure)
  replay events (--hook ID | --topic T | --from ISO --to ISO | --state HookSentError) [--tenant ID]
  replay invoices --state InvoiceSentError [--from ISO] [--to ISO] [--tenant ID]
  replay inbound (--state stored|detected|rejected | --from ISO --to ISO) [--tenant ID]
        with [--dry-run] [--rate N/s] [--max N] [--run-id ID]: redeliver events, resend sales invoices, start the
        processing of received messages; the same command again continues the run and acts on nothing twice
  hook list --tenant ID [--party P]
  hook create --tenant ID [--party P] --url URL --topic T[,T...] [--secure-key K] [--name N] [--filter F]
        [--timeout-seconds S]                                      prints a generated secureKey once
  hook update|disable|ping ID [--tenant ID] [--url …] [--topic …] [--active true|false]
  sml prepare-change-certificate --certificate FILE [--date YYYY-MM-DD]
        our SMP's key rollover (experimental SML client): the SML accepts the new certificate from the date
  hook rotate-secret ID [--tenant ID] [--overlap 24h]   prints the new secureKey once; the old one signs too
                                                        until the overlap ends
`;

type Options = Record<string, string | boolean | undefined>;

function need(o: Options, name: string): string {
  const v = o[name];
  if (typeof v !== 'string' || v.length === 0) throw new GatewayError('BAD_REQUEST', `--${name} is required`);
  return v;
}

/** An option's value, when given. */
function str(o: Options, name: string): string | undefined {
  const v = o[name];
  return typeof v === 'string' ? v : undefined;
}

function list(v: string | boolean | undefined): string[] {
  return typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

/** Runs one admin command and returns what it prints (JSON-able). Exported for tests. */
export async function runAdmin(
  core: Core,
  args: string[],
  services: {
    runs?: SendRunLookup;
    control?: SendRunControl;
    taxReports?: TaxReportStarter;
    replay?: ReplayServices;
    hooks?: HookCommandServices;
    sml?: () => SmlCommandClient;
  } = {},
): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      id: { type: 'string' },
      name: { type: 'string' },
      tenant: { type: 'string' },
      'party-id': { type: 'string' },
      country: { type: 'string' },
      'legal-entity-id': { type: 'string' },
      'client-id': { type: 'string' },
      client: { type: 'string' },
      'secret-id': { type: 'string' },
      username: { type: 'string' },
      password: { type: 'string' },
      party: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'sml-zone-file': { type: 'string' },
      'document-id': { type: 'string' },
      month: { type: 'string' },
      kind: { type: 'string' },
      type: { type: 'string' },
      reason: { type: 'string' },
      by: { type: 'string' },
      hook: { type: 'string' },
      topic: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      state: { type: 'string' },
      rate: { type: 'string' },
      max: { type: 'string' },
      'run-id': { type: 'string' },
      url: { type: 'string' },
      action: { type: 'string' },
      filter: { type: 'string' },
      'secure-key': { type: 'string' },
      'timeout-seconds': { type: 'string' },
      active: { type: 'string' },
      overlap: { type: 'string' },
      certificate: { type: 'string' },
      date: { type: 'string' },
      partner: { type: 'string' },
      'key-id': { type: 'string' },
      'token-url': { type: 'string' },
      'client-secret-file': { type: 'string' },
      scope: { type: 'string' },
      audience: { type: 'string' },
      'client-auth': { type: 'string' },
    },
  });
  const o = values as Options;
  const d = core.directory;
  const [noun, verb] = positionals;
  switch (`${noun ?? ''} ${verb ?? ''}`.trim()) {
    case 'tenant create':
      return d.createTenant({ name: need(o, 'name'), ...(typeof o['id'] === 'string' ? { id: o['id'] } : {}) });
    case 'tenant list':
      return d.listTenants();
    case 'party create': {
      const partyId = need(o, 'party-id');
      if (!isPartyId(partyId))
        throw new GatewayError('BAD_REQUEST', '--party-id must be <scheme>:<number>, e.g. 0106:12345678');
      const legalEntityId =
        typeof o['legal-entity-id'] === 'string' ? o['legal-entity-id'] : legalEntityIdOf(need(o, 'country'), partyId);
      if (!isLegalEntityId(legalEntityId))
        throw new GatewayError('BAD_REQUEST', '--legal-entity-id must be <country>:<scheme>:<number>');
      return d.createParty({ tenantId: need(o, 'tenant'), partyId, legalEntityId, name: need(o, 'name') });
    }
    case 'party list':
      return d.listParties(typeof o['tenant'] === 'string' ? [o['tenant']] : (await d.listTenants()).map((t) => t._id));
    case 'client create': {
      const secret = generateClientSecret();
      const secretId = randomUUID();
      const client = await d.createClient({
        name: need(o, 'name'),
        tenantIds: list(need(o, 'tenant')),
        secret: { id: secretId, hash: await hashClientSecret(secret) },
        ...(typeof o['client-id'] === 'string' ? { clientId: o['client-id'] } : {}),
      });
      return { clientId: client._id, secretId, clientSecret: secret, tenantIds: client.tenantIds };
    }
    case 'client list':
      return (await d.listClients()).map((c) => ({
        clientId: c._id,
        name: c.name,
        tenantIds: c.tenantIds,
        disabled: c.disabled,
        secrets: c.secrets.map((s) => ({ id: s.id, createdAt: s.createdAt, revokedAt: s.revokedAt ?? null })),
      }));
    case 'client grant':
      await d.grantClientTenant(need(o, 'client'), need(o, 'tenant'));
      return { ok: true };
    case 'client disable':
    case 'client enable':
      await d.setClientDisabled(need(o, 'client'), verb === 'disable');
      return { ok: true };
    case 'secret add': {
      const secret = generateClientSecret();
      const secretId = randomUUID();
      await d.addClientSecret(need(o, 'client'), { id: secretId, hash: await hashClientSecret(secret) });
      return { clientId: need(o, 'client'), secretId, clientSecret: secret };
    }
    case 'secret revoke':
      await d.revokeClientSecret(need(o, 'client'), need(o, 'secret-id'));
      return { ok: true };
    case 'user create': {
      const username = need(o, 'username');
      const password = need(o, 'password');
      const problems = validateIntegrationPassword(password, { username });
      if (problems.length > 0)
        throw new GatewayError('BAD_REQUEST', `password rejected: ${problems.map((p) => p.message).join('; ')}`);
      const user = await d.createUser({
        tenantId: need(o, 'tenant'),
        username,
        passwordHash: await hashSecret(password),
        partyIds: list(o['party']),
      });
      return { id: user._id, tenantId: user.tenantId, username: user.username, partyIds: user.partyIds };
    }
    case 'user list':
      return (await d.listUsers(typeof o['tenant'] === 'string' ? o['tenant'] : undefined)).map((u) => ({
        id: u._id,
        tenantId: u.tenantId,
        username: u.username,
        partyIds: u.partyIds,
        disabled: u.disabled,
      }));
    case 'user link':
      await d.linkUserParty(need(o, 'username'), need(o, 'party'));
      return { ok: true };
    case 'user unlink':
      await d.unlinkUserParty(need(o, 'username'), need(o, 'party'));
      return { ok: true };
    case 'seed-demo':
      return seedDemo(
        core,
        typeof o['sml-zone-file'] === 'string' ? { smlZone: new JsonZoneFile(o['sml-zone-file']) } : {},
      );
    case 'reconcile': {
      if (!services.runs) throw new GatewayError('DEPENDENCY_UNAVAILABLE', 'reconcile needs the Temporal server');
      const { reconcile } = core.config;
      const report = await reconcileStorage(
        { models: core.db.models, blobs: core.db.blobs, runs: services.runs },
        {
          minAgeMs: reconcile.minAgeMs,
          windowMs: reconcile.windowMs,
          limit: reconcile.limit,
          dryRun: o['dry-run'] === true,
        },
      );
      return report.findings.map((f) => ({ kind: f.kind, id: f.id, repaired: f.repaired, detail: f.detail }));
    }
    case 'document resend':
    case 'document retry-now': {
      if (!services.control)
        throw new GatewayError('DEPENDENCY_UNAVAILABLE', `${noun} ${verb} needs the Temporal server`);
      const tenantId = need(o, 'tenant');
      const documentId = need(o, 'document-id');
      const doc = await core.documents.find(tenantId, documentId);
      if (!doc || doc.direction !== 'outbound')
        throw new GatewayError('DOCUMENT_NOT_FOUND', `Sales invoice ${documentId} not found in tenant ${tenantId}`);
      if (verb === 'retry-now') {
        await retryDocumentNow(services.control, doc);
        return { id: documentId, state: doc.state, retryNow: 'signalled' };
      }
      const { generation } = await resendDocument(core.documents, services.control, doc);
      return { id: documentId, state: 'resending', generation };
    }
    case 'document tax-report': {
      const tenantId = need(o, 'tenant');
      const documentId = need(o, 'document-id');
      const type = parseTaxReportType(need(o, 'type'));
      if (!type) throw new GatewayError('BAD_REQUEST', '--type must be one of submit, resubmit, disregard');
      const doc = await core.documents.find(tenantId, documentId);
      if (!doc) throw new GatewayError('DOCUMENT_NOT_FOUND', `Document ${documentId} not found in tenant ${tenantId}`);
      const { taxReporting } = core.config;
      return requestTaxReport(
        services.taxReports,
        taxReporting.configFile ? { acknowledgementTimeoutMs: taxReporting.acknowledgementTimeoutMs } : undefined,
        doc,
        type,
      );
    }
    case 'document hold':
    case 'document release':
    case 'document holds': {
      return runLegalHoldCommand(core, verb, {
        tenantId: positionals[2] ?? str(o, 'tenant'),
        documentId: positionals[3] ?? str(o, 'document-id'),
        reason: str(o, 'reason'),
        by: str(o, 'by') ?? userInfo().username,
      });
    }
    case 'reporting generate':
    case 'reporting show':
    case 'reporting send':
      return runReportingCommand(core, verb, {
        month: need(o, 'month'),
        kind: typeof o['kind'] === 'string' ? o['kind'] : undefined,
      });
    case 'replay events':
    case 'replay invoices':
    case 'replay inbound':
      return runReplayCommand(verb ?? '', o, services.replay ?? composeAdminServices(core).replay);
    case 'hook list':
    case 'hook create':
    case 'hook update':
    case 'hook disable':
    case 'hook ping':
    case 'hook rotate-secret':
      return runHookCommand(verb, positionals[2], o, services.hooks ?? composeAdminServices(core).hooks);
    case 'sml prepare-change-certificate':
      return runSmlCommand(
        verb ?? '',
        { certificate: str(o, 'certificate'), date: str(o, 'date') },
        services.sml ??
          (() => {
            const key = core.config.peppol.smpKey;
            if (!key)
              throw new GatewayError(
                'BAD_REQUEST',
                'no SMP key is configured (PEPPOL_SMP_KEYSTORE, or PEPPOL_SMP_CERTIFICATE + PEPPOL_SMP_PRIVATE_KEY): ' +
                  'the SML knows our SMP by its current certificate',
              );
            return composeSmlClient(core.config, loadKeyMaterial(key));
          }),
      );
    case 'partner create':
    case 'partner list':
    case 'subscription-key create':
    case 'subscription-key list':
    case 'subscription-key revoke': {
      return runPartnerCommand(core, `${noun} ${verb}`, {
        id: str(o, 'id'),
        name: str(o, 'name'),
        partner: str(o, 'partner'),
        keyId: str(o, 'key-id'),
      });
    }
    case 'hook-auth oauth2':
    case 'hook-auth cert':
    case 'hook-auth clear':
    case 'hook-auth show': {
      return runHookAuthCommand(core, verb ?? '', {
        tenant: str(o, 'tenant'),
        hook: str(o, 'hook'),
        tokenUrl: str(o, 'token-url'),
        clientId: str(o, 'client-id'),
        clientSecretFile: str(o, 'client-secret-file'),
        scope: str(o, 'scope'),
        audience: str(o, 'audience'),
        clientAuth: str(o, 'client-auth'),
        name: str(o, 'name'),
      });
    }
    default:
      throw new GatewayError('BAD_REQUEST', `unknown command "${positionals.join(' ')}"\n${USAGE}`);
  }
}

function render(result: unknown, json: boolean): string {
  if (json) return JSON.stringify(result, null, 2);
  if (isReplayReport(result)) return renderReplayReport(result);
  if (Array.isArray(result))
    return result
      .map((r) =>
        Object.entries(r as object)
          .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`)
          .join('  '),
      )
      .join('\n');
  return Object.entries(result as object)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(',') : String(v)}`)
    .join('\n');
}

if (require.main === module) {
  const args = process.argv.slice(2);
  if (args.length === 0 || args.includes('--help')) {
    process.stdout.write(USAGE);
    process.exit(args.length === 0 ? 2 : 0);
  }
  const json = args.includes('--json');
  if (args[0] === 'self-check') {
    // Needs no database or Temporal: it checks what this installation can do on its own.
    void runSelfCheck(loadConfig()).then((report) => {
      const lines = report.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`);
      process.stdout.write(`${json ? JSON.stringify(report, null, 2) : lines.join('\n')}\n`);
      process.exitCode = report.ok ? 0 : 1;
    });
  } else runCommand(args, json);
}

function runCommand(args: string[], json: boolean): void {
  // Logs go to stdout; keep them quiet so the command's own output (e.g. --json) is all that is printed.
  composeCore(loadConfig(), 'admin', { logLevel: 'error' })
    .then(async (core) => {
      // Reconciliation asks Temporal where each run stands; resend, retry-now, replay and ping act on runs.
      const needsTemporal =
        args[0] === 'reconcile' ||
        (args[0] === 'document' && !['hold', 'release', 'holds'].includes(args[1] ?? '')) ||
        args[0] === 'replay' ||
        (args[0] === 'hook' && args[1] === 'ping');
      const temporal = needsTemporal ? await connectTemporalClient(core.config.temporal) : undefined;
      const runs = temporal
        ? TemporalWorkflowStarter.over(temporal, {
            ...core.config.temporal,
            peppolSendSchedule: core.config.peppol.sendRetrySchedule,
            emailSendSchedule: core.config.email.retrySchedule,
          })
        : undefined;
      // Ctrl-C stops a replay before its next item (the same command continues it); a second one exits at once.
      let stop = false;
      const onSigint = () => {
        if (stop) process.exit(130);
        stop = true;
        process.stderr.write('\nstopping after the current item; run the same command again to continue\n');
      };
      if (args[0] === 'replay') process.on('SIGINT', onSigint);
      try {
        const admin = composeAdminServices(core, temporal);
        const progress = json ? undefined : terminalProgress();
        const services = {
          ...(runs ? { runs, control: runs, taxReports: runs } : {}),
          replay: { ...admin.replay, shouldStop: () => stop, ...(progress ? { progress } : {}) },
          hooks: admin.hooks,
        };
        const result = await runAdmin(core, args, services);
        process.stdout.write(`${render(result, json)}\n`);
        // A replay with failed items, or stopped by Ctrl-C, does not end as a success.
        process.exitCode = isReplayReport(result) && result.failed > 0 ? 1 : stop ? 130 : 0;
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        process.stderr.write(json ? `${JSON.stringify({ error: message })}\n` : `error: ${message}\n`);
        process.exitCode = 1;
      } finally {
        process.off('SIGINT', onSigint);
        await temporal?.close();
        await core.db.close();
      }
    })
    .catch((e: unknown) => {
      process.stderr.write(`error: cannot connect: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
}
