/**
 * `KeyStore.onKeyLimitsChanged` (src/store/key-cache.ts): a re-read of the stored keys tells its
 * listeners which active keys' limits another writer changed, so an instance sharing PostgreSQL raises
 * the alerts of a budget another instance lowered (src/alerts/budget-change-alerts.ts `learned`). The
 * key cache on its own (no I/O), and two stores on one PostgreSQL database: a change through one is
 * reported by the other's re-read within about a second (its announcement), not by its own.
 */
import { describe, expect, test } from "bun:test";
import type { KeyLimits } from "../../pipeline/ports.ts";
import { KeyCache, type KeyRow } from "../../src/store/key-cache.ts";
import type { KeyLimitsChange } from "../../src/store/types.ts";
import { storeBackends } from "../support/store-backends.ts";
import { until } from "../support/until.ts";

const tokens = (n: number): KeyLimits => ({ budgets: [{ window: "1d", tokens: n }] });

/** A stored key's row: `name` of generation 1, its limits (`null`: none). */
const row = (name: string, limits: KeyLimits | null, revoked = false): KeyRow => ({
  name,
  hash: Buffer.alloc(32, name.length + (revoked ? 100 : 0)).toString("hex"),
  scopes: "[]",
  tag: null,
  created_at: 1,
  revoked_at: revoked ? 2 : null,
  limits: limits === null ? null : JSON.stringify(limits),
  generation: 1,
});

describe("a re-read of the stored keys reports the keys whose limits changed", () => {
  test("the key cache: a changed key with its limits before and after; not a new key, a revoked one, an unchanged one, or the key of this process's own change", () => {
    const cache = new KeyCache();
    const heard: KeyLimitsChange[][] = [];
    cache.onLimitsChanged((c) => void heard.push(c));
    cache.setStoredKeys([row("dev", tokens(1000)), row("ci", null)]); // the first read: every key is new
    expect(heard).toEqual([]);
    cache.setStoredKeys([row("dev", tokens(880)), row("ci", null), row("newkey", tokens(5))]);
    expect(heard).toEqual([[{ id: "dev#1", name: "dev", before: tokens(1000), after: tokens(880) }]]);
    cache.setStoredKeys([row("dev", tokens(880)), row("ci", tokens(10)), row("newkey", tokens(5))]);
    expect(heard[1]).toEqual([{ id: "ci#1", name: "ci", before: undefined, after: tokens(10) }]);
    cache.setStoredKeys([row("dev", tokens(800)), row("ci", tokens(10)), row("newkey", tokens(5))], "dev"); // dev changed here
    cache.setStoredKeys([row("dev", tokens(800)), row("ci", tokens(10), true)]); // ci revoked, newkey gone
    expect(heard.length).toBe(2);
    // a listener that throws does not undo the re-read, nor keep the next listener from hearing
    const other: KeyLimitsChange[][] = [];
    const off = cache.onLimitsChanged(() => {
      throw new Error("listener failed (test)");
    });
    cache.onLimitsChanged((c) => void other.push(c));
    cache.setStoredKeys([row("dev", tokens(700))]);
    expect(cache.active().find((k) => k.name === "dev")?.limits).toEqual(tokens(700));
    expect(other).toEqual([[{ id: "dev#1", name: "dev", before: tokens(800), after: tokens(700) }]]);
    off();
  });

  const backends = storeBackends("limitschanged").filter((b) => b.name === "postgres");
  for (const backend of backends) {
    test("two stores on one PostgreSQL: a PATCH's change through one is reported by the other's re-read, not by its own", async () => {
      const { store: a, reopen } = await backend.open();
      const b = await reopen();
      try {
        const heardA: KeyLimitsChange[] = [];
        const heardB: KeyLimitsChange[] = [];
        a.onKeyLimitsChanged!((c) => void heardA.push(...c));
        b.onKeyLimitsChanged!((c) => void heardB.push(...c));
        await a.createKey("dev", [], undefined, tokens(1000));
        await until(() => b.activeKeys().some((k) => k.name === "dev"), 10_000, "the other store's re-read of the new key");
        await a.updateKey("dev", { limits: { budgets: [{ window: "1d", tokens: 880 }] } });
        await until(() => heardB.length > 0, 10_000, "the other store's report of the changed limits");
        expect(heardB).toEqual([{ id: "dev#1", name: "dev", before: tokens(1000), after: tokens(880) }]);
        await Bun.sleep(2500); // a periodic re-read (every 2 s) reports nothing more
        expect(heardA).toEqual([]);
        expect(heardB.length).toBe(1);
      } finally {
        await a.close();
        await b.close();
      }
    }, 60_000);
  }
});
