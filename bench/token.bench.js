'use strict';
// Token endpoint benchmark: client_credentials requests per second on POST /connect/token (form body) against the
// real API process.

const gateway = require('./lib/gateway');
const { runLoad, brokenReason } = require('./lib/load');
const cpu = require('./lib/cpu');

const CONCURRENCY = 20;
// The default limit (RATE_LIMIT_TOKEN_PER_MINUTE=120 per client) would answer nearly every request 429.
const TOKEN_RATE_LIMIT = '1000000000';

const PLANS = {
  full: { warmupS: 3, measureS: 20 },
  quick: { warmupS: 1, measureS: 5 },
};

async function run(ctx) {
  const plan = ctx.quick ? PLANS.quick : PLANS.full;
  const result = { scenarios: [], figures: [], targets: [], notes: [], problems: [], profiles: [] };
  result.notes.push(
    `API env: RATE_LIMIT_TOKEN_PER_MINUTE=${TOKEN_RATE_LIMIT} (default 120 per client per minute; raised so the endpoint, not the limiter, is measured)`,
    'one client with one active secret; grant client_credentials, scope ap, credentials in the form body',
  );

  ctx.log('token: starting API');
  const gw = await gateway.startGateway({
    svc: ctx.svc,
    logDir: ctx.logDir,
    label: 'token',
    worker: false,
    env: { RATE_LIMIT_TOKEN_PER_MINUTE: TOKEN_RATE_LIMIT },
    cpuProfileDir: ctx.cpuProfileDir,
  });
  try {
    const creds = await gateway.seedTenant(gw);
    await gateway.fetchToken(gw, creds); // fails loudly if the grant does not work at all
    const request = {
      method: 'POST',
      path: '/connect/token',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: gateway.tokenForm(creds),
    };
    ctx.log('token: warm-up');
    const warm = await runLoad({
      url: gw.url,
      title: 'warm-up',
      connections: CONCURRENCY,
      durationS: plan.warmupS,
      request,
    });
    if (brokenReason(warm)) result.problems.push(`warm-up: ${brokenReason(warm)}`);
    ctx.log(`token: ${CONCURRENCY} clients for ${plan.measureS} s`);
    await gw.startProfiles();
    const m = await cpu.measureCpu({ api: gw.api.pid, ...ctx.serverPids }, () =>
      runLoad({
        url: gw.url,
        title: `client_credentials, ${CONCURRENCY} clients`,
        connections: CONCURRENCY,
        durationS: plan.measureS,
        request,
      }),
    );
    result.profiles.push(
      ...(await gw.stopProfiles('token')).map((p) => ({ ...p, pass: `client_credentials, ${CONCURRENCY} clients` })),
    );
    const r = m.result;
    const crashed = gw.crashed();
    if (crashed.length) throw new Error(crashed.join('\n'));
    result.scenarios.push({
      id: 'token-client-credentials',
      label: `client_credentials, ${CONCURRENCY} clients`,
      payloadBytes: request.body.length,
      ...r,
      cpu: m.duringPass ? cpu.cpuCost(m, r.ok, ctx.cores) : undefined,
    });
    if (brokenReason(r)) result.problems.push(`token run: ${brokenReason(r)}`);
    else if (r.ok === 0) result.problems.push('token run: no token issued during the pass');
    result.figures.push({
      id: 'token-rps',
      label: 'token endpoint requests per second (2xx)',
      value: r.rps,
      unit: 'req/s',
    });
    return result;
  } finally {
    await gw.stop();
    if (ctx.svc.providers.database === 'env') await gateway.dropDatabase(ctx.svc.mongodbUri, gw.dbName).catch(() => {});
  }
}

module.exports = {
  name: 'token',
  title: 'Token endpoint: POST /connect/token (real API process)',
  run,
};
