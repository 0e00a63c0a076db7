import type { Application } from 'express';
import type { Response } from 'supertest';
import { findRoute } from '../../api/contracts';

/**
 * Fails when a response is not one the contract table (and so the OpenAPI document) describes: an undeclared status,
 * an undeclared media type, or a body that does not parse with the declared schema.
 */
export function expectContract(method: string, path: string, res: Response): void {
  const route = findRoute(method, path);
  if (!route) throw new Error(`${method.toUpperCase()} ${path} is not in api/contracts`);
  const declared = route.responses[res.status];
  if (!declared)
    throw new Error(`${method.toUpperCase()} ${path} answered ${res.status}, which the contract does not declare`);
  const mediaType = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  const content = declared.content ?? {};
  if (!(mediaType in content)) {
    throw new Error(
      `${method.toUpperCase()} ${path} ${res.status} answered ${mediaType}; declared: ${Object.keys(content).join(', ') || 'no body'}`,
    );
  }
  const schema = content[mediaType];
  if (schema) {
    const parsed = schema.safeParse(res.body);
    if (!parsed.success) {
      throw new Error(
        `${method.toUpperCase()} ${path} ${res.status} body does not match the contract: ${JSON.stringify(parsed.error.issues)}`,
      );
    }
  }
}

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every (method, path) the Express app actually serves. */
export function servedRoutes(app: Application): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [m, on] of Object.entries(layer.route.methods))
          if (on && m !== '_all') out.push({ method: m, path: layer.route.path });
      } else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return out;
}
