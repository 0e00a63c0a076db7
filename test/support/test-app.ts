import type { ReportTaxInput } from '../../workflows/contracts/report-tax';
import type { SendOrderInput } from '../../workflows/contracts/send-order';
import type { SendOrderResponseInput } from '../../workflows/contracts/send-order-response';
import { randomUUID } from 'node:crypto';
import type { Application } from 'express';
import request from 'supertest';
import type { AppDeps } from '../../api/app';
import type { WorkflowStarter } from '../../api/workflow-client';
import { loadConfig, type Config } from '../../src/config/load-config';
import { GatewayError } from '../../src/core/gateway-error';
import { generateClientSecret, hashClientSecret } from '../../src/auth/secret-hash';
import { composeApp, composeCore, composeIdentity, type Core } from '../../src/main/compose';
import type { RevocationChecker } from '../../src/peppol/pki/revocation';
import type { ReceiveDocumentInput } from '../../workflows/contracts/receive-document';
import type { SendInvoiceInput } from '../../workflows/contracts/send-invoice';
import type { SendMlsInput } from '../../workflows/contracts/send-mls';
import type { SendInvoiceResponseInput } from '../../workflows/contracts/send-invoice-response';
import { requireEnv, uniqueDbUri } from './services';

/** Records a start; 'already-started' when one with the same business key (these fields) was recorded before. */
function record<T>(list: T[], input: T, key: ReadonlyArray<keyof T>): 'started' | 'already-started' {
  const again = list.some((s) => key.every((k) => s[k] === input[k]));
  list.push(input);
  return again ? 'already-started' : 'started';
}

/** Records starts; can be told to fail, to exercise the "stored but not started" path. */
export class RecordingWorkflowStarter implements WorkflowStarter {
  readonly started: SendInvoiceInput[] = [];
  failNext = 0;
  async startSendInvoice(input: SendInvoiceInput): Promise<'started' | 'already-started'> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new GatewayError('WORKFLOW_START_FAILED', 'Temporal unavailable (test)');
    }
    return record(this.started, input, ['tenantId', 'documentId']);
  }
  readonly receiveStarted: ReceiveDocumentInput[] = [];
  async startReceiveDocument(input: ReceiveDocumentInput): Promise<'started' | 'already-started'> {
    return record(this.receiveStarted, input, ['tenantId', 'messageId']);
  }
  readonly invoiceResponsesStarted: SendInvoiceResponseInput[] = [];
  async startSendInvoiceResponse(input: SendInvoiceResponseInput): Promise<'started' | 'already-started'> {
    return record(this.invoiceResponsesStarted, input, ['tenantId', 'documentId', 'statusCode']);
  }
  readonly ordersStarted: SendOrderInput[] = [];
  async startSendOrder(input: SendOrderInput): Promise<'started' | 'already-started'> {
    return record(this.ordersStarted, input, ['tenantId', 'documentId']);
  }
  readonly orderResponsesStarted: SendOrderResponseInput[] = [];
  async startSendOrderResponse(input: SendOrderResponseInput): Promise<'started' | 'already-started'> {
    return record(this.orderResponsesStarted, input, ['tenantId', 'documentId', 'responseCode']);
  }
  readonly taxReportsStarted: ReportTaxInput[] = [];
  async startTaxReport(input: ReportTaxInput): Promise<'started' | 'already-started'> {
    // One run per report number (absent: the first).
    const again = this.taxReportsStarted.some(
      (s) =>
        s.tenantId === input.tenantId &&
        s.documentId === input.documentId &&
        s.report?.sequence === input.report?.sequence,
    );
    this.taxReportsStarted.push(input);
    return again ? 'already-started' : 'started';
  }
  readonly mlsStarted: SendMlsInput[] = [];
  async startSendMls(input: SendMlsInput): Promise<'started' | 'already-started'> {
    return record(this.mlsStarted, input, ['tenantId', 'documentId']);
  }
  async ping(): Promise<boolean> {
    return true;
  }
}

export interface TestClient {
  clientId: string;
  clientSecret: string;
  secretId: string;
}

export interface TestContext {
  app: Application;
  core: Core;
  config: Readonly<Config>;
  workflows: WorkflowStarter;
  /** Creates a client granted the given tenants. */
  createClient(tenantIds: string[]): Promise<TestClient>;
  /** A client_credentials token. */
  token(client: TestClient): Promise<string>;
  /** A password token. */
  passwordToken(client: TestClient, username: string, password: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A real app on a real database (its own per test file) with a real identity server; only Temporal is replaced
 * unless a starter is given.
 */
export async function createTestContext(
  name: string,
  options: {
    workflows?: WorkflowStarter;
    env?: Record<string, string>;
    revocation?: RevocationChecker;
    documentWork?: AppDeps['documentWork'];
  } = {},
): Promise<TestContext> {
  const { mongodbUri } = requireEnv();
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    MONGODB_URI: uniqueDbUri(
      mongodbUri,
      `${name}${randomUUID()
        .replace(/[^a-f]/g, '')
        .slice(0, 8)}`,
    ),
    ...options.env,
  });
  const core = await composeCore(config, 'test');
  const { signingKeys, tokens } = await composeIdentity(core);
  const workflows = options.workflows ?? new RecordingWorkflowStarter();
  const app = composeApp(core, { signingKeys, tokens }, workflows, {
    metricsPrefix: 'test_',
    ...(options.revocation ? { revocation: options.revocation } : {}),
    ...(options.documentWork ? { documentWork: options.documentWork } : {}),
  });

  async function tokenRequest(form: Record<string, string>): Promise<string> {
    const res = await request(app).post('/connect/token').type('form').send(form);
    if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(res.body)}`);
    return (res.body as { access_token: string }).access_token;
  }

  return {
    app,
    core,
    config,
    workflows,
    async createClient(tenantIds) {
      const clientSecret = generateClientSecret();
      const secretId = randomUUID();
      const client = await core.directory.createClient({
        name: 'test',
        tenantIds,
        secret: { id: secretId, hash: await hashClientSecret(clientSecret) },
      });
      return { clientId: client._id, clientSecret, secretId };
    },
    token: (c) =>
      tokenRequest({
        grant_type: 'client_credentials',
        client_id: c.clientId,
        client_secret: c.clientSecret,
        scope: 'ap',
      }),
    passwordToken: (c, username, password) =>
      tokenRequest({
        grant_type: 'password',
        client_id: c.clientId,
        client_secret: c.clientSecret,
        scope: 'ap',
        username,
        password,
      }),
    async close() {
      await core.db.connection.dropDatabase().catch(() => undefined);
      await core.db.close();
    },
  };
}
