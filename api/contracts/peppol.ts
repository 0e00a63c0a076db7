import { z } from 'zod';
import type { RouteContract } from './route-contract';
import type { ContractHelpers } from './webhooks';

/*
 * Contract of the Peppol directory routes (our SMP and its management API) and the recipient lookups (spec 4.4, 4.5;
 * decisions.md "queryRecipientParty", "deliveryOption"; docs/decisions.md "Peppol layer").
 */

const iso = z.string().datetime({ offset: true });

export const CertificateInfo = z
  .object({
    subject: z.string(),
    issuer: z.string(),
    commonName: z.string().nullable(),
    serialNumber: z.string(),
    notBefore: iso,
    notAfter: iso,
    fingerprintSha256: z.string(),
  })
  .meta({ id: 'CertificateInfo' });

export const PeppolService = z
  .object({
    documentTypeId: z.string().describe('`busdox-docid-qns::<value>` (a bare value is taken in that scheme)'),
    processIds: z
      .array(z.string())
      .describe('`cenbii-procid-ubl::<value>` (a bare value is taken in that scheme); default the BIS Billing process'),
  })
  .meta({ id: 'PeppolService' });

export const PeppolEnvironmentConfig = z
  .object({
    tenantId: z.string(),
    accessPoint: z.object({
      endpointUrl: z.string().describe('Our AS4 receiver, as our SMP publishes it (PEPPOL_AP_ENDPOINT_URL)'),
      transportProfile: z.literal('peppol-transport-as4-v2_0'),
      seatId: z.string().nullable(),
      certificate: CertificateInfo.nullable().describe('The certificate our SMP publishes now'),
      certificates: z
        .array(CertificateInfo)
        .describe('Every configured AP certificate (more than one during a rollover)'),
    }),
    smp: z.object({
      url: z.string(),
      available: z.boolean(),
      problem: z.string().optional(),
      signingCertificate: CertificateInfo.nullable(),
    }),
    sml: z.object({ zone: z.string(), registrar: z.string().describe('`sml`, `dns-zone`, `manual` or `off`') }),
    lookups: z.object({ available: z.boolean(), problem: z.string().optional() }),
    defaults: z
      .object({ documentTypes: z.array(PeppolService), reviews: z.boolean() })
      .describe('Used for parties without a configuration of their own'),
    changedOn: iso.nullable(),
  })
  .meta({ id: 'PeppolEnvironmentConfig' });

export const PeppolEnvironmentConfigInput = z
  .object({
    defaults: z.object({ documentTypes: z.array(PeppolService).optional(), reviews: z.boolean().optional() }),
  })
  .passthrough()
  .describe('Only `defaults` is written; the other fields of a GET may be sent back unchanged')
  .meta({ id: 'PeppolEnvironmentConfigInput' });

export const PeppolPartyConfig = z
  .object({
    partyId: z.string(),
    participantId: z.string(),
    configured: z.boolean().describe('false: nothing stored yet, the environment defaults are shown'),
    registered: z.boolean().describe('Published by our SMP and registered in the SML'),
    documentTypes: z.array(PeppolService),
    reviews: z.boolean().describe('MLS as receiving provider (spec 6.4); off by default'),
    smpUrl: z.string(),
    sml: z.object({
      registrar: z.string(),
      state: z.enum(['registered', 'unregistered', 'manual', 'failed', 'pending']),
      error: z.string().nullable(),
      changedOn: iso.nullable(),
    }),
    changedOn: iso.nullable(),
  })
  .meta({ id: 'PeppolPartyConfig' });

export const PeppolPartyConfigInput = z
  .object({
    registered: z.boolean(),
    documentTypes: z
      .array(PeppolService)
      .optional()
      .describe('Default: the stored ones, else the environment defaults'),
    reviews: z.boolean().optional(),
  })
  .passthrough()
  .meta({ id: 'PeppolPartyConfigInput' });

export const PeppolMigrationPrepared = z
  .object({
    partyId: z.string(),
    participantId: z.string(),
    smpUrl: z.string(),
    migrationKey: z.string().describe('For the new provider (out of band); 24 characters of the SML key rule'),
    preparedOn: iso,
    message: z.string(),
  })
  .meta({ id: 'PeppolMigrationPrepared' });

export const PeppolMigrationInput = z
  .object({
    migrationKey: z
      .string()
      .describe(
        'The key the previous provider prepared: 8-24 characters, two each of upper, lower, digits and ' +
          '@#$%()[]{}*^_-!~|+=, no white space',
      ),
    documentTypes: z
      .array(PeppolService)
      .optional()
      .describe('Default: the stored ones, else the environment defaults'),
    reviews: z.boolean().optional(),
  })
  .meta({ id: 'PeppolMigrationInput' });

export const PeppolMigrated = z
  .object({
    partyId: z.string(),
    participantId: z.string(),
    smpUrl: z.string(),
    registered: z.literal(true),
    documentTypes: z.array(PeppolService),
    reviews: z.boolean(),
    sml: z.object({ registrar: z.string(), state: z.literal('registered'), changedOn: iso.nullable() }),
    migratedOn: iso,
  })
  .meta({ id: 'PeppolMigrated' });

export const RecipientQuery = z
  .union([
    z.array(z.string()),
    z.object({ partyIds: z.array(z.string()), metaAttributes: z.record(z.string(), z.unknown()).optional() }),
  ])
  .meta({ id: 'RecipientQuery' });

const Identifier = z.object({
  partyId: z.string(),
  isValid: z.boolean(),
  message: z.string(),
  reason: z
    .enum([
      'participant-unknown',
      'document-type-not-supported',
      'smp-unreachable',
      'certificate-problem',
      'invalid-identifier',
    ])
    .optional(),
});

export const RecipientQueryResult = z
  .object({
    id: z
      .string()
      .describe('The recipient identifier the answer is about: the first reachable one, else the first asked'),
    channel: z
      .string()
      .nullable()
      .describe('Best channel: `peppol`, `peppol-fallback`, or null when nothing is deliverable'),
    description: z.string(),
    message: z.string(),
    options: z.array(z.object({ channel: z.string(), description: z.string(), identifiers: z.array(Identifier) })),
  })
  .meta({ id: 'RecipientQueryResult' });

export const DeliveryOptions = z
  .array(
    z.object({
      partyId: z.string(),
      documentTypeId: z.string(),
      processId: z.string(),
      protocol: z.string().describe('SMP transport profile, `peppol-transport-as4-v2_0`'),
      url: z.string(),
      certificate: z.string().describe('The receiving access point certificate, base64 DER'),
    }),
  )
  .meta({ id: 'DeliveryOptions' });

export function peppolRoutes(h: ContractHelpers): RouteContract[] {
  const { problem } = h;
  const json = (schema: z.ZodType) => ({ 'application/json': schema });
  const unavailable = {
    503: problem(
      'The Peppol layer, our SMP or lookups are not configured (the problem names the setting), or the SML could ' +
        'not be reached',
    ),
  };
  const envLevel = {
    ...h.authenticated,
    400: problem('Invalid request, or a token reaching several tenants without ?tenantId='),
    403: problem('Environment-level configuration needs a client_credentials token of the tenant'),
    ...unavailable,
  };
  const writes = {
    413: problem('Body larger than 64 KB'),
    415: problem('Body is not application/json'),
  };
  const tags = ['Peppol'];
  const smpResponses = {
    200: { description: 'The SMP document', content: { 'application/xml': null } },
    400: problem('Not a percent-encoded `scheme::value` identifier'),
    404: problem('Not registered in this SMP'),
    500: problem('No configured access point certificate is valid now'),
    503: problem('Our SMP is not configured (access point certificate or SMP key missing)'),
  };

  return [
    {
      method: 'get',
      path: '/api/v1/peppol/config',
      summary: 'Peppol configuration of the environment: our access point, SMP, SML and the defaults for parties',
      tags,
      auth: true,
      query: { tenantId: 'For a token reaching several tenants: the tenant to act on' },
      responses: { 200: { description: 'The configuration', content: json(PeppolEnvironmentConfig) }, ...envLevel },
    },
    {
      method: 'put',
      path: '/api/v1/peppol/config',
      summary:
        'Set the environment defaults (document types, reviews) for parties without a configuration of their own',
      tags,
      auth: true,
      query: { tenantId: 'For a token reaching several tenants: the tenant to act on' },
      requestBody: { description: 'The defaults', content: json(PeppolEnvironmentConfigInput) },
      responses: {
        200: { description: 'The configuration', content: json(PeppolEnvironmentConfig) },
        ...envLevel,
        400: problem(
          'Invalid configuration: `errors[]` names each field (identifier syntax, unknown field, operator setting ' +
            'changed)',
        ),
        ...writes,
      },
    },
    {
      method: 'get',
      path: '/api/v1/peppol/config/party/:partyId',
      summary: "A party's Peppol registration: document types it receives, reviews (MLS), SML state",
      tags,
      auth: true,
      params: h.partyParam,
      responses: {
        200: { description: 'The party configuration', content: json(PeppolPartyConfig) },
        ...h.partyScoped,
        ...unavailable,
      },
    },
    {
      method: 'put',
      path: '/api/v1/peppol/config/party/:partyId',
      summary: 'Configure a party in our SMP and register (or unregister) it in the SML',
      tags,
      auth: true,
      params: h.partyParam,
      requestBody: { description: 'The party configuration', content: json(PeppolPartyConfigInput) },
      responses: {
        200: { description: 'The party configuration as stored', content: json(PeppolPartyConfig) },
        ...h.partyScoped,
        400: problem('Invalid configuration (`errors[]`), or the party id cannot be a Peppol participant'),
        409: problem('The participant is configured for another party'),
        ...writes,
        501: problem('No SML registrar is configured (PEPPOL_SML_REGISTRAR)'),
        ...unavailable,
      },
    },
    {
      method: 'post',
      path: '/api/v1/:partyId/salesInvoice/queryRecipientParty',
      summary: 'Whether and how recipients are reachable: Peppol (SML + SMP) and the e-mail fallback channel',
      tags: ['Sales invoices', ...tags],
      auth: true,
      params: h.partyParam,
      query: {
        preferredDocumentTypeId:
          'Document type to check first (`busdox-docid-qns::…` or the bare value); then BIS Billing 3',
        includeOptions: '`false` leaves `options` empty (default true)',
      },
      requestBody: {
        description: 'Recipient identifiers (`<scheme>:<number>`), at most 20',
        content: json(RecipientQuery),
      },
      responses: {
        200: { description: 'A deliverable channel exists', content: json(RecipientQueryResult) },
        404: {
          description: 'Nothing is deliverable; same body, each identifier with its reason',
          content: json(RecipientQueryResult),
        },
        ...h.partyScoped,
        400: problem('Malformed party id, body, or query parameter'),
        ...writes,
        ...unavailable,
      },
    },
    {
      method: 'get',
      path: '/api/v1/peppol/deliveryOption',
      summary: 'Access point URL and certificate per recipient and document type, best first',
      tags,
      auth: true,
      query: {
        partyIds: 'Recipient identifiers, comma-separated or repeated (at most 20)',
        documentFamily: '`Invoice` (the only family so far; default)',
        isCredit: '`true` for credit notes (default false)',
      },
      responses: {
        200: { description: 'Delivery options, best first', content: json(DeliveryOptions) },
        ...h.authenticated,
        400: problem('partyIds missing, unknown documentFamily, isCredit not a boolean'),
        404: problem('No recipient has a Peppol delivery option; `errors[]` gives each reason'),
        ...unavailable,
      },
    },
    {
      method: 'post',
      path: '/api/v1/peppol/:partyId/prepareToMigrate',
      summary:
        'Leaving us: a migration key for the new provider, registered with the SML; we keep serving the party ' +
        'until the new provider has migrated it (EXPERIMENTAL SML client)',
      tags,
      auth: true,
      params: h.partyParam,
      responses: {
        200: { description: 'The key, shown once', content: json(PeppolMigrationPrepared) },
        ...h.partyScoped,
        409: problem('The party is not registered in the SML by this gateway'),
        422: problem('The SML refused the preparation'),
        501: problem('The SML registration configured cannot migrate (needs PEPPOL_SML_REGISTRAR=sml)'),
        ...unavailable,
      },
    },
    {
      method: 'post',
      path: '/api/v1/peppol/:partyId/migrate',
      summary:
        "Joining us: take a party over with the previous provider's key; our SMP publishes it before the SML " +
        'switches (EXPERIMENTAL SML client)',
      tags,
      auth: true,
      params: h.partyParam,
      requestBody: {
        description: 'The key and, optionally, what the party receives',
        content: json(PeppolMigrationInput),
      },
      responses: {
        200: { description: 'Migrated: registered here', content: json(PeppolMigrated) },
        ...h.partyScoped,
        400: problem('Invalid body (`errors[]`): key missing or outside the key rule, unknown field'),
        409: problem('Already registered here, or this key was used already'),
        422: problem('The SML refused the migration (wrong or unprepared key); nothing changed'),
        ...writes,
        501: problem('The SML registration configured cannot migrate (needs PEPPOL_SML_REGISTRAR=sml)'),
        ...unavailable,
      },
    },
    {
      method: 'get',
      path: '/smp/:participantId',
      summary: 'Our SMP: service group of a participant (Peppol SMP 1.x; base path PEPPOL_SMP_BASE_PATH)',
      tags: ['Peppol SMP'],
      auth: false,
      params: { participantId: 'Percent-encoded `iso6523-actorid-upis::<value>`' },
      responses: smpResponses,
    },
    {
      method: 'get',
      path: '/smp/:participantId/services/:documentTypeId',
      summary: 'Our SMP: signed service metadata of a participant and document type',
      tags: ['Peppol SMP'],
      auth: false,
      params: {
        participantId: 'Percent-encoded `iso6523-actorid-upis::<value>`',
        documentTypeId: 'Percent-encoded `busdox-docid-qns::<value>`',
      },
      responses: smpResponses,
    },
  ];
}
