import type { Server } from 'node:http';
import { loadConfig, type Config } from '../config/load-config';
import { TemporalWorkflowStarter } from '../../api/workflow-client';
import { rulePacksReadiness, requireSelfCheck } from './self-check';
import { composeApp, composeCore, composeDocumentPool, composeIdentity, createMetricsRegistry } from './compose';
import { scheduleReconcile } from '../maintenance/reconcile-schedule';
import { composeWebhookApi } from './webhooks';
import { connectTemporalClient } from '../temporal/client';

export interface RunningApi {
  server: Server;
  url: string;
  stop(): Promise<void>;
}

/** API process: config → database + one Temporal client → createApp → listen; drains on SIGTERM. */
export async function startApi(config: Readonly<Config>): Promise<RunningApi> {
  await requireSelfCheck(config);
  const core = await composeCore(config, 'api');
  const { signingKeys, tokens } = await composeIdentity(core);
  // One Temporal connection for the process: document runs and webhook deliveries start on the same client.
  const temporal = await connectTemporalClient(config.temporal);
  const workflows = TemporalWorkflowStarter.over(temporal, {
    ...config.temporal,
    peppolSendSchedule: config.peppol.sendRetrySchedule,
    emailSendSchedule: config.email.retrySchedule,
  });
  const webhooks = composeWebhookApi(config, core.db.models, temporal.client);

  const documentWork = composeDocumentPool(config, core.logger);
  const metrics = createMetricsRegistry('gateway_api_');
  const app = composeApp(core, { signingKeys, tokens }, workflows, {
    metricsPrefix: 'gateway_api_',
    metrics,
    webhooks: webhooks.services,
    ...(documentWork ? { documentWork } : {}),
    readiness: { rules: rulePacksReadiness(config) },
  });
  const reconcile =
    config.reconcile.intervalMs > 0
      ? scheduleReconcile(
          {
            models: core.db.models,
            blobs: core.db.blobs,
            runs: workflows,
            logger: core.logger,
            metrics,
            prefix: 'gateway_api_',
          },
          config.reconcile,
        )
      : undefined;

  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.http.port, config.http.host, () => resolve(s));
    s.on('error', reject);
  });
  // Uploads of 24 MB on slow links need time; idle keep-alive sockets should not pin the process at shutdown.
  server.requestTimeout = 10 * 60_000;
  server.headersTimeout = 60_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.http.port;
  const url = `http://${config.http.host}:${port}`;
  core.logger.info({ url }, 'API listening');

  return {
    server,
    url,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      reconcile?.stop();
      await webhooks.close();
      await temporal.close();
      await documentWork?.close();
      await core.db.close();
    },
  };
}

if (require.main === module) {
  const config = loadConfig();
  startApi(config).then(
    (api) => {
      const shutdown = () => {
        api.stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', shutdown);
      process.once('SIGINT', shutdown);
    },
    (e: unknown) => {
      console.error('API failed to start:', e instanceof Error ? e.message : e);
      process.exit(1);
    },
  );
}
