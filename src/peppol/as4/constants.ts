/** Namespaces and algorithm URIs of ebMS 3 / AS4 / WS-Security as the Peppol AS4 profile uses them. */

export const NS = {
  soap12: 'http://www.w3.org/2003/05/soap-envelope',
  eb: 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/',
  wsse: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd',
  wsse11: 'http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd',
  wsu: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  xenc: 'http://www.w3.org/2001/04/xmlenc#',
  xenc11: 'http://www.w3.org/2009/xmlenc11#',
  ebbp: 'http://docs.oasis-open.org/ebxml-bp/ebbp-signals-2.0',
  ec: 'http://www.w3.org/2001/10/xml-exc-c14n#',
} as const;

export const ALG = {
  excC14n: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  rsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  attachmentContentSignature:
    'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Content-Signature-Transform',
  attachmentCiphertext: 'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Ciphertext-Transform',
  attachmentContentOnly: 'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Content-Only',
  aes128Gcm: 'http://www.w3.org/2009/xmlenc11#aes128-gcm',
  rsaOaep: 'http://www.w3.org/2009/xmlenc11#rsa-oaep',
  mgf1Sha256: 'http://www.w3.org/2009/xmlenc11#mgf1sha256',
} as const;

export const WSS = {
  x509v3: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3',
  base64Binary: 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary',
  encryptedKeyTokenType: 'http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#EncryptedKey',
} as const;

/** Peppol AS4 profile (P-Mode) values. */
export const PEPPOL_AS4 = {
  agreementRef: 'urn:fdc:peppol.eu:2017:agreements:tia:ap_provider',
  partyIdType: 'urn:fdc:peppol.eu:2017:identifiers:ap',
  initiatorRole: 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator',
  responderRole: 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder',
  defaultMpc: 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/defaultMPC',
  originalSender: 'originalSender',
  finalRecipient: 'finalRecipient',
  compressionGzip: 'application/gzip',
} as const;
