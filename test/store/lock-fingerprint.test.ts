/**
 * A lock's key fingerprint (SPEC 6.3 "until changed", src/accounts/lock-advice.ts) on both backends: set
 * with the lock, read back with it, replaced with it, absent when none was given (an OAuth account's
 * lock, one stored before 2026-12-05), and kept across a reopen (a restart).
 */
import { describe, expect, test } from "bun:test";
import { storeBackends } from "../support/store-backends.ts";

const backends = storeBackends("lock_fingerprint");

for (const backend of backends) {
  describe(backend.name, () => {
    test("a lock keeps the fingerprint it was set with, across a reopen; none when none was given", async () => {
      const { store, reopen } = await backend.open();
      await store.setLock({ accountId: "a", until: null, reason: "401 unauthorized", since: 1000, fingerprint: "ab".repeat(32) });
      await store.setLock({ accountId: "b", until: null, reason: "quota exhausted or account blocked", since: 1000 });
      expect((await store.loadAccountState()).locks).toEqual([
        { accountId: "a", until: null, reason: "401 unauthorized", since: 1000, fingerprint: "ab".repeat(32) },
        { accountId: "b", until: null, reason: "quota exhausted or account blocked", since: 1000 },
      ]);
      // Set again (another lock of the same account): the new fingerprint, or none, replaces the old one.
      await store.setLock({ accountId: "a", until: null, reason: "403 credential rejected", since: 2000, fingerprint: "cd".repeat(32) });
      await store.setLock({ accountId: "b", until: null, reason: "401 unauthorized", since: 2000, fingerprint: null });
      await store.close();
      const again = await reopen();
      const locks = (await again.loadAccountState()).locks;
      expect(locks).toEqual([
        { accountId: "a", until: null, reason: "403 credential rejected", since: 2000, fingerprint: "cd".repeat(32) },
        { accountId: "b", until: null, reason: "401 unauthorized", since: 2000 },
      ]);
      expect("fingerprint" in locks[1]!).toBe(false);
      await again.close();
    });
  });
}
