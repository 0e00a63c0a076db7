/**
 * The demo `npm start` runs, on the test servers: the same Peppol settings (scripts/lib/demo.js: the test PKI as our AP
 * and SMP keys, SML lookups in a local zone), the same local SML server (scripts/lib/local-sml.js), the same seed
 * (`admin seed-demo --sml-zone-file`) and the same demo invoice, with the API listening on a real loopback port as in
 * `npm start`. The invoice from the demo sender to the demo receiver is looked up through the SML zone and our own
 * SMP, sent over AS4 to our own receiver, and becomes the receiver's purchase document.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Application } from 'express';
import { bundleWorkflowCode, type WorkerOptions } from '@temporalio/worker';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { composeApp, composeIdentity } from '../../src/main/compose';
import { DEMO, JsonZoneFile, seedDemo, type DemoCredentials } from '../../src/main/seed-demo';
import { composeWebhookRoutes } from '../../src/main/webhooks';
import { startWorker, type RunningWorker } from '../../src/main/worker';
import { peppolParticipant, spidOfSeatId } from '../../src/peppol/identifiers';
import { naptrName } from '../../src/peppol/sml';
import { TEST_PKI_DIR, testPki } from '../support/peppol/pki-fixture';
import { eventually } from '../support/poll';
import { requireEnv } from '../support/services';
import { createTestContext, type TestContext } from '../support/test-app';
import { RecordingDeliveryStarter } from '../support/webhook-harness';
import { DELIVERED_AT_FIRST_ATTEMPT } from '../support/sending-network';

/* eslint-disable @typescript-eslint/no-require-imports */
const demo = require('../../scripts/lib/demo') as {
  DEMO_SML_ZONE: string;
  DEMO_DOCUMENTS: { invoice: string; creditNote: string };
  demoPeppolEnv(o: { pkiDir: string; dnsAddress: string; publicBaseUrl: string }): Record<string, string>;
  demoCommands(o: { base: string; seed: DemoCredentials }): string[];
};
const { startLocalSml } = require('../../scripts/lib/local-sml') as {
  startLocalSml(o: { zoneFile: string }): Promise<{ address: string; close(): Promise<void> }>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

interface Status {
  state: string;
  history: { state: string; detail?: string }[];
}
interface EventItem {
  topic: string;
  partyId: string;
  documentId?: string;
  message: string;
  details: Record<string, string>;
}

jest.setTimeout(120_000);

describe('the npm start demo: an invoice from one demo party to the other over Peppol on loopback', () => {
  const { temporalAddress } = requireEnv();
  const taskQueue = `start-demo-${randomUUID()}`;
  let dir: string;
  let sml: { address: string; close(): Promise<void> };
  let server: Server;
  let base: string;
  let app: Application | undefined;
  let ctx: TestContext;
  let starter: TemporalWorkflowStarter;
  let worker: RunningWorker | undefined;
  let seed: DemoCredentials;
  let zoneFile: string;

  beforeAll(async () => {
    await testPki();
    dir = mkdtempSync(path.join(os.tmpdir(), 'start-demo-'));
    zoneFile = path.join(dir, 'sml-zone.json');
    sml = await startLocalSml({ zoneFile });
    // The API on a port of its own, known before the configuration that publishes it (our SMP and AS4 URLs).
    server = createServer((req, res) => {
      if (app) void app(req, res);
      else res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    starter = await TemporalWorkflowStarter.connect({ address: temporalAddress, namespace: 'default', taskQueue });
    ctx = await createTestContext('startdemo', {
      workflows: starter,
      env: {
        ...demo.demoPeppolEnv({ pkiDir: TEST_PKI_DIR, dnsAddress: sml.address, publicBaseUrl: base }),
        TEMPORAL_ADDRESS: temporalAddress,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_METRICS_ADDRESS: '',
        WEBHOOK_SEARCH_ATTRIBUTES: 'false',
      },
    });
    // The API process's composition: Peppol, AS4, our SMP and the hook and events routes.
    app = composeApp(ctx.core, await composeIdentity(ctx.core), starter, {
      metricsPrefix: 'test_',
      webhooks: composeWebhookRoutes(ctx.config, ctx.core.db.models, new RecordingDeliveryStarter()),
    });
    seed = await seedDemo(ctx.core, { smlZone: new JsonZoneFile(zoneFile) });

    const bundle = process.env.TEST_WORKFLOW_BUNDLE;
    const workflowBundle: WorkerOptions['workflowBundle'] = bundle
      ? { codePath: bundle }
      : await bundleWorkflowCode({
          workflowsPath: require.resolve('../../workflows'),
          logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
        });
    worker = await startWorker(ctx.config, { workflowBundle });
  });

  afterAll(async () => {
    await worker?.stop();
    await starter?.close();
    await ctx?.close();
    if (server) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
    await sml?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const call = (token: string, pathname: string, init: RequestInit = {}) =>
    fetch(`${base}${pathname}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });

  async function demoToken(): Promise<string> {
    const res = await fetch(`${base}/connect/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: seed.clientId,
        client_secret: seed.clientSecret,
        scope: 'ap',
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  async function events(token: string, partyId: string, topic: string, documentId: string): Promise<EventItem> {
    return eventually(
      async () => {
        const res = await call(token, `/api/v1/events?partyId=${partyId}&topic=${topic}`);
        const items = res.status === 200 ? ((await res.json()) as { items: EventItem[] }).items : [];
        return items.find((e) => e.documentId === documentId);
      },
      30_000,
      `${topic} for ${partyId}`,
    );
  }

  it('seeds two parties, registered in the local SML zone and published by our SMP for BIS 3 invoices and credit notes', async () => {
    expect(seed).toMatchObject({
      tenantId: DEMO.tenantId,
      partyId: DEMO.partyId,
      receiverPartyId: DEMO.receiverPartyId,
      parties: [DEMO.partyId, DEMO.receiverPartyId],
      smpUrl: `${base}/smp`,
      sml: 'dns-zone',
    });
    const zone = JSON.parse(readFileSync(zoneFile, 'utf8')) as Record<string, { regexp: string }[]>;
    // Both parties, and our service provider id (the test PKI's AP is Seat ID POP000001), which MLS goes to.
    expect(Object.keys(zone).sort()).toEqual(
      [peppolParticipant(DEMO.partyId), peppolParticipant(DEMO.receiverPartyId), spidOfSeatId('POP000001')]
        .map((p) => naptrName(p, demo.DEMO_SML_ZONE))
        .sort(),
    );
    for (const records of Object.values(zone)) expect(records.map((r) => r.regexp)).toEqual([`!^.*$!${base}/smp!`]);

    const group = await fetch(`${base}/smp/iso6523-actorid-upis::${DEMO.receiverPartyId}`);
    expect(group.status).toBe(200);
    const text = decodeURIComponent(await group.text());
    expect(text).toContain('Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc');
    expect(text).toContain('CreditNote-2::CreditNote##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu');

    const token = await demoToken();
    const hook = await call(token, `/api/v1/${DEMO.partyId}/hook/${seed.mailHookId}`);
    expect(hook.status).toBe(200);
    expect(await hook.json()).toMatchObject({
      action: 'mailto',
      url: 'mailto:[receiverEmailAddress]?fallback=demo-fallback@example.test&attach=pdf,xml,attachments',
      topics: ['Send*', 'Send*Fallback'],
      partyId: DEMO.partyId,
    });

    // A second seed (every npm start) changes none of it and issues a new secret.
    const again = await seedDemo(ctx.core, { smlZone: new JsonZoneFile(zoneFile) });
    expect(again.clientSecret).not.toBe(seed.clientSecret);
    expect(again.mailHookId).toBe(seed.mailHookId);
    expect(JSON.parse(readFileSync(zoneFile, 'utf8'))).toEqual(zone);
    seed = again;
  });

  it('delivers the demo invoice from the sender to the receiver: InvoiceSent, and InvoiceReceived with the document', async () => {
    // The banner's commands, in order: token, upload, status.
    expect(demo.demoCommands({ base, seed }).join('\n')).toContain(`${base}/api/v1/${DEMO.partyId}/salesInvoice/send`);
    const token = await demoToken();
    const invoice = readFileSync(demo.DEMO_DOCUMENTS.invoice);
    const upload = await call(token, `/api/v1/${DEMO.partyId}/salesInvoice/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: invoice,
    });
    expect(upload.status).toBe(200);
    const { id } = (await upload.json()) as { id: string };

    const status = await eventually(
      async () => {
        const res = await call(token, `/api/v1/${DEMO.partyId}/salesInvoice/${id}/status`);
        const s = (await res.json()) as Status;
        return ['delivered', 'InvoiceSentError'].includes(s.state) ? s : undefined;
      },
      60_000,
      `the demo invoice ${id} reaching a final state`,
    );
    expect(status.history.at(-1)?.detail ?? '').not.toMatch(/not configured|not installed/);
    expect(status.state).toBe('delivered');
    expect(status.history.map((h) => h.state)).toEqual(DELIVERED_AT_FIRST_ATTEMPT);
    expect(status.history[4]?.detail).toContain(`iso6523-actorid-upis::${DEMO.receiverPartyId} at ${base}/as4`);

    const sent = await events(token, DEMO.partyId, 'InvoiceSent', id);
    expect(sent).toMatchObject({ topic: 'InvoiceSent', details: { recipient: DEMO.receiverPartyId } });

    // The receiver got it through our own AS4 receiver: an InvoiceReceived event and the very bytes uploaded.
    const received = await eventually(
      async () => {
        const res = await call(token, `/api/v1/events?partyId=${DEMO.receiverPartyId}&topic=InvoiceReceived`);
        const items = res.status === 200 ? ((await res.json()) as { items: EventItem[] }).items : [];
        return items.find((e) => e.documentId);
      },
      30_000,
      'InvoiceReceived for the demo receiver',
    );
    expect(received.partyId).toBe(DEMO.receiverLegalEntityId);
    const download = await call(
      token,
      `/api/v1/${DEMO.receiverPartyId}/purchaseInvoice/${received.documentId}/download`,
    );
    expect(download.status).toBe(200);
    const copy = await download.text();
    expect(copy).toMatch(/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)?<Invoice /);
    for (const part of [
      '<cbc:ID>DEMO-2025-0001</cbc:ID>',
      '<cbc:EndpointID schemeID="0106">87654321</cbc:EndpointID>',
      '<cbc:PayableAmount currencyID="EUR">248.05</cbc:PayableAmount>',
    ])
      expect(copy).toContain(part);
  });
});
