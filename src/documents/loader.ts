import { GatewayError } from '../core/gateway-error';
import type { BlobStore } from '../storage/blob-store';
import type { DocumentRepository, StoredDocument } from '../storage/document.repository';

/** Where a step finds a document's record and bytes, and how it shows it is alive while it reads them. */
export interface DocumentStore {
  documents: DocumentRepository;
  blobs: BlobStore;
  maxDocumentBytes: number;
  /** Called while bytes stream and while a long exchange waits (the activity heartbeat in the worker). */
  heartbeat: () => void;
}

/** The record (one keyed read), or DOCUMENT_NOT_FOUND. */
export async function findDocument(
  store: DocumentStore,
  tenantId: string,
  documentId: string,
): Promise<StoredDocument> {
  const stored = await store.documents.findStored(tenantId, documentId);
  if (!stored) throw new GatewayError('DOCUMENT_NOT_FOUND', `document ${documentId} not found`);
  return stored;
}

/** Stored bytes, with a heartbeat per chunk (the SDK throttles heartbeats, so this costs nothing). */
export function readBytes(store: DocumentStore, blobId: string): Promise<Buffer> {
  return store.blobs.read(blobId, store.maxDocumentBytes, () => store.heartbeat());
}

/** The one document loader: record, then its bytes. */
export async function loadDocument(
  store: DocumentStore,
  tenantId: string,
  documentId: string,
): Promise<{ stored: StoredDocument; bytes: Buffer }> {
  const stored = await findDocument(store, tenantId, documentId);
  return { stored, bytes: await readBytes(store, stored.blobId) };
}

/** Runs `work` with a heartbeat every 5 s (the Peppol steps' heartbeat timeout is 30 s). */
export async function whileBeating<T>(heartbeat: () => void, work: () => Promise<T>): Promise<T> {
  heartbeat();
  const beat = setInterval(heartbeat, 5_000);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}
