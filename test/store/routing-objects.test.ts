/**
 * The routing-objects role of the SQLite store (SPEC 2.3, 9.3): combos, aliases, settings and account
 * flags created through the admin API are committed at once, read back exactly, and survive reopening
 * the file; deleting answers whether something was there.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { StoreError } from "../../src/store/types.ts";
import { cleanupTempDirs, fakeClock, tempDir, withRaw } from "./helpers.ts";

afterAll(cleanupTempDirs);

describe("routing objects in SQLite", () => {
  test("combos, aliases, settings and account flags round-trip and survive a reopen", () => {
    const path = join(tempDir(), "s.db");
    const clock = fakeClock(1_800_000_000_000);
    const a = openSqliteStore({ path, clock });
    const spec = { name: "duo", strategy: "fallback", targets: [{ model: "p/x", when: { expr: { fact: "has_tools", op: "eq", value: true } } }] };
    a.putCombo("duo", spec);
    a.putAlias("fast", "p/x");
    a.setSetting("flight_recorder", { enabled: true });
    a.setSetting("account_strategy", "p2c");
    a.setAccountDisabledFlag("a1", true);
    // Written through: another connection sees them before any flush or close.
    expect(withRaw(path, (db) => db.query("SELECT COUNT(*) AS n FROM stored_combos").get())).toEqual({ n: 1 });
    clock.advance(5000);
    a.putAlias("fast", "p/y");
    a.close();

    const b = openSqliteStore({ path, clock });
    expect(b.listCombos()).toEqual([{ name: "duo", spec, createdAt: 1_800_000_000_000, updatedAt: 1_800_000_000_000 }]);
    expect(b.listAliases()).toEqual([{ name: "fast", target: "p/y", createdAt: 1_800_000_000_000, updatedAt: 1_800_000_005_000 }]);
    expect(b.getSettings()).toEqual({ account_strategy: "p2c", flight_recorder: { enabled: true } });
    expect(b.listDisabledAccounts()).toEqual(["a1"]);

    b.setSetting("account_strategy", null);
    b.setAccountDisabledFlag("a1", false);
    expect(b.deleteCombo("duo")).toBe(true);
    expect(b.deleteCombo("duo")).toBe(false);
    expect(b.deleteAlias("fast")).toBe(true);
    expect(b.getSettings()).toEqual({ flight_recorder: { enabled: true } });
    expect(b.listDisabledAccounts()).toEqual([]);
    expect(b.listCombos()).toEqual([]);
    expect(b.listAliases()).toEqual([]);
    b.close();
  });

  test("empty names are refused; a closed store throws closed", () => {
    const s = openSqliteStore({ path: join(tempDir(), "s.db") });
    expect(() => s.putCombo("", {})).toThrow(StoreError);
    expect(() => s.putAlias("x", " ")).toThrow(StoreError);
    s.close();
    expect(() => s.listCombos()).toThrow("closed");
  });
});
