/**
 * Quarantined credentials (SPEC 6.3: a credential rejected after refresh is quarantined by fingerprint,
 * across restarts, until replaced), the account registry's part for them: the fingerprints the store
 * holds (written by the credential manager, or by another instance sharing the store, SPEC D-2), which
 * accounts they hold back, and the `account_state` changes a re-read brings (SPEC 9.4).
 *
 * A re-read publishes `quarantine` for each account whose credential's fingerprint is new to the set, and
 * `unquarantine` for each listed account that was quarantined at the last re-read and no longer is: its
 * fingerprint was lifted (a login or import of the same credential), or its credential was replaced (a
 * new login or import: the old fingerprint stays quarantined, the new credential is not). Until
 * 2026-12-05 a quarantine lifted elsewhere, or through this instance's own admin API, reached this
 * instance without an event: a dashboard open here kept showing the account quarantined.
 */
import type { Account } from "../../pipeline/ports.ts";
import { credentialFingerprint } from "../store/secrets.ts";
import type { AccountState } from "../store/types.ts";

/** A change a re-read found, for the registry to publish. */
export interface QuarantineChange {
  account: Account;
  change: "quarantine" | "unquarantine";
  /** The quarantine's own reason (`quarantine`), or what lifted it (`unquarantine`). */
  reason: string;
}

/** The quarantined fingerprints and the accounts they hold back. */
export class Quarantines {
  private fingerprints = new Set<string>();
  /** Each fingerprint's reason, as last read. */
  private reasons = new Map<string, string>();
  /** The listed accounts quarantined at the last re-read: id → the quarantine's reason and the credential's fingerprint. */
  private held = new Map<string, { reason: string; fingerprint: string }>();
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

  /** The reason the account's credential is quarantined for (as the credential manager wrote it), or undefined when it is not. */
  reasonOf(account: Account): string | undefined {
    if (!this.has(account)) return undefined;
    return this.reasons.get(this.fingerprint(account)!) ?? "rejected";
  }

  /**
   * Replaces the fingerprints with the store's (at start and each re-read) and returns the changes to
   * publish over `accounts` (the registry's list, already the new one): see the module comment. `lifting`
   * names what lifts an account's quarantine through this instance (the registry's `lift`: "cleared by a
   * new login"); any other lift reads "lifted elsewhere". Nothing is returned unless `listening`.
   * O(accounts) when any credential is or was quarantined, else O(1).
   */
  load(rows: AccountState["quarantined"], accounts: readonly Account[], listening: boolean, lifting: (accountId: string) => string | undefined): QuarantineChange[] {
    const before = this.fingerprints;
    const heldBefore = this.held;
    this.fingerprints = new Set(rows.map((q) => q.fingerprint));
    this.reasons = new Map(rows.map((q) => [q.fingerprint, q.reason]));
    this.held = new Map();
    if (this.fingerprints.size > 0) {
      for (const a of accounts) {
        const fp = this.fingerprint(a);
        if (fp !== undefined && this.fingerprints.has(fp)) this.held.set(a.id, { reason: this.reasons.get(fp) ?? "quarantined", fingerprint: fp });
      }
    }
    if (!listening) return [];
    const out: QuarantineChange[] = [];
    for (const q of rows) {
      if (before.has(q.fingerprint)) continue;
      for (const a of accounts) if (this.fingerprint(a) === q.fingerprint) out.push({ account: a, change: "quarantine", reason: q.reason });
    }
    if (heldBefore.size === 0) return out;
    for (const a of accounts) {
      const was = heldBefore.get(a.id);
      if (!was || this.held.has(a.id)) continue;
      const replaced = this.fingerprint(a) !== was.fingerprint;
      const how = lifting(a.id) ?? (replaced ? "lifted elsewhere: the account's credential was replaced" : "lifted elsewhere");
      out.push({ account: a, change: "unquarantine", reason: `quarantine (${was.reason}) ${how}` });
    }
    return out;
  }
}
