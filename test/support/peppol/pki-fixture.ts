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

/** The access-point settings of a gateway using the test PKI's `key` (ap-sender, ap-receiver) and its AP CA. */
export function testApEnv(key: 'ap-sender' | 'ap-receiver'): Record<string, string> {
  return {
    PEPPOL_AP_KEYSTORE: `${path.join(TEST_PKI_DIR, `${key}.p12`)}#${key}`,
    PEPPOL_AP_KEYSTORE_PASSWORD: 'test',
    PEPPOL_AP_CA: path.join(TEST_PKI_DIR, 'ap-ca.crt.pem'),
  };
}
