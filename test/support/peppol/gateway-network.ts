/**
 * A Peppol network on 127.0.0.1 for integration tests: a local SML zone (DNS), a signing SMP and the test PKI, and
 * gateways on it (each an API on its own port, a worker on its own task queue of the Temporal dev server, its own
 * database and access-point key). `publish` puts a participant's endpoint in the SML and SMP; `eventOf` waits for an
 * event a gateway published.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TemporalWorkflowStarter } from '../../../api/workflow-client';
import type { RetrySchedule } from '../../../src/core/retry-schedule';
import { startWorker, type RunningWorker } from '../../../src/main/worker';
import {
  TRANSPORT_PROFILE_AS4_V2,
  type DocumentTypeId,
  type ParticipantId,
  type ProcessId,
} from '../../../src/peppol/identifiers';
import type { KeyMaterial } from '../../../src/peppol/pki/key-material';
import { naptrName } from '../../../src/peppol/sml';
import { eventually } from '../poll';
import { createTestContext, type TestContext } from '../test-app';
import { testWorkflowBundle } from '../workflow-bundle';
import { LocalDnsZone } from './local-dns';
import { LocalSmp } from './local-smp';
import { testApEnv, testPki } from './pki-fixture';
import type { TestPki } from './test-pki';

export interface PeppolNetwork {
  zone: string;
  pki: TestPki;
  dir: string;
  dns: LocalDnsZone;
  smp: LocalSmp;
  /** PEM file of the SMP's CA (PEPPOL_SMP_TRUSTSTORE). */
  smpTruststore: string;
  publish(
    participant: ParticipantId,
    documentType: DocumentTypeId,
    process: ProcessId,
    url: string,
    certificate: KeyMaterial['certificate'],
  ): void;
  stop(): Promise<void>;
}

export async function startPeppolNetwork(zone: string): Promise<PeppolNetwork> {
  const pki = await testPki();
  const dir = mkdtempSync(path.join(os.tmpdir(), `${zone.split('.')[2] ?? 'net'}-`));
  const smpTruststore = path.join(dir, 'smp-ca.pem');
  writeFileSync(smpTruststore, pki.smpCa.certificate.toString());
  const dns = await new LocalDnsZone().start();
  const smp = await new LocalSmp(pki.smp, '/smp').start();
  return {
    zone,
    pki,
    dir,
    dns,
    smp,
    smpTruststore,
    publish(participant, documentType, process, url, certificate) {
      dns.set(naptrName(participant, zone), [
        { type: 'NAPTR', order: 100, preference: 10, flags: 'U', service: 'Meta:SMP', regexp: `!^.*$!${smp.url}!` },
      ]);
      smp.publish(participant, documentType, [
        { process, endpoints: [{ transportProfile: TRANSPORT_PROFILE_AS4_V2, url, certificate }] },
      ]);
    },
    async stop() {
      await Promise.all([dns.stop(), smp.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface NetworkGateway {
  ctx: TestContext;
  starter: TemporalWorkflowStarter;
  worker: RunningWorker;
  front: Server;
  as4Url: string;
  stop(): Promise<void>;
}

/**
 * One gateway on the network, with the test PKI's `key` (ap-sender, ap-receiver) as its access-point key; `env` adds
 * settings (or replaces these).
 */
export async function startNetworkGateway(
  network: PeppolNetwork,
  opts: {
    name: string;
    temporalAddress: string;
    key: 'ap-sender' | 'ap-receiver';
    schedule: RetrySchedule;
    env?: Record<string, string>;
  },
): Promise<NetworkGateway> {
  const taskQueue = `${opts.name}-${randomUUID()}`;
  const starter = await TemporalWorkflowStarter.connect({
    address: opts.temporalAddress,
    namespace: 'default',
    taskQueue,
    searchAttributes: false,
    peppolSendSchedule: opts.schedule,
  });
  const ctx = await createTestContext(opts.name.replace(/[^A-Za-z]/g, ''), {
    workflows: starter,
    env: {
      TEMPORAL_ADDRESS: opts.temporalAddress,
      TEMPORAL_TASK_QUEUE: taskQueue,
      WORKER_METRICS_ADDRESS: '',
      WEBHOOK_SEARCH_ATTRIBUTES: 'false',
      ...testApEnv(opts.key),
      PEPPOL_SMP_TRUSTSTORE: network.smpTruststore,
      PEPPOL_SML_ZONE: network.zone,
      PEPPOL_DNS_SERVERS: network.dns.address,
      PEPPOL_LOOKUP_TIMEOUT_MS: '2000',
      ...opts.env,
    },
  });
  const front = createServer((req, res) => {
    ctx.app(req, res);
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const as4Url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/as4`;
  const worker = await startWorker(ctx.config, { workflowBundle: await testWorkflowBundle() });
  return {
    ctx,
    starter,
    worker,
    front,
    as4Url,
    async stop() {
      await worker.stop();
      await starter.close();
      front.closeAllConnections();
      await new Promise((r) => front.close(r));
      await ctx.close();
    },
  };
}

export interface WebhookEventRecord {
  _id: string;
  topic: string;
  documentId?: string;
  refToDocumentId?: string;
  message?: string;
  details?: Record<string, string>;
}

/** The first event of `topic` a gateway published that `match` accepts, waited for. */
export function eventOf(
  ctx: TestContext,
  topic: string,
  match: (e: WebhookEventRecord) => boolean = () => true,
  timeoutMs = 90_000,
): Promise<WebhookEventRecord> {
  return eventually(
    async () => {
      const events = await ctx.core.db.models.WebhookEvent.find({ topic }).lean<WebhookEventRecord[]>().exec();
      return events.find(match);
    },
    timeoutMs,
    `${topic} event`,
    200,
  );
}
