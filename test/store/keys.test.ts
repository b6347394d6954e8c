import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { MIGRATIONS, migrate } from "../../src/store/sqlite/migrations.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { StoreError } from "../../src/store/types.ts";
import { cleanupTempDirs, countRows, fileBytes, tempDir, withRaw } from "./helpers.ts";

afterAll(cleanupTempDirs);

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(StoreError);
    return (e as StoreError).code;
  }
  return undefined;
}

describe("stored client keys", () => {
  test("create shows the secret once, stores only its hash; lookup and revoke", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path });
    expect(s.any()).toBe(false);
    const created = s.createKey("laptop", ["admin"], "home");
    expect(created.secret).toMatch(/^sy-[A-Za-z0-9_-]{43}$/);
    expect(created.key).toEqual({ name: "laptop", id: "laptop#1", scopes: ["admin"], tag: "home", source: "db" });
    expect(s.any()).toBe(true);

    // stored hashed: the file holds the hash, never the secret
    let bytes = fileBytes(path);
    expect(bytes.includes(created.secret)).toBe(false);
    expect(bytes.includes(created.secret.slice(3))).toBe(false);
    expect(bytes.includes(sha(created.secret))).toBe(true);

    // listing carries no secret and no hash
    const listed = s.listKeys();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ name: "laptop", scopes: ["admin"], tag: "home", source: "db" });
    expect(listed[0]!.revokedAt).toBeUndefined();
    expect(JSON.stringify(listed)).not.toContain(created.secret);
    expect(JSON.stringify(listed)).not.toContain(sha(created.secret));

    expect(s.lookup(created.secret)).toEqual(created.key);
    expect(s.lookup(`${created.secret}x`)).toBeUndefined();
    expect(s.lookup("")).toBeUndefined();
    expect(s.lookup("x".repeat(10_000))).toBeUndefined();
    expect(s.lookup(undefined as unknown as string)).toBeUndefined();

    expect(s.revokeKey("laptop")).toBe(true);
    expect(s.lookup(created.secret)).toBeUndefined();
    expect(s.any()).toBe(false);
    expect(s.revokeKey("laptop")).toBe(false);
    expect(s.revokeKey("nobody")).toBe(false);
    expect(s.listKeys()[0]!.revokedAt).toBeNumber();
    s.close();

    bytes = fileBytes(path);
    expect(bytes.includes(created.secret)).toBe(false);
  });

  test("keys and revocations survive a reopen; a revoked name can be created again", () => {
    const path = join(tempDir(), "sy.db");
    const a = openSqliteStore({ path });
    const one = a.createKey("one", [], "ci");
    const two = a.createKey("two");
    a.revokeKey("two");
    a.close();

    const b = openSqliteStore({ path });
    expect(b.lookup(one.secret)).toEqual({ name: "one", id: "one#1", scopes: [], tag: "ci", source: "db" });
    expect(b.lookup(two.secret)).toBeUndefined();
    expect(codeOf(() => b.createKey("one"))).toBe("conflict");
    const again = b.createKey("two", ["admin"]);
    expect(again.secret).not.toBe(two.secret);
    expect(b.lookup(again.secret)?.scopes).toEqual(["admin"]);
    expect(b.lookup(two.secret)).toBeUndefined();
    expect(b.listKeys().find((k) => k.name === "two")?.revokedAt).toBeUndefined();
    b.close();
  });

  test("invalid names and scopes are rejected", () => {
    const s = openSqliteStore({ path: ":memory:" });
    expect(codeOf(() => s.createKey(""))).toBe("invalid");
    expect(codeOf(() => s.createKey("a\nb"))).toBe("invalid");
    expect(codeOf(() => s.createKey("x".repeat(200)))).toBe("invalid");
    expect(codeOf(() => s.createKey("ok", [1 as unknown as string]))).toBe("invalid");
    s.close();
    expect(codeOf(() => s.createKey("late"))).toBe("closed");
  });

  test("a key created by another process is picked up within a flush interval", async () => {
    const path = join(tempDir(), "sy.db");
    const a = openSqliteStore({ path, flushIntervalMs: 20 });
    const b = openSqliteStore({ path, flushIntervalMs: 20 });
    const k = b.createKey("elsewhere");
    expect(a.lookup(k.secret)).toBeUndefined(); // a's cache is not refreshed per request
    // a's own refresh (every flush interval, 20 ms here) picks it up: polled, not a fixed 100 ms.
    for (const end = Date.now() + 10_000; a.lookup(k.secret) === undefined && Date.now() < end; ) await Bun.sleep(10);
    expect(a.lookup(k.secret)?.name).toBe("elsewhere");
    b.revokeKey("elsewhere");
    a.refreshKeys();
    expect(a.lookup(k.secret)).toBeUndefined();
    a.close();
    b.close();
  });
});

describe("config keys", () => {
  test("are held hashed in memory, never written", () => {
    const path = join(tempDir(), "sy.db");
    const secret = "config-secret-value-0123456789";
    const s = openSqliteStore({ path });
    s.setConfigKeys([{ name: "laptop", secret, scopes: ["admin"], tag: "dev" }]);
    expect(s.any()).toBe(true);
    expect(s.lookup(secret)).toEqual({ name: "laptop", scopes: ["admin"], tag: "dev", source: "config" });
    // listed with its prefix (a quarter of 30 characters: 7), never more of the secret
    expect(s.listKeys()).toEqual([{ name: "laptop", scopes: ["admin"], tag: "dev", source: "config", prefix: "config-" }]);
    s.createKey("other");
    s.flush();
    expect(countRows(path, "client_keys")).toBe(1);
    const bytes = fileBytes(path);
    expect(bytes.includes(secret)).toBe(false);
    expect(bytes.includes(sha(secret))).toBe(false);
    expect(bytes.includes("laptop")).toBe(false);
    s.close();

    const again = openSqliteStore({ path });
    expect(again.lookup(secret)).toBeUndefined();
    expect(again.listKeys().map((k) => k.name)).toEqual(["other"]);
    again.close();
  });

  test("are read-only through the store, replaced on reload, validated without echoing secrets", () => {
    const s = openSqliteStore({ path: ":memory:" });
    s.setConfigKeys([
      { name: "a", secret: "secret-a-123" },
      { name: "b", secret: "secret-b-456" },
    ]);
    expect(codeOf(() => s.createKey("a"))).toBe("read_only");
    expect(codeOf(() => s.revokeKey("a"))).toBe("read_only");
    expect(s.lookup("secret-b-456")?.name).toBe("b");

    s.setConfigKeys([{ name: "c", secret: "secret-c-789" }]);
    expect(s.lookup("secret-a-123")).toBeUndefined();
    expect(s.lookup("secret-c-789")?.source).toBe("config");

    let msg = "";
    try {
      s.setConfigKeys([
        { name: "x", secret: "dup-secret-value" },
        { name: "y", secret: "dup-secret-value" },
      ]);
    } catch (e) {
      msg = (e as Error).message;
      expect((e as StoreError).code).toBe("invalid");
    }
    expect(msg).not.toBe("");
    expect(msg).not.toContain("dup-secret-value");
    expect(codeOf(() => s.setConfigKeys([{ name: "x", secret: "" }]))).toBe("invalid");
    expect(codeOf(() => s.setConfigKeys([{ name: "x", secret: "s1" }, { name: "x", secret: "s2" }]))).toBe("invalid");
    // a rejected reload leaves the previous set in force
    expect(s.lookup("secret-c-789")?.name).toBe("c");

    s.setConfigKeys([]);
    expect(s.any()).toBe(false);
    s.close();
  });

  test("the stored key table never holds a plaintext secret column", () => {
    const path = join(tempDir(), "sy.db");
    const s = openSqliteStore({ path });
    const { secret } = s.createKey("k");
    s.close();
    const rows = withRaw(path, (db) => db.query("SELECT * FROM client_keys").all() as Record<string, unknown>[]);
    expect(rows).toHaveLength(1);
    for (const v of Object.values(rows[0]!)) expect(String(v)).not.toContain(secret);
    expect(rows[0]!.hash).toBe(sha(secret));
  });
});

describe("a key's prefix (try18 D4)", () => {
  test("kept at create and rotate, listed; a key stored before the prefix migration has none (its secret was never seen again); the file holds no more of a secret", () => {
    const path = join(tempDir(), "sy.db");
    const db = new Database(path);
    const prefixStep = MIGRATIONS.find((m) => m.name === "client key prefixes")!.version;
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version < prefixStep));
    db.run("INSERT INTO client_keys (name, generation, hash, scopes, tag, created_at) VALUES ('old', 1, 'abc', '[]', NULL, 1)");
    db.close();
    const s = openSqliteStore({ path });
    s.setConfigKeys([{ name: "lead", secret: "sy-lead-config-secret-000001" }]);
    const made = s.createKey("laptop");
    const prefixes = () => Object.fromEntries(s.listKeys().map((k) => [k.name, k.prefix]));
    // 28 characters: 7 shown (a quarter); a generated key's 46: 8, `sy-` counted in
    expect(prefixes()).toEqual({ lead: "sy-lead", laptop: made.secret.slice(0, 8), old: undefined });
    const turned = s.rotateKey("laptop");
    expect(prefixes().laptop).toBe(turned.secret.slice(0, 8));
    s.close();
    const bytes = fileBytes(path);
    expect(bytes.includes(turned.secret.slice(0, 8))).toBe(true);
    expect(bytes.includes(turned.secret.slice(0, 9))).toBe(false);
    expect(bytes.includes(made.secret.slice(0, 9))).toBe(false);
  });
});
