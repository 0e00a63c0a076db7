/**
 * A sending gateway on real servers for channel tests: API + worker on the Temporal dev server and the database, our
 * AP key as the sender certificate, recipient lookups through a local SML zone (DNS on 127.0.0.1) and a signing SMP,
 * and an SMTP server on 127.0.0.1 as the relay. The receiving side (an access point on loopback) is the test's own.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { testWorkflowBundle } from './workflow-bundle';
import type { Application } from 'express';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { composeApp, composeIdentity } from '../../src/main/compose';
import { composeWebhookRoutes } from '../../src/main/webhooks';
import type { RetrySchedule } from '../../src/core/retry-schedule';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import {
  DOCTYPE_SCHEME_BUSDOX,
  TRANSPORT_PROFILE_AS4_V2,
  documentTypeId,
  peppolParticipant,
} from '../../src/peppol/identifiers';
import { naptrName } from '../../src/peppol/sml';
import { BILLING_PROCESS } from '../../src/peppol/smp-publisher';
import { eventually } from './poll';
import { LocalDnsZone } from './peppol/local-dns';
import { LocalSmp } from './peppol/local-smp';
import { testPki, testApEnv } from './peppol/pki-fixture';
import type { TestPki } from './peppol/test-pki';
import { requireEnv } from './services';
import { startSmtpSink, type SmtpSink } from './smtp-sink';
import { createTestContext, type TestContext } from './test-app';
import { RecordingDeliveryStarter } from './webhook-harness';

/** The Peppol BIS Billing 3.0 invoice document type (UBL 2.1). */
export const BIS3_INVOICE_TYPE = documentTypeId(
  DOCTYPE_SCHEME_BUSDOX,
  'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
);

/** A few hundred ms between attempts instead of hours: three attempts per channel. */
export const FAST_SCHEDULE: RetrySchedule = { kind: 'table', delaysMs: [300, 300] };

const FINAL = new Set(['delivered', 'InvoiceSentError', 'dropped']);

/** The history of a sales invoice delivered at its first attempt, as the status resource lists its states. */
export const DELIVERED_AT_FIRST_ATTEMPT: readonly string[] = Object.freeze([
  'received',
  'accepted',
  'detected',
  'validated',
  'sending',
  'delivered',
]);

export interface DocumentStatus {
  state: string;
  nextAttemptOn?: string;
  history: { state: string; detail?: string; channel?: string; nextAttemptOn?: string }[];
}

export interface SentEvent {
  topic: string;
  message: string;
  details: Record<string, string>;
}

/** The sales-invoice calls a sending test makes, for one API and token. */
export interface DocumentClient {
  /** Uploads for `party` (200 expected) and returns the document id. */
  upload(party: string, body: Buffer, query?: string): Promise<string>;
  /** The document's status once it reached a final state. */
  finalStatus(party: string, id: string): Promise<DocumentStatus>;
  /** The events of one document (GET /api/v1/events), in the order they were produced. */
  eventsOf(party: string, id: string): Promise<SentEvent[]>;
}

export function documentClient(app: Application, token: string, timeoutMs = 60_000): DocumentClient {
  const statusOf = (party: string, id: string) =>
    request(app).get(`/api/v1/${party}/salesInvoice/${id}/status`).auth(token, { type: 'bearer' });
  return {
    async upload(party, body, query = '') {
      const res = await request(app)
        .post(`/api/v1/${party}/salesInvoice/send${query}`)
        .auth(token, { type: 'bearer' })
        .set('X-Service-DocumentId', randomUUID())
        .type('application/xml')
        .send(body);
      if (res.status !== 200) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
      return (res.body as { id: string }).id;
    },
    finalStatus(party, id) {
      let last = '';
      return eventually(
        async () => {
          const res = await statusOf(party, id);
          const body = res.body as DocumentStatus;
          last = body.state;
          return res.status === 200 && FINAL.has(body.state) ? body : undefined;
        },
        timeoutMs,
        () => `final state of ${id} (last ${last})`,
        100,
      );
    },
    async eventsOf(party, id) {
      const res = await request(app)
        .get(`/api/v1/events?partyId=${encodeURIComponent(party)}&limit=1000`)
        .auth(token, { type: 'bearer' });
      if (res.status !== 200) throw new Error(`events answered ${res.status}`);
      return (res.body as { items: Array<SentEvent & { documentId?: string }> }).items
        .filter((e) => e.documentId === id)
        .map(({ topic, message, details }) => ({ topic, message, details }));
    },
  };
}

export interface SendingNetwork extends DocumentClient {
  pki: TestPki;
  dns: LocalDnsZone;
  smp: LocalSmp;
  sink: SmtpSink;
  ctx: TestContext;
  /** The API with the webhook routes (hooks, events) and the Peppol routes wired, as the API process has them. */
  app: Application;
  token: string;
  /** Puts `participant` in the SML zone and our SMP, receiving BIS Billing 3 invoices (billing process) at `url`. */
  publish(participant: string, url: string): void;
  /** Starts the worker: after the hooks the test needs exist. */
  startWorker(): Promise<void>;
  close(): Promise<void>;
}

export interface SendingNetworkOptions {
  /** Database name prefix (letters only). */
  name: string;
  zone: string;
  tenantId: string;
  parties: ReadonlyArray<{ partyId: string; legalEntityId: string }>;
}

export async function startSendingNetwork(options: SendingNetworkOptions): Promise<SendingNetwork> {
  const { temporalAddress } = requireEnv();
  const taskQueue = `${options.name}-${randomUUID()}`;
  const pki = await testPki();
  const dir = mkdtempSync(path.join(os.tmpdir(), `${options.name}-`));
  const dns = await new LocalDnsZone().start();
  const smp = await new LocalSmp(pki.smp, '/smp').start();
  const sink = await startSmtpSink();
  const smpCa = path.join(dir, 'smp-ca.pem');
  writeFileSync(smpCa, pki.smpCa.certificate.toString());
  const starter = await TemporalWorkflowStarter.connect({
    address: temporalAddress,
    namespace: 'default',
    taskQueue,
    searchAttributes: false,
    peppolSendSchedule: FAST_SCHEDULE,
    emailSendSchedule: FAST_SCHEDULE,
  });
  const ctx = await createTestContext(options.name, {
    workflows: starter,
    env: {
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_TASK_QUEUE: taskQueue,
      WORKER_METRICS_ADDRESS: '',
      WEBHOOK_SEARCH_ATTRIBUTES: 'false',
      ...testApEnv('ap-sender'),
      PEPPOL_SMP_TRUSTSTORE: smpCa,
      PEPPOL_SML_ZONE: options.zone,
      PEPPOL_DNS_SERVERS: dns.address,
      PEPPOL_LOOKUP_TIMEOUT_MS: '2000',
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(sink.port),
      SMTP_REQUIRE_TLS: 'false',
      SMTP_FROM: 'invoices@gateway.example.test',
      // https channel hooks post to receivers on loopback.
      WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8',
      WEBHOOK_ALLOW_HTTP: 'true',
    },
  });
  await ctx.core.directory.createTenant({ id: options.tenantId, name: options.tenantId });
  for (const p of options.parties) {
    await ctx.core.directory.createParty({ tenantId: options.tenantId, ...p, name: `Party ${p.partyId}` });
  }
  const token = await ctx.token(await ctx.createClient([options.tenantId]));
  // Event deliveries to https hooks are recorded, not run: the channel hooks are the sendInvoice run's own.
  const app = composeApp(ctx.core, await composeIdentity(ctx.core), starter, {
    metricsPrefix: 'test_',
    webhooks: composeWebhookRoutes(ctx.config, ctx.core.db.models, new RecordingDeliveryStarter()),
  });
  let worker: RunningWorker | undefined;

  return {
    ...documentClient(app, token),
    pki,
    dns,
    smp,
    sink,
    ctx,
    app,
    token,
    publish(participant, url) {
      const p = peppolParticipant(participant);
      dns.set(naptrName(p, options.zone), [
        { type: 'NAPTR', order: 100, preference: 10, flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${smp.url}!` },
      ]);
      smp.publish(p, BIS3_INVOICE_TYPE, [
        {
          process: BILLING_PROCESS,
          endpoints: [{ transportProfile: TRANSPORT_PROFILE_AS4_V2, url, certificate: pki.apReceiver.certificate }],
        },
      ]);
    },
    async startWorker() {
      worker = await startWorker(ctx.config, { workflowBundle: await testWorkflowBundle() });
    },
    async close() {
      await worker?.stop();
      await starter.close();
      await ctx.close();
      await Promise.all([sink.close(), dns.stop(), smp.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
