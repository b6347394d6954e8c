/**
 * Which credential of an account its quota windows belong to (SPEC A-1, P-5): a new API key (the config
 * file, reloaded) or another subscription login (the admin API's login or import) is a new quota, so the
 * registry drops the account's windows then (registry.ts `forgetQuotas`). A call sent with the old
 * credential may still be on its way: its reply's rate-limit headers, arriving after the change, speak of
 * the old quota and must not be recorded again (until session 45 they were, in memory and in the store).
 *
 * Each change moves the account's generation on; each account object the registry is handed
 * (`setAccounts`) is tagged with its account's generation at that moment. The attempt loop reports a reply
 * with the account object the call was sent with, so a reply whose object is tagged with an older
 * generation than its account's current one was sent with a credential that is no longer the account's.
 * Objects never tagged (the implicit keyless accounts, test doubles) are taken as current.
 */
import type { Account } from "../../pipeline/ports.ts";

/** Quota generations per account id and the generation each account object was listed in. */
export class QuotaGenerations {
  /** Account id → its generation (absent: 0, never changed). */
  private readonly current = new Map<string, number>();
  /** Account object → the generation of its account when it was listed. */
  private readonly listed = new WeakMap<Account, number>();

  /** Tags each account object with its account's current generation (objects already tagged keep theirs). O(accounts). */
  tag(accounts: readonly Account[]): void {
    for (const a of accounts) if (!this.listed.has(a)) this.listed.set(a, this.current.get(a.id) ?? 0);
  }

  /** The account's credential changed (a new key or login): objects listed before are stale from now on. O(1). */
  bump(accountId: string): void {
    this.current.set(accountId, (this.current.get(accountId) ?? 0) + 1);
  }

  /** Whether `account` (the object a call was sent with) was listed before its account's credential last changed. O(1). */
  stale(account: Account): boolean {
    const g = this.listed.get(account);
    return g !== undefined && g < (this.current.get(account.id) ?? 0);
  }
}
