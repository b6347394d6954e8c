/**
 * Conversation bindings (SPEC A-2): affinity key → the account that last answered the conversation
 * successfully, for 15 minutes. In memory for routing, persisted through the store's buffered
 * `bind()` (shared with other instances on a shared store) and re-read with the account state.
 */
import type { Binding } from "../store/types.ts";

/** SPEC A-2: a binding lasts 15 minutes after the success that wrote it, ms. */
export const BINDING_TTL_MS = 15 * 60_000;

/** The in-memory binding table. Expired entries are dropped on read and on every re-read. */
export class Bindings {
  private m = new Map<string, { accountId: string; expiresAt: number }>();

  /** The bound account and when the binding lapses, or undefined (none, or expired at `now`). */
  get(key: string, now: number): { accountId: string; expiresAt: number } | undefined {
    const b = this.m.get(key);
    if (!b) return undefined;
    if (b.expiresAt <= now) {
      this.m.delete(key);
      return undefined;
    }
    return b;
  }

  /**
   * Binds `key` to `accountId` until `now` + 15 min; returns the binding to persist. A key already in
   * the table has its entry rewritten in place (a conversation's every success binds it again: no new
   * entry per request, issue 17); {@link get}'s callers read an entry at once and keep none.
   */
  set(key: string, accountId: string, now: number): Binding {
    const expiresAt = now + BINDING_TTL_MS;
    const b = this.m.get(key);
    if (b) {
      b.accountId = accountId;
      b.expiresAt = expiresAt;
    } else {
      this.m.set(key, { accountId, expiresAt });
    }
    return { key, accountId, expiresAt };
  }

  /** Merges stored bindings (a re-read) and drops expired ones; the later expiry wins per key. */
  load(stored: Binding[], now: number): void {
    for (const [k, b] of this.m) if (b.expiresAt <= now) this.m.delete(k);
    for (const s of stored) {
      if (s.expiresAt <= now) continue;
      const cur = this.m.get(s.key);
      if (!cur || cur.expiresAt < s.expiresAt) this.m.set(s.key, { accountId: s.accountId, expiresAt: s.expiresAt });
    }
  }

  /** Forgets every in-memory binding (admin reset, tests); stored ones come back with the next re-read. */
  clear(): void {
    this.m.clear();
  }

  /** Live bindings per account id (for `accounts status`). */
  countByAccount(now: number): Map<string, number> {
    const out = new Map<string, number>();
    for (const b of this.m.values()) if (b.expiresAt > now) out.set(b.accountId, (out.get(b.accountId) ?? 0) + 1);
    return out;
  }
}

/** The stored key of a conversation binding: per provider, so each provider's cache stays warm. */
export function bindingKey(providerId: string, affinityKey: string): string {
  return `${providerId}|${affinityKey}`;
}
