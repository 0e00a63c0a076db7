import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ROUTES } from './contracts';

/** `/api/v1/:partyId/x` → `/api/v1/{partyId}/x` */
export function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function contentOf(content: Record<string, z.ZodType | null>) {
  return Object.fromEntries(
    Object.entries(content).map(([type, schema]) => [
      type,
      { schema: schema ?? (type.includes('json') ? z.unknown() : z.string()) },
    ]),
  );
}

/** Builds the OpenAPI 3.1 document from the route contract table. */
export function buildOpenApiDocument(options: { serverUrl: string; authUrl: string; version: string }) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearer', {
    type: 'oauth2',
    description: 'Client credentials or password grant against {auth_url}/connect/token, scope `ap`.',
    flows: {
      clientCredentials: { tokenUrl: `${options.authUrl}/connect/token`, scopes: { ap: 'Access point API' } },
      password: { tokenUrl: `${options.authUrl}/connect/token`, scopes: { ap: 'Access point API' } },
    },
  });
  registry.registerComponent('securitySchemes', 'hookBasic', {
    type: 'http',
    scheme: 'basic',
    description: 'The user:password of the httpsin hook URL (httpsin://user:password@inbound?token=$token$).',
  });
  for (const r of ROUTES) {
    const params = r.params
      ? z.object(Object.fromEntries(Object.entries(r.params).map(([k, d]) => [k, z.string().describe(d)])))
      : undefined;
    const query = r.query
      ? z.object(Object.fromEntries(Object.entries(r.query).map(([k, d]) => [k, z.string().optional().describe(d)])))
      : undefined;
    const headers = r.headers
      ? z.object(Object.fromEntries(Object.entries(r.headers).map(([k, d]) => [k, z.string().optional().describe(d)])))
      : undefined;
    registry.registerPath({
      method: r.method,
      path: toOpenApiPath(r.path),
      summary: r.summary,
      tags: r.tags,
      ...(r.auth === 'hookBasic'
        ? { security: [{ hookBasic: [] }] }
        : r.auth
          ? { security: [{ bearer: ['ap'] }] }
          : {}),
      request: {
        ...(params ? { params } : {}),
        ...(query ? { query } : {}),
        ...(headers ? { headers } : {}),
        ...(r.requestBody
          ? { body: { description: r.requestBody.description, content: contentOf(r.requestBody.content) } }
          : {}),
      },
      responses: Object.fromEntries(
        Object.entries(r.responses).map(([status, resp]) => [
          status,
          { description: resp.description, ...(resp.content ? { content: contentOf(resp.content) } : {}) },
        ]),
      ),
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Invoice Gateway API',
      version: options.version,
      description:
        'E-invoicing gateway: Peppol access point with a REST service layer. Errors are RFC 9457 problem+json.',
    },
    servers: [{ url: options.serverUrl }],
  });
}
