import { z } from 'zod';
import { transformRoutes } from './transform';
import { webhookRoutes } from './webhooks';
import { peppolRoutes } from './peppol';
import { documentRoutes } from './documents';
import { mlsRoutes } from './mls';
import { taxReportRoutes } from './tax-report';
import { invoiceResponseRoutes } from './invoice-response';
import { orderRoutes } from './orders';

/*
 * The public HTTP contract: every route with its responses, as data. api/openapi.ts turns this into the OpenAPI
 * document; tests check that the app serves exactly these routes and that responses match these schemas.
 */

export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string(),
    code: z.string(),
    requestId: z.string(),
  })
  .passthrough()
  .meta({ id: 'Problem', description: 'RFC 9457 problem details' });

export const OAuthError = z
  .object({
    error: z.enum([
      'invalid_request',
      'invalid_client',
      'invalid_grant',
      'invalid_scope',
      'unsupported_grant_type',
      'unauthorized_client',
      'temporarily_unavailable',
    ]),
    error_description: z.string().optional(),
  })
  .meta({ id: 'OAuthError', description: 'RFC 6749 §5.2 error' });

export const TokenResponse = z
  .object({
    access_token: z.string(),
    expires_in: z.number().int(),
    token_type: z.literal('Bearer'),
    scope: z.literal('ap'),
  })
  .meta({ id: 'TokenResponse' });

export const TokenRequest = z
  .object({
    grant_type: z.enum(['client_credentials', 'password']),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
    scope: z.literal('ap'),
    username: z.string().optional(),
    password: z.string().optional(),
  })
  .meta({ id: 'TokenRequest' });

export const Jwks = z
  .object({ keys: z.array(z.object({ kid: z.string(), kty: z.string() }).passthrough()) })
  .meta({ id: 'Jwks' });

export const OpenIdConfiguration = z
  .object({ issuer: z.string(), token_endpoint: z.string(), jwks_uri: z.string() })
  .passthrough()
  .meta({ id: 'OpenIdConfiguration' });

export const Me = z
  .object({
    clientId: z.string(),
    username: z.string().optional(),
    tenantId: z.string().nullable(),
    tenantIds: z.array(z.string()),
    grantType: z.enum(['client_credentials', 'password']),
    scope: z.string(),
    parties: z.array(z.object({ partyId: z.string(), legalEntityId: z.string(), name: z.string() })),
  })
  .meta({ id: 'Me' });

export const DocumentAccepted = z.object({ id: z.string().uuid() }).meta({ id: 'DocumentAccepted' });

/** One fired rule or schema error (decisions.md "Validate"). */
export const ValidationAssertion = z
  .object({
    artifact: z.enum(['schema', 'business-rules']),
    flag: z.enum(['error', 'warning']),
    ruleId: z.string(),
    location: z.string().describe('XPath of the offending node'),
    text: z.string(),
    reasonCode: z.enum(['SV', 'BV', 'BW']),
    ruleSet: z.string().describe('The rule pack that produced it'),
  })
  .meta({ id: 'ValidationAssertion' });

export const DocumentStatus = z
  .object({
    id: z.string().uuid(),
    state: z.string(),
    nextAttemptOn: z
      .string()
      .datetime({ offset: true })
      .optional()
      .describe('While the state is retrying: when the next delivery attempt is due'),
    history: z.array(
      z.object({
        state: z.string(),
        at: z.string().datetime({ offset: true }),
        detail: z.string().optional(),
        channel: z
          .string()
          .optional()
          .describe('The delivery channel of a sending step: its hook id, or peppol for the implicit Peppol channel'),
        nextAttemptOn: z
          .string()
          .datetime({ offset: true })
          .optional()
          .describe('A retry: when the next attempt is due'),
        responseCode: z
          .string()
          .optional()
          .describe("An invoice-response-received entry: the buyer's status code (AB, IP, UQ, CA, RE, AP, PD)"),
      }),
    ),
    buyerResponse: z
      .object({
        statusCode: z.string().describe('Invoice Response 3 status: AB, IP, UQ, CA, RE, AP or PD'),
        at: z.string().datetime({ offset: true }),
        responseDocumentId: z.string().describe('The received Invoice Response (generic download)'),
        detail: z.string().optional(),
      })
      .optional()
      .describe(
        "A sales invoice the buyer answered with an Invoice Response: the latest verdict (the state stays the delivery's)",
      ),
    taxReport: z
      .object({
        step: z
          .enum(['skipped', 'built', 'refused', 'submitted', 'retry', 'accepted', 'rejected', 'failed'])
          .describe('accepted / rejected: the tax authority answered; refused / failed: not reported (final)'),
        at: z.string().datetime({ offset: true }),
        report: z.number().int().min(1).describe("Which report of the document (the gateway's own is 1)"),
        reportType: z.enum(['submit', 'resubmit', 'disregard']),
        detail: z.string().optional(),
      })
      .optional()
      .describe(
        "The document's tax report (digital reporting), the latest step of its latest report; the state stays " +
          "the delivery's",
      ),
    format: z.object({ id: z.string(), name: z.string(), documentType: z.string() }).optional(),
    validation: z
      .object({
        isValid: z.boolean(),
        ruleSets: z.array(
          z.object({ id: z.string(), version: z.string(), outcome: z.enum(['passed', 'failed', 'not-run']) }),
        ),
        errorCount: z.number().int(),
        warningCount: z.number().int(),
        truncated: z.boolean().describe('More assertions fired than the record keeps (errors are kept first)'),
        assertions: z.array(ValidationAssertion),
      })
      .optional()
      .describe('The outcome of the validation step, once it ran'),
  })
  .meta({ id: 'DocumentStatus' });

export const ResendAccepted = z
  .object({
    id: z.string().uuid(),
    state: z.literal('resending'),
    generation: z.number().int().min(1).describe('Which resend of the document this is'),
  })
  .meta({ id: 'ResendAccepted' });

export const RetryNowAccepted = z
  .object({ id: z.string().uuid(), state: z.literal('retrying') })
  .meta({ id: 'RetryNowAccepted' });

export const Health = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
export const Readiness = z
  .object({ status: z.enum(['ready', 'not ready']), checks: z.record(z.string(), z.enum(['ok', 'unavailable'])) })
  .meta({ id: 'Readiness' });

export const ValidationResult = z
  .object({
    isValid: z.boolean(),
    format: z.object({
      id: z.string(),
      name: z.string(),
      customizationId: z.string().optional(),
      profileId: z.string().optional(),
    }),
    ruleSets: z.array(
      z.object({ id: z.string(), version: z.string(), outcome: z.enum(['passed', 'failed', 'not-run']) }),
    ),
    assertions: z.array(ValidationAssertion),
    truncated: z.boolean().optional(),
  })
  .meta({
    id: 'ValidationResult',
    description: 'Outcome of validating one document with the pinned official rule packs',
  });

export type { HttpMethod, ResponseContract, RouteContract } from './route-contract';
import type { ResponseContract, RouteContract } from './route-contract';

const problem = (description: string): ResponseContract => ({
  description,
  content: { 'application/problem+json': Problem },
});
const oauthError = (description: string): ResponseContract => ({
  description,
  content: { 'application/json': OAuthError },
});

/** Responses every authenticated route can give. */
const authenticated: Record<number, ResponseContract> = {
  401: problem(
    'Missing, invalid or expired token, token without scope `ap`, revoked secret, or invalid Subscription-Key',
  ),
  429: problem('Rate limit exceeded'),
};
const partyScoped: Record<number, ResponseContract> = {
  ...authenticated,
  400: problem('Malformed party identifier'),
  403: problem('The party is not reachable with this token'),
};
const partyParam = { partyId: 'Party identifier `<scheme>:<number>`, e.g. `0106:12345678`' };

export const ROUTES: RouteContract[] = [
  {
    method: 'post',
    path: '/connect/token',
    summary: 'Obtain an access token (client_credentials or password grant, scope ap)',
    tags: ['Identity'],
    auth: false,
    requestBody: {
      description: 'Form-encoded token request; client credentials in the body or as HTTP Basic',
      content: { 'application/x-www-form-urlencoded': TokenRequest },
    },
    responses: {
      200: { description: 'Token issued', content: { 'application/json': TokenResponse } },
      400: oauthError('invalid_request, invalid_grant, invalid_scope or unsupported_grant_type'),
      401: oauthError('invalid_client (WWW-Authenticate: Basic)'),
      405: oauthError('Method other than POST (Allow: POST)'),
      429: oauthError('Too many token requests for this client (temporarily_unavailable, Retry-After)'),
      503: oauthError('Identity store unavailable (temporarily_unavailable, Retry-After)'),
    },
  },
  {
    method: 'get',
    path: '/.well-known/jwks.json',
    summary: 'Public keys that verify access tokens',
    tags: ['Identity'],
    auth: false,
    responses: { 200: { description: 'JSON Web Key Set', content: { 'application/jwk-set+json': Jwks } } },
  },
  {
    method: 'get',
    path: '/.well-known/openid-configuration',
    summary: 'Identity server metadata',
    tags: ['Identity'],
    auth: false,
    responses: { 200: { description: 'Metadata', content: { 'application/json': OpenIdConfiguration } } },
  },
  {
    method: 'get',
    path: '/api/v1/me',
    summary: 'The caller: client, user, tenant and reachable parties',
    tags: ['Identity'],
    auth: true,
    responses: { 200: { description: 'The principal', content: { 'application/json': Me } }, ...authenticated },
  },
  {
    method: 'post',
    path: '/api/v1/:partyId/salesInvoice/send',
    summary: 'Upload a sales invoice for delivery',
    tags: ['Sales invoices'],
    auth: true,
    params: partyParam,
    query: { channel: 'Optional hook id or channel name that forces the delivery channel' },
    headers: { 'X-Service-DocumentId': 'Optional UUID chosen by the caller; makes the upload idempotent' },
    requestBody: {
      description: 'The invoice XML (up to 24 MB), raw or as the single file of a multipart form',
      content: { 'application/xml': null, 'text/xml': null, 'multipart/form-data': null },
    },
    responses: {
      200: { description: 'Stored and processing started', content: { 'application/json': DocumentAccepted } },
      ...partyScoped,
      400: problem(
        'Malformed party identifier, X-Service-DocumentId not a UUID, empty or malformed body, more than one file part',
      ),
      409: problem(
        'This X-Service-DocumentId was already processed, or uploaded with other content; `documentId` names it',
      ),
      413: problem('Body larger than 24 MB; nothing was stored'),
      415: problem('Content-Type or Content-Encoding not accepted, or body not of the declared type'),
      503: problem('Stored, but processing could not be started; retry with the same X-Service-DocumentId'),
    },
  },
  {
    method: 'get',
    path: '/api/v1/:partyId/salesInvoice/:documentId/status',
    summary: 'Processing state and history of a sales invoice',
    tags: ['Sales invoices'],
    auth: true,
    params: { ...partyParam, documentId: 'Document id returned by the upload' },
    responses: {
      200: { description: 'Current state and history', content: { 'application/json': DocumentStatus } },
      ...partyScoped,
      404: problem('No such document for this party'),
    },
  },
  {
    method: 'post',
    path: '/api/v1/:partyId/salesInvoice/:documentId/resend',
    summary: 'Send a sales invoice in InvoiceSentError again (a new run; its history is kept)',
    tags: ['Sales invoices'],
    auth: true,
    params: { ...partyParam, documentId: 'Document id returned by the upload' },
    responses: {
      202: { description: 'The resend started', content: { 'application/json': ResendAccepted } },
      ...partyScoped,
      404: problem('No such document for this party'),
      409: problem('The document is not in InvoiceSentError, or is being sent'),
    },
  },
  {
    method: 'post',
    path: '/api/v1/:partyId/salesInvoice/:documentId/retryNow',
    summary: 'Make the next attempt of a sales invoice waiting between attempts now',
    tags: ['Sales invoices'],
    auth: true,
    params: { ...partyParam, documentId: 'Document id returned by the upload' },
    responses: {
      202: { description: 'The waiting run was woken', content: { 'application/json': RetryNowAccepted } },
      ...partyScoped,
      404: problem('No such document for this party'),
      409: problem('The document is not waiting for a next attempt'),
    },
  },
  {
    method: 'get',
    path: '/api/v1/:partyId/generic/:documentId/download',
    summary: 'The stored document, byte for byte',
    tags: ['Documents'],
    auth: true,
    params: { ...partyParam, documentId: 'Document id' },
    responses: {
      200: {
        description: 'The stored bytes with their content type',
        content: { 'application/xml': null, 'application/pdf': null },
      },
      ...partyScoped,
      404: problem('No such document for this party'),
    },
  },
  {
    method: 'get',
    path: '/api/v1/:partyId/purchaseInvoice/:documentId/download',
    summary: 'A received (purchase) document: byte for byte, or converted to targetFormat',
    tags: ['Documents'],
    auth: true,
    params: { ...partyParam, documentId: 'Document id from the InvoiceReceived event' },
    query: {
      targetFormat:
        'Optional target format URN or id (as POST /api/v1/generic/transform); without it the document as received',
      targetSyntax: 'Optional UBL or CII, for a target URN both syntaxes share',
    },
    responses: {
      200: {
        description:
          'The document; when converted, X-Transform-* headers say what could not be carried over (a Factur-X ' +
          'target answers the PDF/A-3)',
        content: { 'application/xml': null, 'application/pdf': null },
      },
      ...partyScoped,
      400: problem('targetFormat unknown, or that conversion is not supported'),
      404: problem('No such received document for this party'),
      422: problem('The document lacks data the target format requires; the problem lists it'),
    },
  },
  {
    method: 'delete',
    path: '/api/v1/:partyId/purchaseInvoice/:documentId',
    summary: 'Remove a received document and its bytes',
    tags: ['Documents'],
    auth: true,
    params: { ...partyParam, documentId: 'Document id from the InvoiceReceived event' },
    responses: {
      204: { description: 'Removed' },
      ...partyScoped,
      404: problem('No such received document for this party'),
    },
  },
  {
    method: 'post',
    path: '/api/v1/generic/validate',
    summary:
      'Validate a document (XML or Factur-X PDF) with the pinned official schemas and business rules; nothing is ' +
      'stored',
    tags: ['Documents'],
    auth: true,
    query: {
      sourceFormat: 'Optional format id or URN that overrides detection',
      ruleSet:
        'Optional comma-separated rule pack ids (`id` or `id@version`) that replace the packs chosen from the format',
    },
    requestBody: {
      description: 'The document (up to 24 MB)',
      content: { 'application/xml': null, 'text/xml': null, 'application/pdf': null },
    },
    responses: {
      200: {
        description: 'Validation result (a failed validation is still 200, with isValid false)',
        content: { 'application/json': ValidationResult },
      },
      ...authenticated,
      400: problem(
        'Body not XML or unsafe XML, format not recognised or refused (e.g. SI-UBL 1.2), unknown sourceFormat or ' +
          'ruleSet',
      ),
      413: problem('Body larger than 24 MB'),
      415: problem('Content-Type or Content-Encoding not accepted, or body not of the declared type'),
      422: problem('The rules could not be evaluated on this document'),
      501: problem('No validation rules are available for the detected format'),
      503: problem(
        'A rule pack or the schema validator is missing or fails its checksum on this server; the problem names it',
      ),
    },
  },
  {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness',
    tags: ['Operations'],
    auth: false,
    responses: { 200: { description: 'Process is up', content: { 'application/json': Health } } },
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: database and Temporal reachable',
    tags: ['Operations'],
    auth: false,
    responses: {
      200: { description: 'Ready', content: { 'application/json': Readiness } },
      503: { description: 'A dependency is unavailable', content: { 'application/json': Readiness } },
    },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    tags: ['Operations'],
    auth: false,
    responses: { 200: { description: 'Prometheus text format', content: { 'text/plain': null } } },
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This OpenAPI document',
    tags: ['Operations'],
    auth: false,
    responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': null } } },
  },
  {
    method: 'post',
    path: '/as4',
    summary:
      'Peppol AS4 receiving endpoint (ebMS 3 / AS4, Peppol AS4 profile): authenticated by the message signature, ' +
      'not by a token',
    tags: ['Peppol'],
    auth: false,
    requestBody: {
      description:
        'A signed, encrypted and compressed AS4 user message: multipart/related with the SOAP 1.2 envelope first ' +
        'and the SBD as the one attachment',
      content: { 'multipart/related': null },
    },
    responses: {
      200: {
        description:
          'The signed non-repudiation receipt, or a signed ebMS error signal (refusals, as phase4 answers them)',
        content: { 'application/soap+xml': null },
      },
      413: {
        description: 'Message over AS4_MAX_MESSAGE_BYTES: a signed ebMS error; nothing stored',
        content: { 'application/soap+xml': null },
      },
      503: {
        description:
          'The message could not be stored (signed EBMS:0202, retry), or no AP key is configured (text/plain)',
        content: { 'application/soap+xml': null, 'text/plain': null },
      },
    },
  },
  ...webhookRoutes({ problem, authenticated, partyScoped, partyParam }),
  ...peppolRoutes({ problem, authenticated, partyScoped, partyParam }),
  ...transformRoutes({ problem, authenticated }),
  ...documentRoutes({ problem, partyScoped, partyParam, DocumentStatus, DocumentAccepted }),
  ...mlsRoutes({ problem, authenticated }),
  ...taxReportRoutes({ problem, partyScoped, partyParam }),
  ...invoiceResponseRoutes({ problem, partyScoped, partyParam }),
  ...orderRoutes({ problem, partyScoped, partyParam, DocumentStatus, DocumentAccepted }),
];

export function findRoute(method: string, path: string): RouteContract | undefined {
  return ROUTES.find((r) => r.method === method.toLowerCase() && r.path === path);
}
