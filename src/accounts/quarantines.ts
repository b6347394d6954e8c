/**
 * Quarantined credentials (SPEC 6.3: a credential rejected after refresh is quarantined by fingerprint,
 * across restarts, until replaced), the account registry's part for them: the fingerprints the store
 * holds (written by the credential manager, or by another instance sharing the store, SPEC D-2), which
 * accounts they hold back, and the `quarantine` changes a re-read brings (SPEC 9.4): one for each
 * account whose credential's fingerprint is new to the set. Split from registry.ts (2026-12-05).
 */
import type { Account } from "../../pipeline/ports.ts";
import { credentialFingerprint } from "../store/secrets.ts";
import type { AccountState } from "../store/types.ts";

/** A change a re-read found, for the registry to publish. */
export interface QuarantineChange {
  account: Account;
  change: "quarantine";
  /** The quarantine's own reason. */
  reason: string;
}

/** The quarantined fingerprints and the accounts they hold back. */
export class Quarantines {
  private fingerprints = new Set<string>();
  private readonly memo = new WeakMap<object, string | undefined>();

  /** The fingerprint of the account's credential (memoised per credential object); undefined without one. */
  fingerprint(account: Account): string | undefined {
    const cred = account.credential;
    if (!this.memo.has(cred)) this.memo.set(cred, credentialFingerprint(cred));
    return this.memo.get(cred);
  }

  /** Whether the account's credential is quarantined. O(1); no hashing while nothing is quarantined. */
  has(account: Account): boolean {
    return this.fingerprints.size > 0 && this.fingerprints.has(this.fingerprint(account) ?? "");
  }

  /**
   * Replaces the fingerprints with the store's (at start and each re-read) and returns the changes to
   * publish over `accounts` (the registry's list, already the new one): see the module comment. Nothing
   * is returned unless `listening`. O(accounts × new fingerprints).
   */
  load(rows: AccountState["quarantined"], accounts: readonly Account[], listening: boolean): QuarantineChange[] {
    const before = this.fingerprints;
    this.fingerprints = new Set(rows.map((q) => q.fingerprint));
    if (!listening) return [];
    const out: QuarantineChange[] = [];
    for (const q of rows) {
      if (before.has(q.fingerprint)) continue;
      for (const a of accounts) if (this.fingerprint(a) === q.fingerprint) out.push({ account: a, change: "quarantine", reason: q.reason });
    }
    return out;
  }
}
