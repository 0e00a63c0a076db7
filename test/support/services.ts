// Server addresses for server-backed tests. `npm test` (scripts/test.js) starts the servers and
// exports their addresses; running jest directly skips that, so say how to fix it instead of timing out.

export interface TestServices {
  temporalAddress: string;
  mongodbUri: string;
}

export function requireEnv(env: NodeJS.ProcessEnv = process.env): TestServices {
  const temporalAddress = env.TEMPORAL_ADDRESS;
  const mongodbUri = env.MONGODB_URI;
  const missing = [!temporalAddress && 'TEMPORAL_ADDRESS', !mongodbUri && 'MONGODB_URI'].filter(Boolean);
  if (!temporalAddress || !mongodbUri) {
    throw new Error(
      `${missing.join(' and ')} not set: server-backed tests need the servers that \`npm test\` starts. ` +
        'Run `npm test -- <path>` instead of jest directly, or start them with ' +
        '`node scripts/services.js start` and export the printed variables.',
    );
  }
  return { temporalAddress, mongodbUri };
}

/**
 * The same server as `base` with a database of its own, so test files do not see each other's data.
 * Database names are letters only (FerretDB's rule), so non-letters in `suffix` are dropped.
 */
export function uniqueDbUri(base: string, suffix: string): string {
  const letters = suffix.replace(/[^A-Za-z]/g, '');
  if (!letters) throw new Error(`suffix "${suffix}" has no letters to name a database with`);
  const m = /^(mongodb(?:\+srv)?:\/\/[^/?#]+)(?:\/([^?#]*))?(\?[^#]*)?$/.exec(base);
  if (!m) throw new Error(`not a MongoDB URI: ${base}`);
  const [, hosts, db, query] = m;
  const baseName = (db ?? '').replace(/[^A-Za-z]/g, '') || 'test';
  // MongoDB caps database names at 64 bytes.
  const name = `${baseName}${letters}`.slice(0, 63);
  return `${hosts}/${name}${query ?? ''}`;
}

/**
 * Environment for a worker started as a child process from dist/: the prebuilt workflow bundle when `npm test` made
 * one (the worker then starts in about a second instead of bundling).
 */
export function workerBundleEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const bundle = env.TEST_WORKFLOW_BUNDLE;
  return bundle ? { TEMPORAL_WORKFLOW_BUNDLE: bundle } : {};
}
