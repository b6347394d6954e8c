/**
 * src/accounts/retry-writes.ts: lock, cooldown, removed-pairing and circuit writes the embedded store refused (a full disk) are
 * written again, each row's line (an account's lock, its cooldowns, its removals; a provider's circuit) in
 * the order its writes were made and apart from the other lines, the newest write of a row replacing an
 * older one, a write made while its line waits queued behind it, at most a cap of them (the oldest dropped
 * and counted), and what each did to memory done again while it waits.
 */
import { expect, test } from "bun:test";
import { classify } from "../../pipeline/classify.ts";
import { AccountRegistry } from "../../src/accounts/registry.ts";
import { MAX_WAITING, RetryWrites } from "../../src/accounts/retry-writes.ts";
import { account, providerOf, settableClock } from "./helpers.ts";
import type { Store } from "../../src/store/types.ts";

/** A store whose writes land in `rows` (in order) while `full` is false, and throw while it is true. */
function fakeStore() {
  const rows: string[] = [];
  const state = { full: false };
  const write = (what: string) => (_: Store) => {
    if (state.full) throw new Error("database or disk is full");
    rows.push(what);
  };
  return { store: {} as Store, rows, state, write };
}

test("refused writes wait in order, the newest of a row last; written again once the disk has room, before a new write", () => {
  const { store, rows, state, write } = fakeStore();
  const w = new RetryWrites();
  const memory = new Set<string>();
  state.full = true;
  w.persist(store, "lock\u0000a", write("lock a"), () => memory.add("lock a"));
  w.persist(store, "cooldown\u0000b\u0000m", write("cool b m"), () => memory.add("cool b m"));
  w.persist(store, "lock\u0000a", write("unlock a"), () => memory.delete("lock a")); // replaces "lock a", goes last
  expect([rows, w.size]).toEqual([[], 2]);
  memory.add("lock a");
  w.reapply(); // after a re-read: what the waiting writes did to memory, in order
  expect([...memory]).toEqual(["cool b m"]);
  expect(w.retry(store)).toBe(2); // still full
  state.full = false;
  w.persist(store, "cooldown\u0000c\u0000m", write("cool c m"));
  expect([rows, w.size]).toEqual([["cool b m", "unlock a", "cool c m"], 0]);
});

test("a write made while an earlier write of its row's line waits and fails again is queued behind it, not written before it", () => {
  const { store, rows, state, write } = fakeStore();
  const w = new RetryWrites();
  state.full = true;
  w.persist(store, "cooldown\u0000a\u0000m", write("cool a m"));
  let calls = 0;
  // A clear of all of a's cooldowns that would pass (it frees space) must not land before the cooldown waiting ahead of it.
  w.persist(store, "cooldowns\u0000a", () => void calls++);
  expect([calls, w.size]).toEqual([0, 2]);
  state.full = false;
  expect(w.retry(store)).toBe(0);
  expect([rows, calls]).toEqual([["cool a m"], 1]);
});

/** A store that refuses the writes whose label is in `refused` (a row it keeps refusing) and takes the others. */
function refusingStore() {
  const rows: string[] = [];
  const refused = new Set<string>();
  const write = (what: string) => (_: Store) => {
    if (refused.has(what)) throw new Error("database or disk is full");
    rows.push(what);
  };
  return { store: {} as Store, rows, refused, write };
}

test("a row's write the store keeps refusing holds back only its own line: other rows' writes land at once and at each retry", () => {
  const { store, rows, refused, write } = refusingStore();
  const w = new RetryWrites();
  refused.add("lock a").add("cool b m");
  w.persist(store, "lock\u0000a", write("lock a"));
  w.persist(store, "cooldown\u0000b\u0000m", write("cool b m"));
  // Unrelated rows (another account's cooldown, a removal, a circuit) are written now, not queued behind a's lock.
  w.persist(store, "cooldown\u0000c\u0000m", write("cool c m"));
  w.persist(store, "removed\u0000a\u0000m", write("remove a m"));
  w.persist(store, "circuit\u0000p", write("open p"));
  expect([rows, w.size]).toEqual([["cool c m", "remove a m", "open p"], 2]);
  // b's cooldown is taken again; a's lock still refused: b's is written at the retry, a's waits alone.
  refused.delete("cool b m");
  expect(w.retry(store)).toBe(1);
  expect(rows.slice(3)).toEqual(["cool b m"]);
  expect([w.has("lock\u0000a"), w.has("cooldown\u0000b\u0000m")]).toEqual([true, false]);
});

test("newest wins per row and a line keeps its order: an older state of a row is never written after a newer one", () => {
  const { store, rows, refused, write } = refusingStore();
  const w = new RetryWrites();
  refused.add("cool a m until 1");
  w.persist(store, "cooldown\u0000a\u0000m", write("cool a m until 1"));
  // Later writes of a's cooldowns wait behind it (its line), while b's lock lands.
  w.persist(store, "cooldowns\u0000a", write("clear a"));
  w.persist(store, "lock\u0000b", write("lock b"));
  w.persist(store, "cooldown\u0000a\u0000m", write("cool a m until 2")); // replaces "until 1", after the clear
  expect([rows, w.size]).toEqual([["lock b"], 2]);
  refused.clear();
  expect(w.retry(store)).toBe(0);
  expect(rows).toEqual(["lock b", "clear a", "cool a m until 2"]);
});

test("at most the cap of writes wait: past it the oldest is dropped and counted", () => {
  const { store, rows, state, write } = fakeStore();
  const w = new RetryWrites(3);
  state.full = true;
  for (const a of ["a", "b", "c", "d", "e"]) w.persist(store, "lock\u0000" + a, write("lock " + a));
  expect([w.size, w.dropped, w.has("lock\u0000a"), w.has("lock\u0000e")]).toEqual([3, 2, false, true]);
  state.full = false;
  expect(w.retry(store)).toBe(0);
  expect([rows, w.dropped]).toEqual([["lock c", "lock d", "lock e"], 2]);
  expect(MAX_WAITING).toBe(10_000);
});

test("an account's waiting lock and cooldown writes are dropped when they are cleared (by hand, a new login); its removed pairings' and a same-named provider's circuit stay", () => {
  const { store, rows, state, write } = fakeStore();
  const w = new RetryWrites();
  state.full = true;
  w.persist(store, "lock\u0000a", write("lock a"));
  w.persist(store, "cooldown\u0000a\u0000m", write("cool a m"));
  w.persist(store, "lock\u0000ab", write("lock ab"));
  w.persist(store, "removed\u0000a\u0000m", write("remove a m"));
  w.persist(store, "circuit\u0000a", write("open a"));
  w.forgetAccount("a");
  state.full = false;
  expect(w.retry(store)).toBe(0);
  expect(rows).toEqual(["lock ab", "remove a m", "open a"]);
});

test("a restore or a circuit close by hand drops the waiting removal or opening it supersedes, and only those", () => {
  const { store, rows, state, write } = fakeStore();
  const w = new RetryWrites();
  state.full = true;
  w.persist(store, "removed\u0000a\u0000m", write("remove a m"));
  w.persist(store, "removed\u0000a\u0000n", write("remove a n"));
  w.persist(store, "removed\u0000b\u0000m", write("remove b m"));
  w.persist(store, "circuit\u0000p", write("open p"));
  w.persist(store, "circuit\u0000q", write("open q"));
  expect([w.has("removed\u0000a\u0000m"), w.has("circuit\u0000p"), w.has("circuit\u0000r")]).toEqual([true, true, false]);
  w.forget("removed", "a", "m"); // restore a's m by hand
  w.forget("circuit", "p"); // close p's circuit by hand
  expect([w.has("removed\u0000a\u0000m"), w.has("circuit\u0000p")]).toEqual([false, false]);
  state.full = false;
  expect(w.retry(store)).toBe(0);
  expect(rows).toEqual(["remove a n", "remove b m", "open q"]);
  state.full = true;
  w.persist(store, "removed\u0000a\u0000m", write("remove a m"));
  w.persist(store, "removed\u0000a\u0000n", write("remove a n"));
  w.forget("removed", "a"); // restore all of a's by hand
  expect(w.size).toBe(0);
});

test("an account removed while a refused removal of its pairing waits: the removal is not written back after the account's rows went", async () => {
  const writes: string[] = [];
  const disk = { full: true };
  const store = new Proxy({}, {
    // An embedded store (not `shared`) whose removeModel throws while the disk is full.
    get: (_t, method) => method === "shared" ? undefined : (...args: unknown[]) => {
      if (method === "removeModel" && disk.full) throw new Error("database or disk is full");
      if (method === "removeModel" || method === "restoreModel" || method === "deleteAccount") writes.push(`${String(method)} ${(args[0] as { accountId?: string }).accountId ?? args[0]}`);
    },
  }) as Store;
  const p = providerOf("p");
  const clock = settableClock();
  const registry = new AccountRegistry(store, clock);
  registry.setAccounts([account("a1"), account("a2")], new Map([["p", p]]));
  const notFound = classify({ status: 404, bodyText: JSON.stringify({ type: "error", error: { type: "not_found_error", message: "model: claude-x" } }), now: clock.now() });
  registry.failure(registry.list()[0]!, p, "claude-x", notFound);
  registry.failure(registry.list()[1]!, p, "claude-x", notFound);
  expect(writes).toEqual([]);
  disk.full = false;
  // The admin API's removal: the store deletes the account and its rows, then the re-read (which first writes what waits) and the new list.
  await registry.lift("a1", "cleared: the account was removed", async () => {
    writes.push("deleteAccount a1");
    registry.retryWrites();
    registry.setAccounts([account("a2")], new Map([["p", p]]));
  });
  registry.retryWrites();
  // a1's removal, written again after the delete, is deleted again; a2's stays.
  expect(writes).toEqual(["deleteAccount a1", "removeModel a1", "removeModel a2", "restoreModel a1"]);
  registry.close();
});
