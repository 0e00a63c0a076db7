/**
 * `npm run pki:test [-- --dir <directory>] [-- --force]`: generates the test PKI (see test-pki.ts) outside the
 * repository, or reuses a fresh one, and prints where the files are.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { TEST_PKI_ENTRIES, TEST_PKI_PASSWORD, defaultTestPkiDir, ensureTestPki } from './test-pki';

async function main(argv: string[]): Promise<number> {
  let dir = defaultTestPkiDir();
  let force = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--dir' && argv[i + 1]) dir = path.resolve(argv[++i] as string);
    else if (a === '--force') force = true;
    else {
      process.stderr.write(`unknown argument ${a}\nusage: pki:test [--dir <directory>] [--force]\n`);
      return 2;
    }
  }
  if (force) rmSync(dir, { recursive: true, force: true });
  const { pki, created } = await ensureTestPki(dir);
  process.stdout.write(
    `${created ? 'Generated' : 'Reusing'} the test PKI in ${dir} (PKCS#12 password "${TEST_PKI_PASSWORD}")\n`,
  );
  for (const name of TEST_PKI_ENTRIES) {
    const m = pki[name];
    process.stdout.write(
      `  ${name.padEnd(13)} ${m.certificate.subject.split('\n').join(', ')}  valid to ${m.certificate.validTo}\n`,
    );
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
