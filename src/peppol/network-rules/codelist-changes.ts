/**
 * Our own data: changes of the OpenPeppol eDEC code lists published after the version the pinned peppol-id jar ships
 * (see the manifest's `network` entry), applied over it by code-lists.ts. Each row names its source; a row is dropped
 * once a pinned jar carries the change itself.
 */
export interface CodeListChange {
  list: 'participantSchemes' | 'documentTypes';
  /** The ICD of a participant scheme, or `scheme::value` of a document type. */
  key: string;
  removalDate: string;
  source: string;
}

export const CODE_LIST_CHANGES: readonly CodeListChange[] = [
  {
    list: 'participantSchemes',
    key: '0193',
    removalDate: '2026-07-07',
    source: 'OpenPeppol eDEC Code Lists v9.7: 0193 (UBLBE) removed on 2026-07-07',
  },
];
