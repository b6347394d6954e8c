/**
 * src/accounts/retry-writes.ts: lock and cooldown writes the embedded store refused (a full disk) are
 * written again in the order they were made, the newest write of a row replacing an older one, a write
 * made while others wait queued behind them, and what each did to memory done again while it waits.
 */
import { expect, test } from "bun:test";
import { RetryWrites } from "../../src/accounts/retry-writes.ts";
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

test("a write made while others wait and fail again is queued behind them, not written before them", () => {
  const { store, rows, state, write } = fakeStore();
  const w = new RetryWrites();
  state.full = true;
  w.persist(store, "lock\u0000a", write("lock a"));
  let calls = 0;
  // A write that would pass (it frees space) must not land before the lock waiting ahead of it.
  w.persist(store, "cooldowns\u0000a", () => void calls++);
  expect([calls, w.size]).toEqual([0, 2]);
  state.full = false;
  expect(w.retry(store)).toBe(0);
  expect([rows, calls]).toEqual([["lock a"], 1]);
});

test("an account's waiting writes are dropped when its lock and cooldowns are cleared (by hand, a new login)", () => {
  const { store, rows, state, write } = fakeStore();
  const w = new RetryWrites();
  state.full = true;
  w.persist(store, "lock\u0000a", write("lock a"));
  w.persist(store, "cooldown\u0000a\u0000m", write("cool a m"));
  w.persist(store, "lock\u0000ab", write("lock ab"));
  w.forgetAccount("a");
  state.full = false;
  expect(w.retry(store)).toBe(0);
  expect(rows).toEqual(["lock ab"]);
});
