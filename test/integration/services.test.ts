import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import mongoose from 'mongoose';
import { eventually } from '../support/poll';
import { requireEnv, uniqueDbUri } from '../support/services';
import { DocumentIdAttribute, TenantIdAttribute } from '../../workflows/contracts/search-attributes';

// Checks that the servers `npm test` provides are the real thing, so other suites can rely on them.
const env = requireEnv();

describe('database started for the tests', () => {
  let conn: mongoose.Connection;

  beforeAll(async () => {
    conn = await mongoose.createConnection(uniqueDbUri(env.mongodbUri, 'servicescheck')).asPromise();
  });
  afterAll(async () => {
    await conn.dropDatabase().catch(() => undefined);
    await conn.close();
  });

  it('answers ping', async () => {
    const res = await conn.db!.admin().command({ ping: 1 });
    expect(res.ok).toBe(1);
  });

  it('stores and finds documents, and reports unique index violations as 11000', async () => {
    const Thing = conn.model(
      'Thing',
      new mongoose.Schema({ key: { type: String, required: true, unique: true }, n: Number }),
    );
    await Thing.init();
    await Thing.create({ key: 'a', n: 1 });
    const found = await Thing.findOne({ key: 'a' }).lean();
    expect(found?.n).toBe(1);
    await expect(Thing.create({ key: 'a', n: 2 })).rejects.toMatchObject({ code: 11000 });
    expect(await Thing.countDocuments()).toBe(1);
  });
});

describe('Temporal server started for the tests', () => {
  let connection: Connection;

  beforeAll(async () => {
    connection = await Connection.connect({ address: env.temporalAddress });
  });
  afterAll(async () => {
    await connection.close();
  });

  it('has the default namespace', async () => {
    const res = await connection.workflowService.describeNamespace({ namespace: 'default' });
    expect(res.namespaceInfo?.name).toBe('default');
  });

  it('has the search attributes the workflows use', async () => {
    const res = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    expect(Object.keys(res.customAttributes ?? {})).toEqual(
      expect.arrayContaining([TenantIdAttribute.name, DocumentIdAttribute.name]),
    );
  });
});

/* eslint-disable @typescript-eslint/no-require-imports */
const services = require('../../scripts/lib/services') as {
  SEARCH_ATTRIBUTES: string[];
  findTemporalCli(): string | undefined;
  getFreePort(): Promise<number>;
  temporalChildEnv(): NodeJS.ProcessEnv;
  ensureTemporalSearchAttributes(cli: string, address: string): Promise<void>;
};
/* eslint-enable @typescript-eslint/no-require-imports */

describe('a Temporal database kept from an earlier version (npm start)', () => {
  it('gets the search attributes added since it was made', async () => {
    const cli = services.findTemporalCli();
    if (!cli) throw new Error('the Temporal CLI is not built (npm test builds it)');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-kept-'));
    const port = await services.getFreePort();
    const address = `127.0.0.1:${port}`;
    // A database made without any of the gateway's attributes, as a dev server of an older version made it.
    const server = spawn(
      cli,
      [
        'server',
        'start-dev',
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--namespace',
        'default',
        '--headless',
      ].concat(['--log-level', 'error', '--db-filename', path.join(dir, 'temporal.db')]),
      { env: services.temporalChildEnv(), stdio: 'ignore' },
    );
    let connection: Connection | undefined;
    try {
      connection = await eventually(
        () => Connection.connect({ address, connectTimeout: 1000 }).catch(() => undefined),
        60_000,
        `the Temporal dev server at ${address}`,
        250,
      );
      const c = connection;
      await eventually(
        () =>
          c.workflowService.describeNamespace({ namespace: 'default' }).then(
            () => true,
            () => false,
          ),
        60_000,
        'the default namespace',
        250,
      );
      const names = async () =>
        Object.keys((await c.operatorService.listSearchAttributes({ namespace: 'default' })).customAttributes ?? {});
      expect(await names()).toEqual([]);
      await services.ensureTemporalSearchAttributes(cli, address);
      const expected = services.SEARCH_ATTRIBUTES.map((sa) => sa.split('=')[0]!);
      expect((await names()).sort()).toEqual([...expected].sort());
      // Once they are all there, another start changes nothing.
      await services.ensureTemporalSearchAttributes(cli, address);
      expect((await names()).sort()).toEqual([...expected].sort());
    } finally {
      await connection?.close();
      server.kill('SIGINT');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
