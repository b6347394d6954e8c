/**
 * The way back from a whole-account lock (SPEC 6.3: a 401 or credential 403 on an API key, quota exhausted,
 * a ban, a 402), said wherever the lock shows: `accounts status`, the dashboard's Accounts card, the
 * `account_locked` alert, a passing account test. A lock "until changed" had no way back for an account
 * of the config file until 2026-12-05: it is cleared when the account's key changes (a reload or a
 * restart with another key: the lock keeps the key's fingerprint, {@link replacedLocks}) and by
 * `switchyard accounts unlock ID` (`POST /admin/api/accounts/{id}/unlock`, the card's Unlock button).
 */
import type { Account } from "../../pipeline/ports.ts";

/** A lock as the registry holds it: until when (null: until changed), why, and the API key's fingerprint it was set under. */
export interface HeldLockState {
  until: number | null;
  reason: string;
  /** `credentialFingerprint()` of the API key the lock was set under; absent for an OAuth account's lock and one stored before 2026-12-05. */
  fingerprint?: string;
}

/**
 * What an operator does about `accountId`'s lock, one sentence without a final stop: for an API-key
 * account, replace the key (config file, then `switchyard reload`) or unlock it; for a subscription
 * (OAuth) account, log in or import again, or unlock it; a lock with an end (which it ends by itself
 * at) can be unlocked now. `until`: ms since the epoch, or null (until changed).
 */
export function unlockAdvice(accountId: string, credential: Account["credential"]["type"], until: number | null): string {
  const unlock = `switchyard accounts unlock ${accountId}`;
  if (until !== null) return `${unlock} ends it now`;
  if (credential === "oauth") return `log in again (switchyard login) or import a new credential, or run ${unlock} once the account works again`;
  return `replace the account's key (in the config file, then switchyard reload) or run ${unlock} once the key works again`;
}

/**
 * The way back from a quarantined credential (SPEC 6.3, P-7: the provider rejected a subscription's
 * credential and it could not be refreshed; it stays out until replaced): a new login or import for
 * the same account name, one sentence without a final stop. `kind`: the provider's kind (claude-code,
 * codex), named in the commands when known. Said in `accounts status`, the dashboard's Accounts card
 * and the `account_quarantined` alert.
 */
export function quarantineAdvice(accountId: string, kind: string | undefined): string {
  const k = kind === "claude-code" || kind === "codex" ? kind : "claude-code|codex";
  return `log in again (switchyard login ${k} --account ${accountId}) or import a fresh login (switchyard import ${k} --account ${accountId})`;
}

/**
 * The locks to clear because their account now holds another API key than the one they were set under
 * (SPEC 6.3 "until changed": a key replaced in the config file, then a reload or a restart): [account
 * id, lock] pairs. Locks without a fingerprint, of an account not in `accounts` (another instance's,
 * one removed from the file) or of an OAuth account are kept. O(locks + accounts).
 */
export function replacedLocks(locks: ReadonlyMap<string, HeldLockState>, accounts: readonly Account[], fingerprintOf: (a: Account) => string | undefined): Array<[string, HeldLockState]> {
  if (locks.size === 0) return [];
  const out: Array<[string, HeldLockState]> = [];
  const byId = new Map(accounts.map((a) => [a.id, a]));
  for (const [id, l] of locks) {
    if (l.fingerprint === undefined) continue;
    const a = byId.get(id);
    if (!a || a.credential.type !== "api_key") continue;
    if (fingerprintOf(a) !== l.fingerprint) out.push([id, l]);
  }
  return out;
}
