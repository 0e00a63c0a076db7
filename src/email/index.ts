// The e-mail channel's building blocks: mail hook URLs, the invoice mail, the SMTP relay.
export * from './mailto';
export * from './invoice-mail';
export * from './smtp-sender';
