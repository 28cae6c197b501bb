export { BlobMissingError, BlobTamperedError, type BlobBodyStore, type BlobMarker, type BlobStore } from './blob-store';
export { EncryptedBlobStore, type EncryptedBlobStoreOptions, type PlainBlobs } from './encrypted-blob-store';
export { BlobDecryptionError, BlobKeyNotFoundError } from './blob-envelope';
export { blobIdOf, isBlobId } from './blob-id';
export { LocalBlobStore, defaultBlobDir } from './local-blob-store';
export { PostgresBlobStore, type PostgresBlobStoreOptions } from './postgres-blob-store';
export { CachedBlobStore, DEFAULT_BLOB_CACHE_BYTES } from './cached-blob-store';
export { openBlobStore, BLOB_STORE_ENV, BLOB_PLAIN_ENV, type OpenBlobStoreOptions } from './open-blob-store';
