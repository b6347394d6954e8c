/**
 * The accounts role of the store (SPEC A-1, P-6, P-7, P-9): accounts created through the CLI, admin API
 * or login, their credentials (written durably) and discovered models. Conventions: see `./types.ts`.
 */
import type { Account, Credential } from "../../pipeline/ports.ts";
import type { Awaitable } from "./types.ts";

/** An account to create or replace; `source` is ignored (stored accounts are always `db`). */
export type AccountInput = Omit<Account, "source" | "models"> & { source?: Account["source"] };

/** A config-file account's credential after a refresh by the gateway. */
export interface CredentialOverride {
  accountId: string;
  /** Hex SHA-256 of the access token the file held when the refresh happened. */
  baseFingerprint: string;
  credential: Credential;
}

/** Stored accounts and credentials. */
export interface AccountStore {
  /** Accounts created through the CLI, admin API or login (source `db`), by priority then id. */
  listAccounts(): Awaitable<Account[]>;

  /** One stored account, or undefined. */
  getAccount(id: string): Awaitable<Account | undefined>;

  /**
   * Creates or replaces a stored account (durably: the credential survives a power loss once this
   * returns). Discovered models are kept. @throws StoreError `invalid` for an empty id or provider.
   */
  upsertAccount(account: AccountInput): Awaitable<void>;

  /**
   * Replaces an account's credential (OAuth refresh). Durable before it returns/resolves, so a rotated
   * refresh token is never lost (SPEC P-7). @throws StoreError `not_found`.
   */
  updateCredential(id: string, credential: Credential): Awaitable<void>;

  /**
   * Records the refreshed credential of a config-file account, durably, keyed by the fingerprint of the
   * file's credential it replaces (SPEC P-7); it applies only while the file still holds that credential.
   */
  setCredentialOverride(accountId: string, baseFingerprint: string, credential: Credential): Awaitable<void>;
  /** Every credential override of config-file accounts. */
  listCredentialOverrides(): Awaitable<CredentialOverride[]>;
  /** Forgets the override of an account. */
  clearCredentialOverride(accountId: string): Awaitable<void>;

  /** Enables or disables a stored account. @throws StoreError `not_found`. */
  setAccountDisabled(id: string, disabled: boolean): Awaitable<void>;

  /**
   * Deletes a stored account together with its account state (cooldowns, locks, pairings, quotas,
   * bindings, discovered models). Quarantined fingerprints are kept. @returns false when absent.
   */
  deleteAccount(id: string): Awaitable<boolean>;

  /**
   * Records the models an account (config or stored) advertised through discovery (SPEC P-6);
   * null forgets them (= not discovered).
   */
  setAccountModels(id: string, models: string[] | null): Awaitable<void>;
}
