/**
 * SML lookups through a real DNS server on 127.0.0.1 (dns2) and Node's own resolver: the same code path as in
 * production, only the zone and the name server differ.
 */
import { peppolParticipant } from '../../src/peppol/identifiers';
import { PeppolError } from '../../src/peppol/peppol-error';
import { createDnsResolver, legacyCnameName, lookupSmp, naptrName } from '../../src/peppol/sml';
import { LocalDnsZone } from '../support/peppol/local-dns';

const ZONE = 'participant.sml.gateway.test';
let dns: LocalDnsZone;

beforeAll(async () => {
  dns = await new LocalDnsZone().start();
});
afterAll(async () => {
  await dns?.stop();
});

function resolver() {
  return createDnsResolver({ servers: [dns.address], timeoutMs: 1000, tries: 1 });
}

async function refusal(p: Promise<unknown>): Promise<PeppolError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PeppolError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

it('resolves a registered participant through U-NAPTR (Meta:SMP), whatever the case of its value', async () => {
  const p = peppolParticipant('9915:test');
  dns.set(naptrName(p, ZONE), [
    {
      type: 'NAPTR',
      order: 100,
      preference: 10,
      flags: 'U',
      service: 'Meta:SMP',
      regexp: '!^.*$!http://127.0.0.1:8090/smp!',
    },
    {
      type: 'NAPTR',
      order: 50,
      preference: 10,
      flags: 'U',
      service: 'Meta:Other',
      regexp: '!^.*$!http://127.0.0.1:1/wrong!',
    },
  ]);
  // Not normalised on purpose: the hash is over the lower-cased value.
  const r = await lookupSmp(
    { scheme: 'iso6523-actorid-upis', value: '9915:TEST' },
    { zone: ZONE, resolver: resolver() },
  );
  expect(r).toEqual({ smpUrl: 'http://127.0.0.1:8090/smp', dnsName: naptrName(p, ZONE), method: 'naptr' });
  expect(r.dnsName).toBe(`eh5boavaktmbgzyh2a63dz4qov33fvp5nsdvqklucfraayoodw6a.iso6523-actorid-upis.${ZONE}`);
  expect(dns.queries).toContain(`NAPTR ${r.dnsName}`);
});

it('reports an unregistered participant (NXDOMAIN) as final, without retry', async () => {
  const e = await refusal(lookupSmp(peppolParticipant('9915:nobody'), { zone: ZONE, resolver: resolver() }));
  expect([e.reason, e.code, e.retryable]).toEqual(['participant-not-registered', 'NOT_FOUND', false]);
});

it('reports a name without NAPTR records as not registered, and records without Meta:SMP as no matching service', async () => {
  const a = peppolParticipant('9915:only-a-record');
  dns.set(naptrName(a, ZONE), [{ type: 'A', address: '127.0.0.1' }]);
  expect((await refusal(lookupSmp(a, { zone: ZONE, resolver: resolver() }))).reason).toBe('participant-not-registered');

  const other = peppolParticipant('9915:other-service');
  dns.set(naptrName(other, ZONE), [
    { type: 'NAPTR', order: 1, preference: 1, flags: 'U', service: 'Meta:BDXP', regexp: '!^.*$!http://127.0.0.1:1!' },
  ]);
  expect((await refusal(lookupSmp(other, { zone: ZONE, resolver: resolver() }))).reason).toBe(
    'no-matching-smp-service',
  );
});

it('reports a failing name server as a retryable DNS failure', async () => {
  const p = peppolParticipant('9915:servfail');
  dns.fail(naptrName(p, ZONE));
  const e = await refusal(lookupSmp(p, { zone: ZONE, resolver: resolver() }));
  expect([e.reason, e.code, e.retryable]).toEqual(['dns-failure', 'DEPENDENCY_UNAVAILABLE', true]);
});

it('reports an unreachable name server as a retryable DNS failure', async () => {
  const stopped = await new LocalDnsZone().start();
  const address = stopped.address;
  await stopped.stop();
  const e = await refusal(
    lookupSmp(peppolParticipant('9915:unreachable'), {
      zone: ZONE,
      resolver: createDnsResolver({ servers: [address], timeoutMs: 300, tries: 1 }),
    }),
  );
  expect([e.reason, e.retryable]).toEqual(['dns-failure', true]);
});

it('finds a legacy CNAME registration only when the fallback is on', async () => {
  const p = peppolParticipant('9915:legacy');
  const legacy = legacyCnameName(p, ZONE);
  dns.set(legacy, [{ type: 'CNAME', target: 'smp.legacy.gateway.test' }]);
  expect((await refusal(lookupSmp(p, { zone: ZONE, resolver: resolver() }))).reason).toBe('participant-not-registered');
  await expect(lookupSmp(p, { zone: ZONE, resolver: resolver(), legacyCnameFallback: true })).resolves.toEqual({
    smpUrl: `http://${legacy}`,
    dnsName: legacy,
    method: 'cname',
  });
});
