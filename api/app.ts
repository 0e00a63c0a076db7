import { randomUUID } from 'node:crypto';
import express, { Router, type Application } from 'express';
import pinoHttp from 'pino-http';
import swaggerUi from 'swagger-ui-express';
import { Histogram, type Registry } from 'prom-client';
import type { Config } from '../src/config/load-config';
import type { Logger } from '../src/observability/logger';
import type { IdentityStore } from '../src/auth/identity-store';
import type { TokenService } from '../src/auth/token-service';
import type { SigningKeyService } from '../src/auth/signing-keys';
import {
  createApiRateLimit,
  createAuthenticate,
  createSubscriptionKeyCheck,
  subscriptionPartnerOf,
} from '../src/auth/authenticate';
import type { BlobStore } from '../src/storage/blob-store';
import type { DirectoryRepository } from '../src/storage/directory.repository';
import type { DocumentRepository } from '../src/storage/document.repository';
import { createTokenRouter } from './routes/token.routes';
import { registerDocumentRoutes } from './routes/documents.routes';
import { registerDocumentListRoutes } from './routes/documents-list.routes';
import { registerReceivedRoutes } from './routes/received.routes';
import { registerTaxReportRoutes } from './routes/tax-report.routes';
import { registerMlsResponseRoutes } from './routes/mls-response.routes';
import { registerInvoiceResponseRoutes } from './routes/invoice-response.routes';
import { registerOrderRoutes } from './routes/orders.routes';
import { registerHealthRoutes } from './routes/health.routes';
import { registerMeRoutes } from './routes/me.routes';
import { registerValidateRoutes } from './routes/validate.routes';
import { registerTransformRoutes } from './routes/transform.routes';
import { registerWebhookRoutes, type WebhookApiServices } from './routes/hooks.routes';
import { registerInboxRoutes } from './routes/inbox.routes';
import { registerPeppolRoutes } from './routes/peppol.routes';
import { registerPeppolMigrationRoutes } from './routes/peppol-migration.routes';
import type { PeppolApiServices } from '../src/peppol/api-services';
import { registerSmpRoutes } from './routes/smp.routes';
import { registerAs4Routes } from './routes/as4.routes';
import type { As4Receiver } from '../src/peppol/as4/receiver';
import { notFoundHandler, problemDetailsHandler } from './problem-details';
import { buildOpenApiDocument } from './openapi';
import type { WorkflowStarter } from './workflow-client';
import type { TransformRunner } from '../src/transform';
import type { ValidatorPool } from '../src/validation';
// A JSON import, so tsc emits package.json into dist/ beside the compiled code.
import packageJson from '../package.json';

export interface AppDeps {
  config: Readonly<Config>;
  logger: Logger;
  metrics: Registry;
  identity: IdentityStore;
  tokens: TokenService;
  signingKeys: SigningKeyService;
  directory: DirectoryRepository;
  documents: DocumentRepository;
  blobs: BlobStore;
  workflows: WorkflowStarter;
  /** Readiness probes by name (database, temporal). */
  readiness: Record<string, () => Promise<boolean>>;
  /** Hooks, events and the delivery log; without it those routes answer 503. */
  webhooks?: WebhookApiServices;
  /** Our SMP, its management API and recipient lookups; without it those routes answer 503. */
  peppol?: PeppolApiServices;
  /** The Peppol AS4 receiver; without it `POST /as4` answers 503. */
  as4?: As4Receiver;
  /**
   * Threads for the synchronous document work of the generic endpoints and downloads (validation, conversion), so a
   * large invoice never holds the event loop; without it that work runs in process (tests on createApp).
   */
  documentWork?: Pick<ValidatorPool, 'validate' | 'transform'>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The HTTP application; no listen(), no environment reads, so tests drive it without a socket. */
export function createApp(deps: AppDeps): Application {
  const { config, logger } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.http.trustProxy);
  app.set('query parser', 'simple');

  app.use(
    pinoHttp({
      logger,
      // A caller's X-Request-Id is kept when well-formed, so logs correlate across systems.
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, err) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      // The software partner a valid Subscription-Key names (spec 2.1 layer 4); the key itself is redacted.
      customProps: (_req, res) => {
        const partnerId = subscriptionPartnerOf(res as { locals?: Record<string, unknown> });
        return partnerId ? { partnerId } : {};
      },
      serializers: {
        req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  app.use(httpMetrics(deps.metrics));

  const openapi = buildOpenApiDocument({
    serverUrl: config.http.publicBaseUrl,
    authUrl: config.auth.baseUrl,
    version: packageJson.version,
  });

  const open = Router();
  registerHealthRoutes(open, { checks: deps.readiness, metrics: deps.metrics });
  open.get('/openapi.json', (_req, res) => {
    res.json(openapi);
  });
  // Our SMP is public, as every SMP: before authentication.
  registerSmpRoutes(open, { basePath: config.peppol.smpBasePath, peppol: deps.peppol });
  app.use(open);
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(undefined, { swaggerOptions: { url: '/openapi.json' } }));
  // Peppol AS4: authenticated by the message signature, not by a bearer token.
  const as4 = Router();
  registerAs4Routes(as4, { receiver: deps.as4, maxMessageBytes: config.as4.maxMessageBytes, logger });
  app.use(as4);
  app.use(
    createTokenRouter({ store: deps.identity, tokens: deps.tokens, signingKeys: deps.signingKeys, config, logger }),
  );
  // The inbox of httpsin hooks: authenticated by the hook's own Basic credentials, not by a bearer token.
  const inbox = Router();
  registerInboxRoutes(inbox, {
    config,
    inbox: deps.webhooks?.inbox,
    documents: deps.documents,
    blobs: deps.blobs,
    subscriptionKeys: deps.identity,
  });
  app.use(inbox);

  const work = deps.documentWork;
  const transform: TransformRunner | undefined = work ? (input, options) => work.transform(input, options) : undefined;
  const api = Router();
  api.use(
    '/api',
    createSubscriptionKeyCheck(config, deps.identity),
    createAuthenticate({ store: deps.identity, tokens: deps.tokens, config }),
    createApiRateLimit(config),
  );
  registerMeRoutes(api, { directory: deps.directory });
  registerWebhookRoutes(api, { directory: deps.directory, webhooks: deps.webhooks });
  registerPeppolRoutes(api, { directory: deps.directory, peppol: deps.peppol });
  registerPeppolMigrationRoutes(api, { directory: deps.directory, peppol: deps.peppol });
  registerDocumentRoutes(api, {
    directory: deps.directory,
    documents: deps.documents,
    blobs: deps.blobs,
    workflows: deps.workflows,
    logger,
    maxUploadBytes: config.http.maxUploadBytes,
    ...(transform ? { transform } : {}),
    hooks: deps.webhooks?.hooks,
  });
  registerReceivedRoutes(api, {
    directory: deps.directory,
    documents: deps.documents,
    blobs: deps.blobs,
    workflows: deps.workflows,
    logger,
    maxUploadBytes: config.http.maxUploadBytes,
  });
  registerTaxReportRoutes(api, {
    directory: deps.directory,
    documents: deps.documents,
    workflows: deps.workflows,
    ...(config.taxReporting.configFile
      ? { taxReporting: { acknowledgementTimeoutMs: config.taxReporting.acknowledgementTimeoutMs } }
      : {}),
  });
  registerDocumentListRoutes(api, {
    directory: deps.directory,
    documents: deps.documents,
    blobs: deps.blobs,
    logger,
  });
  registerMlsResponseRoutes(api, {
    directory: deps.directory,
    documents: deps.documents,
    blobs: deps.blobs,
    workflows: deps.workflows,
  });
  registerInvoiceResponseRoutes(api, {
    directory: deps.directory,
    documents: deps.documents,
    blobs: deps.blobs,
    workflows: deps.workflows,
    maxUploadBytes: config.http.maxUploadBytes,
  });
  registerOrderRoutes(api, {
    directory: deps.directory,
    documents: deps.documents,
    blobs: deps.blobs,
    workflows: deps.workflows,
    logger,
    maxUploadBytes: config.http.maxUploadBytes,
  });
  registerValidateRoutes(api, {
    rulesDir: config.validation.rulesDir,
    acceptedPrevious: config.validation.acceptedPrevious,
    maxUploadBytes: config.http.maxUploadBytes,
    ...(deps.documentWork ? { validator: deps.documentWork } : {}),
  });
  registerTransformRoutes(api, { maxUploadBytes: config.http.maxUploadBytes, ...(transform ? { transform } : {}) });
  app.use(api);

  app.use(notFoundHandler);
  app.use(problemDetailsHandler(logger));
  return app;
}

function httpMetrics(registry: Registry): express.RequestHandler {
  const duration =
    (registry.getSingleMetric('http_request_duration_seconds') as
      Histogram<'method' | 'route' | 'status'> | undefined) ??
    new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
  return (req, res, next) => {
    const end = duration.startTimer();
    res.on('finish', () => {
      // The route template, never the raw path: ids in paths would explode label cardinality.
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      end({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
