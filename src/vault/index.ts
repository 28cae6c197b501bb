/** Credentials that never enter history (docs/credentials.md): the vault, its backends and the resolution at a tool call. */
export { CredentialUnavailableError, credentialNamesFor, openedVault, resolveCredentials, resolveVaultRef, type CallCredentials } from './credentials';
export { FileVault, VAULT_FILE } from './file-vault';
export { defaultVaultDir, fileVaultKeyring, LOCAL_VAULT_KEY_FILE, openVault, VAULT_ENV, vaultLocation, type OpenVaultOptions, type VaultLocation } from './open-vault';
export { PostgresVault, type PostgresVaultOptions } from './postgres-vault';
export { Vault, type Resolution } from './vault';
export { credentialsProblem, personProblem, SECRET_ENV_PREFIX, secretEnvName, VAULT_REF_PREFIX, vaultNameProblem, vaultRefName } from './vault-names';
export { entryLabel, VaultConfigError, VaultConflictError, VaultUnreadableError, type VaultEntryInfo, type VaultRead, type VaultSecret, type VaultStore, type WriteOptions } from './vault-store';
export { accessToken, grantOf, grantProblem, OAUTH_GRANT_TYPE, type OAuthGrant } from './oauth';
