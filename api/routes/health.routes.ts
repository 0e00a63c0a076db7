import type { Request, Response, Router } from 'express';
import type { Registry } from 'prom-client';

export interface HealthDeps {
  checks: Record<string, () => Promise<boolean>>;
  metrics: Registry;
}

/** Liveness, readiness (every dependency reachable) and Prometheus metrics; unauthenticated by design. */
export function registerHealthRoutes(router: Router, deps: HealthDeps): void {
  router.get('/healthz', (_req: Request, res: Response) => {
    res.json({ status: 'ok' });
  });

  router.get('/readyz', async (_req: Request, res: Response) => {
    const names = Object.keys(deps.checks);
    const results = await Promise.all(names.map((n) => withTimeout(deps.checks[n]!(), 3000)));
    const checks = Object.fromEntries(names.map((n, i) => [n, results[i] ? 'ok' : 'unavailable']));
    const ready = results.every(Boolean);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });

  router.get('/metrics', async (_req: Request, res: Response) => {
    res.set('Content-Type', deps.metrics.contentType);
    res.send(await deps.metrics.metrics());
  });
}

async function withTimeout(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([p.catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
