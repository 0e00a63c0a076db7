import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig } from '../../src/config/load-config';
import { startApi } from '../../src/main/api';
import { connectTemporalClient, temporalClientOver } from '../../src/temporal/client';
import { requireEnv, uniqueDbUri } from '../support/services';

// The one Temporal client seam (src/temporal/client.ts), against the real dev server.
const env = requireEnv();
const server = { address: env.temporalAddress, namespace: 'default' };

describe('the Temporal client seam', () => {
  afterEach(() => jest.restoreAllMocks());

  it('answers the readiness ping for its namespace, and no longer once closed', async () => {
    const temporal = await connectTemporalClient(server);
    expect(temporal.namespace).toBe('default');
    expect(await temporal.ping()).toBe(true);
    const other = await connectTemporalClient({ ...server, namespace: 'no-such-namespace' });
    expect(await other.ping()).toBe(false);
    await other.close();
    await temporal.close();
    expect(await temporal.ping()).toBe(false);
  });

  it("leaves a borrowed connection (the worker's) open when the client over it is closed", async () => {
    const native = await NativeConnection.connect({ address: env.temporalAddress });
    try {
      const temporal = temporalClientOver(native, 'default');
      expect(await temporal.ping()).toBe(true);
      await temporal.close();
      const answer = await native.workflowService.describeNamespace({ namespace: 'default' });
      expect(answer.namespaceInfo?.name).toBe('default');
    } finally {
      await native.close();
    }
  });

  it('gives the API process one connection, shared by document runs and webhook deliveries', async () => {
    // Connection.connect opens through Connection.lazy: every connection the process makes passes here.
    const opened = jest.spyOn(Connection, 'lazy');
    const api = await startApi(
      loadConfig({
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        PORT: '0',
        MONGODB_URI: uniqueDbUri(env.mongodbUri, 'temporalseam'),
        TEMPORAL_ADDRESS: env.temporalAddress,
        RECONCILE_INTERVAL_SECONDS: '0',
        VALIDATION_THREADS: '0',
      }),
    );
    try {
      expect(opened).toHaveBeenCalledTimes(1);
      const ready = await fetch(`${api.url}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      await api.stop();
    }
  });
});
