'use strict';
// The demo `npm start` runs: one gateway that is a Peppol access point on loopback. Its AP key and CA, and its SMP's
// key, are the test PKI (src/peppol/pki/test-pki.ts, files under var/pki); its SML is a local DNS zone
// (scripts/lib/local-sml.js); the seed (src/main/seed-demo.ts) publishes both demo parties in our SMP and
// registers them in that zone. So an invoice from one demo party to the other is looked up (SML → our SMP), sent
// over AS4 to our own receiver, and received by the other party. test/integration/start-demo.test.ts runs the same
// settings.
const path = require('node:path');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
/** The local SML zone's name (any name works: only our own DNS server answers for it). */
const DEMO_SML_ZONE = 'participant.sml.demo.invoice-gateway.test';
/** The demo documents, from the demo sender to the demo receiver. */
const DEMO_DOCUMENTS = {
  invoice: path.join(REPO_ROOT, 'scripts', 'demo', 'invoice.xml'),
  creditNote: path.join(REPO_ROOT, 'scripts', 'demo', 'creditnote.xml'),
  /** To a participant not on Peppol: the e-mail fallback. */
  notOnPeppol: path.join(REPO_ROOT, 'scripts', 'demo', 'invoice-not-on-peppol.xml'),
};
/** Password of the test PKI's PKCS#12 files (TEST_PKI_PASSWORD). */
const PKI_PASSWORD = 'test';

/**
 * The Peppol settings of the demo's API and worker (docs/configuration.md): our AP key (the test PKI's sender
 * certificate, also the one our SMP publishes), the AP CA, our SMP's signing key and the SMP CA lookups trust, and
 * SML lookups in the local zone through its DNS server (`dnsAddress`, `host:port`). `publicBaseUrl` is where the API
 * listens: our SMP and AS4 endpoint are published under it.
 */
function demoPeppolEnv({ pkiDir, dnsAddress, publicBaseUrl }) {
  return {
    PUBLIC_BASE_URL: publicBaseUrl,
    PEPPOL_AP_KEYSTORE: `${path.join(pkiDir, 'ap-sender.p12')}#ap-sender`,
    PEPPOL_AP_KEYSTORE_PASSWORD: PKI_PASSWORD,
    PEPPOL_AP_CA: path.join(pkiDir, 'ap-ca.crt.pem'),
    PEPPOL_SMP_KEYSTORE: path.join(pkiDir, 'smp.p12'),
    PEPPOL_SMP_KEYSTORE_PASSWORD: PKI_PASSWORD,
    PEPPOL_SMP_TRUSTSTORE: path.join(pkiDir, 'smp-ca.crt.pem'),
    PEPPOL_SML_ZONE: DEMO_SML_ZONE,
    // Parties configured later through the Peppol API are published in our SMP; the local zone is the seed's.
    PEPPOL_SML_REGISTRAR: 'manual',
    PEPPOL_DNS_SERVERS: dnsAddress,
    // The demo's SMPs answer plain http on loopback; the Peppol network's are https only.
    PEPPOL_SMP_HTTPS_ONLY: 'false',
  };
}

/**
 * The settings of the demo's reference tax authority (taxsim): the demo's Peppol settings with its own AP key (a
 * certificate of the same AP CA, `taxsim.p12` in the demo PKI), and the SML zone file it registers its participants in
 * (pointing at its own SMP, signed with the demo SMP key). Given on top of demoPeppolEnv's.
 */
function demoTaxsimEnv({ pkiDir, smlZoneFile }) {
  return {
    PEPPOL_AP_KEYSTORE: `${path.join(pkiDir, 'taxsim.p12')}#taxsim`,
    PEPPOL_AP_KEYSTORE_PASSWORD: PKI_PASSWORD,
    TAXSIM_SML_ZONE_FILE: smlZoneFile,
  };
}

/**
 * The demo's tax reporting configuration (TAX_REPORTING_CONFIG, docs/decisions.md "Tax reporting"): every country
 * taxsim serves, both roles, our SPID (`spid`, the digits of 0242:nnnnnn). `participants` maps countries to taxsim's
 * participant ids.
 */
function demoTaxReportingConfig({ spid, participants }) {
  const { VIDA_TDD_DOCUMENT_TYPE_ID, VIDA_TDD_PROCESS_ID } = require(
    path.join(REPO_ROOT, 'dist/src/reporting/tdd/config.js'),
  );
  return {
    version: '1.0.0',
    serviceProviderId: spid,
    documentTypeId: VIDA_TDD_DOCUMENT_TYPE_ID,
    processId: VIDA_TDD_PROCESS_ID,
    authorities: Object.fromEntries(
      Object.entries(participants).map(([cc, receiver]) => [
        cc,
        { id: cc, name: `taxsim ${cc}`, receiver, roles: ['C2', 'C3'] },
      ]),
    ),
  };
}

/** Quotes a shell word when it needs it. */
function sh(word) {
  return /^[A-Za-z0-9_./:=@-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The banner's "try it" lines: a token, the demo invoice from the sender to the receiver, its status, and what the
 * receiver got. `seed` is the output of `admin seed-demo --json`.
 */
function demoCommands({ base, seed, cwd = REPO_ROOT }) {
  const invoice = path.relative(cwd, DEMO_DOCUMENTS.invoice) || DEMO_DOCUMENTS.invoice;
  const creditNote = path.relative(cwd, DEMO_DOCUMENTS.creditNote) || DEMO_DOCUMENTS.creditNote;
  const notOnPeppol = path.relative(cwd, DEMO_DOCUMENTS.notOnPeppol) || DEMO_DOCUMENTS.notOnPeppol;
  const auth = '-H "Authorization: Bearer $TOKEN"';
  return [
    `TOKEN=$(curl -s ${base}/connect/token -d grant_type=client_credentials -d client_id=${sh(seed.clientId)} \\`,
    `  -d client_secret=${sh(seed.clientSecret)} -d scope=ap | jq -r .access_token)`,
    `ID=$(curl -s ${auth} -H 'Content-Type: application/xml' --data-binary @${sh(invoice)} \\`,
    `  ${base}/api/v1/${seed.partyId}/salesInvoice/send | jq -r .id)`,
    `curl -s ${auth} ${base}/api/v1/${seed.partyId}/salesInvoice/$ID/status | jq .state   # "delivered"`,
    `curl -s ${auth} ${base}/api/v1/${seed.partyId}/salesInvoice/$ID/status | jq .taxReport   # step "accepted"`,
    `curl -s ${auth} '${base}/api/v1/events?partyId=${seed.partyId}&topic=InvoiceSent' | jq '.items[].message'`,
    `curl -s ${auth} '${base}/api/v1/events?partyId=${seed.receiverPartyId}&topic=InvoiceReceived' \\`,
    `  | jq -r '.items[].documentId'   # what the receiver got, each one at:`,
    `curl -s ${auth} ${base}/api/v1/${seed.receiverPartyId}/purchaseInvoice/<documentId>/download`,
    `(the credit note: --data-binary @${sh(creditNote)})`,
    `(to a participant not on Peppol, delivered by e-mail into var/mail: --data-binary @${sh(notOnPeppol)};`,
    ` its events: SendInvoice, SendInvoiceFallback, InvoiceSent with protocol "email")`,
  ];
}

module.exports = {
  DEMO_SML_ZONE,
  DEMO_DOCUMENTS,
  demoPeppolEnv,
  demoTaxsimEnv,
  demoTaxReportingConfig,
  demoCommands,
};
