import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Application } from 'express';
import { createApp } from '../../api/app';
import type { DeliverWebhookInput } from '../../workflows/contracts/deliver-webhook';
import { composeIdentity, createMetricsRegistry } from '../../src/main/compose';
import { composeWebhookRoutes } from '../../src/main/webhooks';
import type { DeliveryMeta, DeliveryStarter } from '../../src/webhooks/publish';
import type { WebhookApiServices } from '../../api/routes/hooks.routes';
import type { WorkflowStarter } from '../../api/workflow-client';
import { createTestContext, type TestContext } from './test-app';

/** Records delivery starts instead of running workflows (HTTP tests). `running` ids answer as in progress. */
export class RecordingDeliveryStarter implements DeliveryStarter {
  readonly starts: { input: DeliverWebhookInput; meta: DeliveryMeta; mode: 'fresh' | 'redeliver' }[] = [];
  readonly running = new Set<string>();
  async startDelivery(
    input: DeliverWebhookInput,
    meta: DeliveryMeta,
    mode: 'fresh' | 'redeliver',
  ): Promise<'started' | 'already-started' | 'running'> {
    if (this.running.has(input.deliveryId)) return mode === 'fresh' ? 'already-started' : 'running';
    const seen = this.starts.some((s) => s.input.deliveryId === input.deliveryId);
    this.starts.push({ input, meta, mode });
    return mode === 'fresh' && seen ? 'already-started' : 'started';
  }
}

export interface WebhookTestContext extends TestContext {
  /** The app with the webhook routes wired (ctx.app of createTestContext has them unwired). */
  app: Application;
  webhooks: WebhookApiServices;
  /** The app createTestContext built, whose webhook routes answer 503. */
  unwiredApp: Application;
}

/**
 * createTestContext plus the webhook services on the same database: the app is built again with `webhooks` wired.
 * Tokens issued by either app verify in both (the signing keys live in the database).
 */
export async function createWebhookTestContext(
  name: string,
  options: { env?: Record<string, string>; starter: DeliveryStarter; workflows?: WorkflowStarter },
): Promise<WebhookTestContext> {
  const ctx = await createTestContext(name, {
    env: { WEBHOOK_ALLOWED_RANGES: '127.0.0.0/8', WEBHOOK_ALLOW_HTTP: 'true', ...options.env },
    ...(options.workflows ? { workflows: options.workflows } : {}),
  });
  const { signingKeys, tokens } = await composeIdentity(ctx.core);
  const webhooks = composeWebhookRoutes(ctx.config, ctx.core.db.models, options.starter);
  const app = createApp({
    config: ctx.config,
    logger: ctx.core.logger,
    metrics: createMetricsRegistry('test_'),
    identity: ctx.core.identity,
    tokens,
    signingKeys,
    directory: ctx.core.directory,
    documents: ctx.core.documents,
    blobs: ctx.core.db.blobs,
    workflows: ctx.workflows,
    readiness: { database: () => ctx.core.db.ping(), temporal: () => ctx.workflows.ping() },
    webhooks,
  });
  return Object.assign(ctx, { unwiredApp: ctx.app, app, webhooks });
}

/** One request as a receiver saw it: the raw bytes, before any parsing. */
export interface ReceivedRequest {
  at: number;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  json(): Record<string, unknown>;
  /** Resolves when the exchange is over: answered, reset, or dropped by the sender (a timeout). */
  closed: Promise<void>;
}

export type ReceiverReply =
  | { status: number; headers?: Record<string, string>; body?: string }
  /** Never answer (a hung receiver); the connection is closed when the receiver stops. */
  | 'hang'
  /** Destroy the socket without an answer. */
  | 'reset';

export interface TestReceiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides each answer; the default answers 204. */
  reply: (req: ReceivedRequest, index: number) => ReceiverReply | Promise<ReceiverReply>;
  /** Resolves when `n` requests have arrived (bounded). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 with a programmable answer per request. */
export async function startReceiver(reply?: TestReceiver['reply']): Promise<TestReceiver> {
  const sockets = new Set<Socket>();
  const waiters: { n: number; resolve: () => void }[] = [];
  const receiver: TestReceiver = {
    url: '',
    port: 0,
    requests: [],
    reply: reply ?? (() => ({ status: 204 })),
    async waitFor(n, timeoutMs = 30_000) {
      if (receiver.requests.length < n) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () =>
              reject(
                new Error(`receiver got ${receiver.requests.length} requests, expected ${n} within ${timeoutMs} ms`),
              ),
            timeoutMs,
          );
          waiters.push({
            n,
            resolve: () => {
              clearTimeout(timer);
              resolve();
            },
          });
        });
      }
      return receiver.requests.slice(0, n);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const r: ReceivedRequest = {
        at: Date.now(),
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawBody,
        json: () => JSON.parse(rawBody.toString('utf8')) as Record<string, unknown>,
        closed,
      };
      const index = receiver.requests.push(r) - 1;
      for (const w of [...waiters]) {
        if (receiver.requests.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
      Promise.resolve(receiver.reply(r, index)).then(
        (answer) => {
          if (answer === 'hang') return;
          if (answer === 'reset') {
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.status, answer.headers ?? {});
          res.end(answer.body ?? '');
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
