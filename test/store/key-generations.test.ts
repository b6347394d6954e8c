/**
 * A key created with the name of a revoked key is a new key (SPEC 9.6; client_keys.generation, SQLite
 * migration 9, PostgreSQL migration 8), on both stores: its id (pipeline/key-id.ts) is `name#N`, on
 * the created key, on lookup, on the listing and after a reopen, so the limit counters count it
 * afresh. The first stored key of a name is `name#1`, never the bare name, which a config key of that
 * name counts under; a key stored before (generation 0) keeps its name as its id (its stored budget
 * windows stay its own). A config-file key with the name of a stored key (pipeline/key-id.ts
 * `configKeyIdFor`) is `name#config`.
 */
import { describe, expect, test } from "bun:test";
import { storeBackends } from "../support/store-backends.ts";

const backends = storeBackends("generations");

for (const backend of backends) {
  describe(`key generations: ${backend.name}`, () => {
    test("the first key of a name is counted by name#1; each key created after a revoked one by the next name#N, across a reopen", async () => {
      const { store: s, reopen: open } = await backend.open();
      const first = await s.createKey("laptop");
      expect(first.key.id).toBe("laptop#1");
      expect(s.lookup(first.secret)).toEqual({ name: "laptop", id: "laptop#1", scopes: [], source: "db" });
      expect(await s.revokeKey("laptop")).toBe(true);
      const again = await s.createKey("laptop");
      expect(again.key.id).toBe("laptop#2");
      expect(s.lookup(again.secret)?.id).toBe("laptop#2");
      expect((await s.listKeys()).find((k) => k.name === "laptop")).toMatchObject({ name: "laptop", id: "laptop#2" });
      expect(await s.revokeKey("laptop")).toBe(true);
      const third = await s.createKey("laptop");
      expect(s.lookup(third.secret)?.id).toBe("laptop#3");
      await s.close();
      const r = await open();
      expect(r.lookup(third.secret)).toMatchObject({ name: "laptop", id: "laptop#3" });
      expect(r.lookup(again.secret)).toBeUndefined();
      expect(r.lookup(first.secret)).toBeUndefined();
      // Each revoked key keeps its row (newuser12a G2: the next key's row replaced it): the active key first.
      const rows = (await r.listKeys()).filter((k) => k.name === "laptop");
      expect(rows.map((k) => [k.id, k.createdAt === first.createdAt || k.createdAt === again.createdAt || k.createdAt === third.createdAt, k.revokedAt !== undefined])).toEqual([
        ["laptop#3", true, false],
        ["laptop#2", true, true],
        ["laptop#1", true, true],
      ]);
      // …and a name's one active key is the only one a second create (or a rotation) meets.
      await expect(Promise.resolve().then(() => r.createKey("laptop"))).rejects.toMatchObject({ code: "conflict" });
      await r.close();
    });

    test("a config key with the name of a stored key, revoked or active, counts by name#config; one without, by its name", async () => {
      const { store: s, reopen: open } = await backend.open();
      const stored = await s.createKey("ci");
      expect(await s.revokeKey("ci")).toBe(true);
      const configKeys = [
        { name: "ci", secret: "sy-config-ci-secret-0001" },
        { name: "solo", secret: "sy-config-solo-secret-01" },
      ];
      s.setConfigKeys(configKeys);
      expect(s.lookup("sy-config-ci-secret-0001")).toMatchObject({ name: "ci", id: "ci#config", source: "config" });
      expect(s.lookup("sy-config-solo-secret-01")).toEqual({ name: "solo", scopes: [], source: "config" }); // counted by its name
      expect(s.lookup(stored.secret)).toBeUndefined();
      // A stored key of its name made later by another instance of the store (which does not declare
      // it) gives it an id of its own from the next refresh on.
      s.setConfigKeys([...configKeys, { name: "late", secret: "sy-config-late-secret-01" }]);
      expect(s.lookup("sy-config-late-secret-01")?.id).toBeUndefined(); // its name
      const other = await open();
      await other.createKey("late");
      await other.close();
      await s.refreshKeys();
      expect(s.lookup("sy-config-late-secret-01")?.id).toBe("late#config");
      expect(s.lookup("sy-config-solo-secret-01")).toEqual({ name: "solo", scopes: [], source: "config" }); // counted by its name
      await s.close();
      const r = await open();
      r.setConfigKeys(configKeys);
      expect(r.lookup("sy-config-ci-secret-0001")?.id).toBe("ci#config");
      await r.close();
    });

    test("a stored key made with the name of a config key that left the file is not counted under the config key's id", async () => {
      const { store: s, reopen: open } = await backend.open();
      s.setConfigKeys([{ name: "build", secret: "sy-config-build-secret-1" }]);
      const configId = s.lookup("sy-config-build-secret-1")?.id ?? "build"; // what counted the config key's use
      s.setConfigKeys([]); // `build` left the config file
      const stored = await s.createKey("build");
      expect(stored.key.id).toBe("build#1");
      expect(s.lookup(stored.secret)).toMatchObject({ name: "build", id: "build#1" });
      expect(s.lookup(stored.secret)?.id).not.toBe(configId);
      await s.close();
      const r = await open();
      expect(r.lookup(stored.secret)?.id).toBe("build#1");
      await r.close();
    });
  });
}
