import { peppolParticipant } from '../../../src/peppol/identifiers';
import { PeppolError } from '../../../src/peppol/peppol-error';
import {
  SML_ZONES,
  applyNaptrRegexp,
  base32,
  legacyCnameName,
  lookupSmp,
  naptrHashLabel,
  naptrName,
  type DnsResolverLike,
  type NaptrRecord,
} from '../../../src/peppol/sml';

describe('base32 (RFC 4648 test vectors, without padding)', () => {
  it.each([
    ['', ''],
    ['f', 'MY'],
    ['fo', 'MZXQ'],
    ['foo', 'MZXW6'],
    ['foob', 'MZXW6YQ'],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI'],
  ])('%p → %p', (input, out) => expect(base32(Buffer.from(input))).toBe(out));
});

describe('NAPTR name (known answers from the reference)', () => {
  it.each([
    ['9915:test', 'eh5boavaktmbgzyh2a63dz4qov33fvp5nsdvqklucfraayoodw6a'],
    ['0088:1234567890123', 'sjsyvccmqyjxk3weuapffq4x3umcrf4qryherj4vovhmonh7gccq'],
    ['0088:123abc', 'y7dzfxaf3d4cjz4kcgrxtec6twvcga4ky7zwa5boif6mswd4tdrq'],
    ['0088:123ABC', 'y7dzfxaf3d4cjz4kcgrxtec6twvcga4ky7zwa5boif6mswd4tdrq'],
    ['0010:5798000000001', 'xukhfqabqziki3ykvr2fhr4snfa3pf5vpq6k4tonv3lmvsy5arvq'],
  ])('%s', (value, label) => expect(naptrHashLabel(value)).toBe(label));

  it('appends the scheme and the zone', () => {
    expect(naptrName(peppolParticipant('0088:1234567890123'), SML_ZONES.test)).toBe(
      'sjsyvccmqyjxk3weuapffq4x3umcrf4qryherj4vovhmonh7gccq.iso6523-actorid-upis.participant.sml.test.tech.peppol.org',
    );
    expect(naptrName(peppolParticipant('9915:test'), 'Participant.SML.Prod.Tech.Peppol.org.')).toBe(
      'eh5boavaktmbgzyh2a63dz4qov33fvp5nsdvqklucfraayoodw6a.iso6523-actorid-upis.participant.sml.prod.tech.peppol.org',
    );
    expect(() => naptrName(peppolParticipant('9915:test'), 'not a zone')).toThrow(/not a valid SML DNS zone/);
  });

  it('computes the legacy name from the MD5 of the lower-cased value (peppol-commons known answer)', () => {
    expect(legacyCnameName(peppolParticipant('0088:123ABC'), 'edelivery.tech.ec.europa.eu')).toBe(
      'B-f5e78500450d37de5aabe6648ac3bb70.iso6523-actorid-upis.edelivery.tech.ec.europa.eu',
    );
  });
});

describe('applyNaptrRegexp', () => {
  it.each([
    ['!^.*$!https://smp.example.com!', 'x.y', 'https://smp.example.com'],
    ['!^.*$!http://smp.example.com/path/!', 'x.y', 'http://smp.example.com/path/'],
    ['#^([a-z0-9]+)\\..*$#https://\\1.smp.example#', 'abc.def', 'https://abc.smp.example'],
    ['!^ABC!x!i', 'abc.d', 'x.d'],
    ['!a\\!b!c!', 'a!b', 'c'],
  ])('%s on %s', (field, input, out) => expect(applyNaptrRegexp(field, input)).toBe(out));

  it.each(['', '!^.*$!', '!^.*$!x!y!z', 'a^.*$ax', '!^(!x!', '!^q$!x!'])('gives nothing for %p', (field) =>
    expect(applyNaptrRegexp(field, 'abc')).toBeUndefined(),
  );
});

describe('lookupSmp decisions (scripted resolver)', () => {
  const participant = peppolParticipant('0088:1234567890123');
  const zone = 'participant.sml.example';
  const name = naptrName(participant, zone);
  const rec = (over: Partial<NaptrRecord>): NaptrRecord => ({
    flags: 'U',
    service: 'Meta:SMP',
    regexp: '!^.*$!http://smp.example!',
    replacement: '',
    order: 100,
    preference: 10,
    ...over,
  });
  const err = (code: string) => Object.assign(new Error(`query failed: ${code}`), { code });
  const resolver = (
    naptr: () => Promise<NaptrRecord[]>,
    cname: () => Promise<string[]> = () => Promise.reject(err('ENOTFOUND')),
  ): DnsResolverLike & { asked: string[] } => {
    const asked: string[] = [];
    return {
      asked,
      resolveNaptr: (n) => (asked.push(`NAPTR ${n}`), naptr()),
      resolveCname: (n) => (asked.push(`CNAME ${n}`), cname()),
    };
  };
  async function refusal(p: Promise<unknown>): Promise<PeppolError> {
    try {
      await p;
    } catch (e) {
      if (e instanceof PeppolError) return e;
      throw e;
    }
    throw new Error('expected a refusal');
  }

  it('takes the lowest order, then preference, among U / Meta:SMP records', async () => {
    const r = resolver(async () => [
      rec({ order: 200, regexp: '!^.*$!http://late.example!' }),
      rec({ flags: 'S', order: 1, regexp: '!^.*$!http://wrong-flag.example!' }),
      rec({ service: 'Meta:SMP+other', order: 1, regexp: '!^.*$!http://wrong-service.example!' }),
      rec({ order: 100, preference: 20, regexp: '!^.*$!http://second.example!' }),
      rec({ order: 100, preference: 10, regexp: '!^.*$!https://first.example/!' }),
    ]);
    await expect(lookupSmp(participant, { zone, resolver: r })).resolves.toEqual({
      smpUrl: 'https://first.example',
      dnsName: name,
      method: 'naptr',
    });
    expect(r.asked).toEqual([`NAPTR ${name}`]);
  });

  it('skips records whose regexp does not give an http(s) URL', async () => {
    const r = resolver(async () => [
      rec({ regexp: '!^.*$!ftp://x!' }),
      rec({ order: 101, regexp: '!^.*$!http://ok.example!' }),
    ]);
    await expect(lookupSmp(participant, { zone, resolver: r })).resolves.toMatchObject({ smpUrl: 'http://ok.example' });
  });

  it('tells "not registered" from "no SMP service" from "DNS down"', async () => {
    const gone = await refusal(
      lookupSmp(participant, { zone, resolver: resolver(() => Promise.reject(err('ENOTFOUND'))) }),
    );
    expect([gone.reason, gone.code, gone.retryable]).toEqual(['participant-not-registered', 'NOT_FOUND', false]);
    const noData = await refusal(
      lookupSmp(participant, { zone, resolver: resolver(() => Promise.reject(err('ENODATA'))) }),
    );
    expect(noData.reason).toBe('participant-not-registered');
    const other = await refusal(
      lookupSmp(participant, { zone, resolver: resolver(async () => [rec({ service: 'Meta:BDXP' })]) }),
    );
    expect([other.reason, other.retryable]).toEqual(['no-matching-smp-service', false]);
    for (const code of ['ETIMEOUT', 'ESERVFAIL', 'ECONNREFUSED', 'EREFUSED']) {
      const down = await refusal(lookupSmp(participant, { zone, resolver: resolver(() => Promise.reject(err(code))) }));
      expect([down.reason, down.code, down.retryable]).toEqual(['dns-failure', 'DEPENDENCY_UNAVAILABLE', true]);
    }
  });

  it('tries the legacy CNAME only when enabled', async () => {
    const r = resolver(
      () => Promise.reject(err('ENOTFOUND')),
      async () => ['smp.legacy.example'],
    );
    await expect(lookupSmp(participant, { zone, resolver: r })).rejects.toThrow(/not registered/);
    const legacy = legacyCnameName(participant, zone);
    await expect(lookupSmp(participant, { zone, resolver: r, legacyCnameFallback: true })).resolves.toEqual({
      smpUrl: `http://${legacy}`,
      dnsName: legacy,
      method: 'cname',
    });
  });
});
