import os from 'node:os';
import path from 'node:path';
import { ensureTestPki, type TestPki } from './test-pki';

/** Shared by all test files and runs (outside the repository); regenerated when missing or near expiry. */
export const TEST_PKI_DIR = path.join(os.tmpdir(), 'invoice-gateway-test-pki');

let cached: Promise<TestPki> | undefined;

export function testPki(): Promise<TestPki> {
  cached ??= ensureTestPki(TEST_PKI_DIR).then((r) => r.pki);
  return cached;
}
