import { loadTaxsimConfig } from '../../../src/config/taxsim-config';

describe('taxsim settings (TAXSIM_*)', () => {
  it('has defaults: 127.0.0.1:8090, the default participants, no zone file', () => {
    expect(loadTaxsimConfig({})).toEqual({
      host: '127.0.0.1',
      port: 8090,
      publicUrl: undefined,
      participants: undefined,
      smlZoneFile: undefined,
      maxTddBytes: 10 * 1024 * 1024,
      maxReports: 5000,
    });
  });

  it('reads participants per country and the other settings', () => {
    const c = loadTaxsimConfig({
      TAXSIM_PORT: '0',
      TAXSIM_PUBLIC_URL: 'http://taxsim.local:9000/',
      TAXSIM_PARTICIPANTS: '{"BE":"0242:000950-taxsim.tax_be","NL":"iso6523-actorid-upis::9944:nl000000000b01"}',
      TAXSIM_SML_ZONE_FILE: '/tmp/zone.json',
      TAXSIM_MAX_REPORTS: '10',
    });
    expect(c).toMatchObject({
      port: 0,
      publicUrl: 'http://taxsim.local:9000',
      participants: { BE: '0242:000950-taxsim.tax_be', NL: 'iso6523-actorid-upis::9944:nl000000000b01' },
      smlZoneFile: '/tmp/zone.json',
      maxReports: 10,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it.each([
    ['TAXSIM_PARTICIPANTS', '{not json', /not JSON/],
    ['TAXSIM_PARTICIPANTS', '{"be":"0242:000950-taxsim.tax_be"}', /country code/],
    ['TAXSIM_PARTICIPANTS', '{"BE":"taxsim"}', /participant id/],
    ['TAXSIM_PARTICIPANTS', '{}', /at least one/],
    ['TAXSIM_PORT', '70000', /TAXSIM_PORT/],
    ['TAXSIM_MAX_TDD_BYTES', '10', /TAXSIM_MAX_TDD_BYTES/],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => loadTaxsimConfig({ [name]: value })).toThrow(message);
  });
});
