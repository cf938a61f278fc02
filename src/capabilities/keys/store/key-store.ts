import type { ApiKeyRole } from '../roles.js'

/** An API key as stored: only the SHA-256 hash of the key, never the key. */
export interface ApiKeyRecord {
  id: number
  name: string
  role: ApiKeyRole
  createdAt: string
  lastUsedAt: string | null
  revokedAt: string | null
}

/** The API keys as stored. One implementation per engine, on the database's own connection. */
export interface KeyStore {
  /** Stores a new key's hash; `role` defaults to `write`. */
  createApiKey (name: string, keyHash: string, role?: ApiKeyRole): Promise<ApiKeyRecord>
  /** The active (not revoked) key with this hash. */
  findActiveApiKeyByHash (keyHash: string): Promise<ApiKeyRecord | undefined>
  listApiKeys (): Promise<ApiKeyRecord[]>
  /** Revokes an active key; false when no active key has this id. */
  revokeApiKey (id: number): Promise<boolean>
  /** Records that a key was used; callers throttle it. */
  touchApiKey (id: number, usedAt: Date): Promise<void>
  /**
   * Creates an admin key (the operator's first) only if no key was ever created (revoked ones count),
   * atomically even when several instances try at once; undefined when a key already existed.
   */
  createFirstApiKey (name: string, keyHash: string): Promise<ApiKeyRecord | undefined>
}
