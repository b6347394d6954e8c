import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { credentialFingerprint } from "../../src/store/secrets.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { StoreError } from "../../src/store/types.ts";
import { cleanupTempDirs, countRows, fakeClock, tempDir, withRaw } from "./helpers.ts";

afterAll(cleanupTempDirs);

const MIN = 60_000;

describe("account state", () => {
  test("cooldowns, locks, pairings, quarantines and circuits are written through and survive a restart", () => {
    const path = join(tempDir(), "sy.db");
    const clock = fakeClock();
    const t = clock.now();
    const s = openSqliteStore({ path, clock, flushIntervalMs: 60_000 });
    s.setCooldown({ accountId: "a1", model: "claude-x", until: t + 90_000, reason: "429 rate limit", level: 0 });
    s.setCooldown({ accountId: "a1", model: "*", until: t + 5 * MIN, reason: "overloaded", level: 3, since: t - 1 });
    s.setLock({ accountId: "a2", until: null, reason: "quota exhausted" });
    s.setLock({ accountId: "a3", until: t + 60 * MIN, reason: "402" });
    s.removeModel({ accountId: "a1", model: "gpt-9", reason: "404 model not found", until: null });
    const fp = credentialFingerprint({ type: "oauth", accessToken: "at", refreshToken: "rt-123" })!;
    s.quarantine({ fingerprint: fp, accountId: "a4", reason: "refresh rejected" });
    s.setCircuit({ providerId: "glm", openUntil: t + 5 * MIN, reason: "10 consecutive 5xx" });

    // visible to another connection at once, without any flush (write-through)
    expect(countRows(path, "cooldowns")).toBe(2);
    expect(countRows(path, "account_locks")).toBe(2);
    expect(countRows(path, "removed_models")).toBe(1);
    expect(countRows(path, "quarantined_credentials")).toBe(1);
    expect(countRows(path, "provider_circuits")).toBe(1);
    // simulate a crash: no close, no flush; a fresh store on the same file sees everything
    const after = openSqliteStore({ path, clock });
    const st = after.loadAccountState();
    expect(st.cooldowns).toEqual([
      { accountId: "a1", model: "*", until: t + 5 * MIN, reason: "overloaded", level: 3, since: t - 1 },
      { accountId: "a1", model: "claude-x", until: t + 90_000, reason: "429 rate limit", level: 0, since: t },
    ]);
    expect(st.locks).toEqual([
      { accountId: "a2", until: null, reason: "quota exhausted", since: t },
      { accountId: "a3", until: t + 60 * MIN, reason: "402", since: t },
    ]);
    expect(st.removedModels).toEqual([{ accountId: "a1", model: "gpt-9", reason: "404 model not found", until: null, since: t }]);
    expect(st.quarantined).toEqual([{ fingerprint: fp, accountId: "a4", reason: "refresh rejected", since: t }]);
    expect(st.circuits).toEqual([{ providerId: "glm", openUntil: t + 5 * MIN, reason: "10 consecutive 5xx", since: t }]);
    after.close();
    s.close();
  });

  test("replacing and clearing", () => {
    const clock = fakeClock();
    const t = clock.now();
    const s = openSqliteStore({ path: ":memory:", clock });
    s.setCooldown({ accountId: "a", model: "m", until: t + 1000, reason: "r1", level: 0 });
    s.setCooldown({ accountId: "a", model: "m", until: t + 4000, reason: "r2", level: 1 });
    s.setCooldown({ accountId: "a", model: "n", until: t + 4000, reason: "r", level: 0 });
    s.setCooldown({ accountId: "b", model: "m", until: t + 4000, reason: "r", level: 0 });
    expect(s.loadAccountState().cooldowns.filter((c) => c.accountId === "a" && c.model === "m")).toMatchObject([{ until: t + 4000, reason: "r2", level: 1 }]);
    s.clearCooldown("a", "m");
    expect(s.loadAccountState().cooldowns.map((c) => `${c.accountId}/${c.model}`)).toEqual(["a/n", "b/m"]);
    s.clearCooldown("a");
    expect(s.loadAccountState().cooldowns.map((c) => `${c.accountId}/${c.model}`)).toEqual(["b/m"]);

    s.setLock({ accountId: "a", until: null, reason: "ban" });
    s.clearLock("a");
    s.removeModel({ accountId: "a", model: "x", reason: "403", until: null });
    s.removeModel({ accountId: "a", model: "y", reason: "404", until: null });
    s.restoreModel("a", "x");
    expect(s.loadAccountState().removedModels.map((r) => r.model)).toEqual(["y"]);
    s.restoreModel("a");
    s.quarantine({ fingerprint: "f", reason: "r" });
    s.unquarantine("f");
    s.setCircuit({ providerId: "p", openUntil: t + 1 });
    s.clearCircuit("p");
    const st = s.loadAccountState();
    expect([st.locks, st.removedModels, st.quarantined, st.circuits]).toEqual([[], [], [], []]);

    let err: unknown;
    try {
      s.setCooldown({ accountId: "a", model: "m", until: Number.NaN, reason: "x", level: 0 });
    } catch (e) {
      err = e;
    }
    expect((err as StoreError).code).toBe("invalid");
    s.close();
  });

  test("expired rows are ignored on load and pruned", () => {
    const path = join(tempDir(), "sy.db");
    const clock = fakeClock();
    const t = clock.now();
    const s = openSqliteStore({ path, clock, flushIntervalMs: 60_000 });
    s.setCooldown({ accountId: "a", model: "m", until: t + 1000, reason: "short", level: 0 });
    s.setCooldown({ accountId: "a", model: "n", until: t + 10 * MIN, reason: "long", level: 0 });
    s.setLock({ accountId: "a", until: t + 1000, reason: "short" });
    s.setLock({ accountId: "b", until: null, reason: "until changed" });
    s.removeModel({ accountId: "a", model: "x", reason: "temp", until: t + 1000 });
    s.setCircuit({ providerId: "p", openUntil: t + 1000 });
    s.bind({ key: "conv-1", accountId: "a", expiresAt: t + 1000 });
    s.bind({ key: "conv-2", accountId: "a", expiresAt: t + 15 * MIN });
    s.setQuota({ accountId: "a", window: "5h", model: "*", usedPercent: 40, resetAt: t + 1000 });
    s.setQuota({ accountId: "a", window: "weekly", model: "*", remaining: 10, limit: 100, resetAt: t + 10 * MIN });
    s.close();

    clock.advance(1000); // exactly at `until`: expired
    const r = openSqliteStore({ path, clock });
    const st = r.loadAccountState();
    expect(st.cooldowns.map((c) => c.model)).toEqual(["n"]);
    expect(st.locks.map((l) => l.accountId)).toEqual(["b"]);
    expect(st.removedModels).toEqual([]);
    expect(st.circuits).toEqual([]);
    expect(st.bindings).toEqual([{ key: "conv-2", accountId: "a", expiresAt: t + 15 * MIN }]);
    expect(st.quotas).toEqual([{ accountId: "a", window: "weekly", model: "*", remaining: 10, limit: 100, resetAt: t + 10 * MIN, updatedAt: t }]);
    // pruned from the file, not just filtered
    expect(countRows(path, "cooldowns")).toBe(1);
    expect(countRows(path, "account_locks")).toBe(1);
    expect(countRows(path, "removed_models")).toBe(0);
    expect(countRows(path, "provider_circuits")).toBe(0);
    expect(countRows(path, "bindings")).toBe(1);
    expect(countRows(path, "quota_windows")).toBe(1);
    r.close();
  });

  test("bindings and quota windows are buffered, coalesced, and flushed with usage", async () => {
    const path = join(tempDir(), "sy.db");
    const clock = fakeClock();
    const t = clock.now();
    const s = openSqliteStore({ path, clock, flushIntervalMs: 100 });
    for (let i = 0; i < 100; i++) s.bind({ key: "conv", accountId: i % 2 ? "a" : "b", expiresAt: t + i });
    s.setQuota({ accountId: "a", window: "requests", model: "m", remaining: 5 });
    s.setQuota({ accountId: "a", window: "requests", model: "m", remaining: 4 });
    expect(countRows(path, "bindings")).toBe(0);
    await Bun.sleep(250);
    expect(withRaw(path, (db) => db.query("SELECT key, account_id, expires_at FROM bindings").all())).toEqual([
      { key: "conv", account_id: "a", expires_at: t + 99 },
    ]);
    expect(withRaw(path, (db) => db.query("SELECT remaining, updated_at FROM quota_windows").all())).toEqual([{ remaining: 4, updated_at: t }]);
    // unbind removes pending and stored bindings
    s.bind({ key: "other", accountId: "a", expiresAt: t + MIN });
    s.unbind("other");
    s.unbind("conv");
    expect(s.loadAccountState().bindings).toEqual([]);
    s.close();
  });
});

describe("accounts", () => {
  test("upsert, list, credential rotation, disable, models, delete", () => {
    const path = join(tempDir(), "sy.db");
    const clock = fakeClock();
    const s = openSqliteStore({ path, clock });
    s.upsertAccount({
      id: "cx-1",
      providerId: "cx",
      priority: 2,
      maxConcurrency: 3,
      credential: { type: "oauth", accessToken: "at-1", refreshToken: "rt-1", expiresAt: clock.now() + 3600_000, accountId: "org" },
      disabled: false,
    });
    s.upsertAccount({ id: "glm-1", providerId: "glm", priority: 1, proxy: "http://127.0.0.1:3128", credential: { type: "api_key", apiKey: "k" }, disabled: false, source: "config" });
    expect(s.listAccounts().map((a) => a.id)).toEqual(["glm-1", "cx-1"]);
    expect(s.getAccount("glm-1")).toEqual({ id: "glm-1", providerId: "glm", priority: 1, proxy: "http://127.0.0.1:3128", credential: { type: "api_key", apiKey: "k" }, disabled: false, source: "db" });

    s.updateCredential("cx-1", { type: "oauth", accessToken: "at-2", refreshToken: "rt-2", expiresAt: 5 });
    s.setAccountDisabled("glm-1", true);
    s.setAccountModels("cx-1", ["gpt-5.5", "gpt-5.5-mini", "gpt-5.5"]);
    s.setAccountModels("config-acct", ["m"]); // config accounts have discovered models too
    s.setCooldown({ accountId: "cx-1", model: "*", until: clock.now() + MIN, reason: "x", level: 0 });
    s.bind({ key: "conv", accountId: "cx-1", expiresAt: clock.now() + MIN });

    // credential durable before return: a second connection sees the rotated token without a flush
    const cred = withRaw(path, (db) => (db.query("SELECT credential FROM accounts WHERE id = 'cx-1'").get() as { credential: string }).credential);
    expect(JSON.parse(cred).refreshToken).toBe("rt-2");

    const reopened = openSqliteStore({ path, clock });
    s.close();
    const cx = reopened.getAccount("cx-1")!;
    expect(cx).toMatchObject({ maxConcurrency: 3, priority: 2, models: ["gpt-5.5", "gpt-5.5-mini"], source: "db" });
    expect(cx.credential).toEqual({ type: "oauth", accessToken: "at-2", refreshToken: "rt-2", expiresAt: 5 });
    expect(reopened.getAccount("glm-1")!.disabled).toBe(true);
    expect(reopened.loadAccountState().discoveredModels.map((d) => d.accountId)).toEqual(["config-acct", "cx-1"]);

    // upsert keeps discovered models; null forgets them
    reopened.upsertAccount({ ...cx, priority: 9 });
    expect(reopened.getAccount("cx-1")!.models).toEqual(["gpt-5.5", "gpt-5.5-mini"]);
    reopened.setAccountModels("cx-1", null);
    expect(reopened.getAccount("cx-1")!.models).toBeUndefined();

    expect(reopened.deleteAccount("cx-1")).toBe(true);
    expect(reopened.deleteAccount("cx-1")).toBe(false);
    const st = reopened.loadAccountState();
    expect(st.cooldowns).toEqual([]);
    expect(st.bindings).toEqual([]);
    expect(reopened.listAccounts().map((a) => a.id)).toEqual(["glm-1"]);

    const code = (fn: () => void) => {
      try {
        fn();
      } catch (e) {
        return (e as StoreError).code;
      }
    };
    expect(code(() => reopened.updateCredential("nope", { type: "none" }))).toBe("not_found");
    expect(code(() => reopened.setAccountDisabled("nope", true))).toBe("not_found");
    expect(code(() => reopened.upsertAccount({ id: "", providerId: "x", priority: 0, credential: { type: "none" }, disabled: false }))).toBe("invalid");
    expect(code(() => reopened.upsertAccount({ id: "z", providerId: "x", priority: 0, credential: { type: "weird" } as never, disabled: false }))).toBe("invalid");
    reopened.close();
  });

  test("errors about accounts never quote the credential", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path });
    s.upsertAccount({ id: "a", providerId: "p", priority: 0, credential: { type: "api_key", apiKey: "sk-live-TOPSECRET" }, disabled: false });
    withRaw(path, (db) => db.run("UPDATE accounts SET credential = 'sk-live-TOPSECRET{' WHERE id = 'a'"));
    let msg = "";
    try {
      s.listAccounts();
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toContain('"a"');
    expect(msg).not.toContain("TOPSECRET");
    s.close();
  });

  test("credential fingerprints", () => {
    const a = credentialFingerprint({ type: "api_key", apiKey: "k1" });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(credentialFingerprint({ type: "api_key", apiKey: "k2" })).not.toBe(a);
    expect(credentialFingerprint({ type: "oauth", accessToken: "x", refreshToken: "r" })).toBe(credentialFingerprint({ type: "oauth", accessToken: "y", refreshToken: "r" }));
    expect(credentialFingerprint({ type: "oauth", accessToken: "only" })).toBe(credentialFingerprint({ type: "api_key", apiKey: "only" }));
    expect(credentialFingerprint({ type: "none" })).toBeUndefined();
  });
});
