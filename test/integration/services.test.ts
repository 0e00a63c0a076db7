import { Connection } from '@temporalio/client';
import mongoose from 'mongoose';
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
