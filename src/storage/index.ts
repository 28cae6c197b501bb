/** The storage kit every store stands on (blobs, memory log, vault, live output; the codec for AEAD): where it is, its PostgreSQL tables, its sealing. */
export { parseLocation, openAt, type LocationSetting, type StoreLocation } from './location';
export { checkTableName, createTables, inLockedTransaction, openPool, redactedUrl, TablesOnce } from './postgres';
export { aeadOpen, aeadSeal, AEAD_CIPHER, AEAD_OVERHEAD_BYTES, NONCE_BYTES, TAG_BYTES } from './aead';
