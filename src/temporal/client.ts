import { Client, Connection, type ConnectionLike } from '@temporalio/client';

/**
 * The Temporal client seam: every process makes its one connection here and hands the same `Client` to every part
 * that starts, signals or describes workflows (the document starter, the webhook publisher, reconciliation). The API
 * process and the admin CLI connect with `connectTemporalClient`; the worker already holds the `NativeConnection` its
 * `Worker` polls on and wraps it with `temporalClientOver`, so it opens no second connection.
 */

/** Where the server is: `config.temporal`'s address and namespace. */
export interface TemporalServer {
  address: string;
  namespace: string;
}

export interface TemporalClient {
  readonly client: Client;
  readonly namespace: string;
  /** Whether the server answers for the namespace (the readiness probe). */
  ping(): Promise<boolean>;
  /** Closes the connection when this client opened it; one over a borrowed connection leaves that to its owner. */
  close(): Promise<void>;
}

/** Connects once (at most 10 s): a process that cannot reach Temporal at start stops with the reason. */
export async function connectTemporalClient(server: TemporalServer): Promise<TemporalClient> {
  const connection = await Connection.connect({ address: server.address, connectTimeout: '10s' });
  return clientOn(connection, server.namespace, () => connection.close());
}

/** A client over a connection the process already holds (the worker's `NativeConnection`); close() leaves it open. */
export function temporalClientOver(connection: ConnectionLike, namespace: string): TemporalClient {
  return clientOn(connection, namespace, () => Promise.resolve());
}

function clientOn(connection: ConnectionLike, namespace: string, close: () => Promise<void>): TemporalClient {
  const client = new Client({ connection, namespace });
  return {
    client,
    namespace,
    async ping() {
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return true;
      } catch {
        return false;
      }
    },
    close,
  };
}
