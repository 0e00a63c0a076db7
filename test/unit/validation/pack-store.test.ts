import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GatewayError } from '../../../src/core/gateway-error';
import { createValidator, loadManifest, RulePackStore } from '../../../src/validation';
import { corpusFile } from '../../support/corpus';
import { RULES_DIR, requirePacks } from './support';

// Packs load on first use (a SEF of several MB) and a machine under load validates slower.
jest.setTimeout(180_000);

const manifest = loadManifest();
const XR = manifest.packs.find((p) => p.id === 'xrechnung-ubl')!;

async function refusal(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('rule pack store', () => {
  let dir: string;
  beforeAll(() => requirePacks(['xrechnung-ubl', 'ubl-2.1', 'en16931-ubl']));
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rules-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function copyPack(id: string, version: string): string {
    const to = path.join(dir, id, version);
    cpSync(path.join(RULES_DIR, id, version), to, { recursive: true });
    return to;
  }

  it('loads an intact pack once and keeps it in memory', async () => {
    copyPack(XR.id, XR.version);
    const store = new RulePackStore(dir, manifest);
    const a = await store.get('xrechnung-ubl');
    expect(a.kind).toBe('schematron');
    expect(await store.get('xrechnung-ubl')).toBe(a);
    expect(store.status().find((s) => s.id === 'xrechnung-ubl')).toMatchObject({ ready: true });
  });

  it('refuses a missing pack and names it', async () => {
    const e = await refusal(new RulePackStore(dir, manifest).get('xrechnung-ubl'));
    expect(e.code).toBe('DEPENDENCY_UNAVAILABLE');
    expect(e.retryable).toBe(false);
    expect(e.details).toMatchObject({ reason: 'RULE_PACK_MISSING', pack: 'xrechnung-ubl', version: XR.version });
    expect(e.message).toContain('xrechnung-ubl 3.0.2');
    expect(e.message).toContain('npm run rules:fetch');
  });

  it('refuses a pack whose official file does not match its pinned sha256', async () => {
    const to = copyPack(XR.id, XR.version);
    const rel = Object.keys(XR.sources[0]!.sha256)[0]!;
    const file = path.join(to, 'files', rel);
    writeFileSync(file, readFileSync(file, 'utf8').replace('BR-DE-1', 'BR-DE-X'));
    const store = new RulePackStore(dir, manifest);
    const e = await refusal(store.get('xrechnung-ubl'));
    expect(e.details).toMatchObject({ reason: 'RULE_PACK_CHECKSUM_MISMATCH', pack: 'xrechnung-ubl' });
    expect(e.message).toMatch(/XRechnung-UBL-validation\.xslt has sha256 [0-9a-f]{64}, expected [0-9a-f]{64}/);
    expect(store.status().find((s) => s.id === 'xrechnung-ubl')).toMatchObject({
      ready: false,
      problem: 'RULE_PACK_CHECKSUM_MISMATCH',
    });
  });

  it('refuses a tampered compiled stylesheet', async () => {
    const to = copyPack(XR.id, XR.version);
    const sef = path.join(to, 'stylesheet-0.sef.json');
    writeFileSync(sef, `${readFileSync(sef, 'utf8')} `);
    const e = await refusal(new RulePackStore(dir, manifest).get('xrechnung-ubl'));
    expect(e.details).toMatchObject({ reason: 'RULE_PACK_CHECKSUM_MISMATCH' });
    expect(e.message).toContain('compiled XRechnung-UBL-validation.xslt');
  });

  it('refuses a pack built from another manifest entry', async () => {
    const to = copyPack(XR.id, XR.version);
    const stampFile = path.join(to, 'pack.json');
    const stamp = JSON.parse(readFileSync(stampFile, 'utf8')) as { fingerprint: string };
    stamp.fingerprint = 'f'.repeat(64);
    writeFileSync(stampFile, JSON.stringify(stamp));
    const e = await refusal(new RulePackStore(dir, manifest).get('xrechnung-ubl'));
    expect(e.details).toMatchObject({ reason: 'RULE_PACK_STALE' });
  });

  it('refuses a pack id the manifest does not have', async () => {
    const e = await refusal(new RulePackStore(dir, manifest).get('no-such-pack'));
    expect(e.details).toMatchObject({ reason: 'RULE_PACK_UNKNOWN', pack: 'no-such-pack' });
  });

  it(
    'makes the validator refuse before validating when one selected pack is missing, and recover once it is ' + 'there',
    async () => {
      // Schema and EN 16931 present, XRechnung missing.
      copyPack('ubl-2.1', '2.1');
      copyPack('en16931-ubl', '1.3.16');
      const v = createValidator({ rulesDir: dir });
      const doc = corpusFile('facturx/mustang/TESTXRECHNUNG_INVDSS_012015776085.XML');
      const e = await refusal(v.validate(doc));
      expect(e.details).toMatchObject({ reason: 'RULE_PACK_MISSING', pack: 'xrechnung-ubl' });
      copyPack(XR.id, XR.version);
      const r = await v.validate(doc);
      expect(r.ruleSets.map((s) => s.id)).toEqual(['ubl-2.1', 'en16931-ubl', 'xrechnung-ubl']);
    },
  );
});
