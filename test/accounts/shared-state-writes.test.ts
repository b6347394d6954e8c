/**
 * src/accounts/shared-state-writes.ts with a stand-in store: the order and coalescing of a shared store's
 * state writes, what is tried again and what is dropped (the PostgreSQL cases with real rejections are
 * test/store/pg-state-write-refused.test.ts).
 */
import { expect, test } from "bun:test";
import { rejectedStateWriteLine, SharedStateWrites, STATE_WRITE_TRIES, writeTryingAgain, type RejectedStateWrite } from "../../src/accounts/shared-state-writes.ts";
import { StoreError, type Store } from "../../src/store/types.ts";

const store = {} as Store;
const pgError = (errno: string, message: string) => Object.assign(new Error(message), { errno });

/** A write whose outcomes are handed out in order (undefined: it succeeds); `calls` records each try by name. */
function writer(calls: string[]) {
  const gates: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  const write = (name: string, outcomes: unknown[] = []) => () => {
    calls.push(name);
    const o = outcomes.shift();
    if (o === "hold") return new Promise<void>((resolve, reject) => gates.push({ resolve, reject }));
    return o === undefined ? Promise.resolve() : Promise.reject(o);
  };
  return { write, gates };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

test("while a row's write is on its way, only its newest later write follows it; another line's write goes at once", async () => {
  const calls: string[] = [];
  const { write, gates } = writer(calls);
  const w = new SharedStateWrites(() => {}, async () => {});
  w.persist(store, "lock\u0000a1", write("lock 1", ["hold"]));
  w.persist(store, "lock\u0000a1", write("lock 2"));
  w.persist(store, "lock\u0000a1", write("lock 3"));
  w.persist(store, "circuit\u0000p", write("circuit"));
  expect(calls).toEqual(["lock 1", "circuit"]);
  expect(w.has("lock\u0000a1")).toBe(true);
  gates[0]!.resolve();
  await w.settled(() => Date.now() + 1000);
  expect(calls).toEqual(["lock 1", "circuit", "lock 3"]);
  expect(w.size).toBe(0);
  expect(w.has("lock\u0000a1")).toBe(false);
});

test("a transient rejection is not tried again when a newer write of its row waits, nor after the row was cleared by hand", async () => {
  const calls: string[] = [];
  const { write, gates } = writer(calls);
  const lost: RejectedStateWrite[] = [];
  const w = new SharedStateWrites((r) => void lost.push(r), async () => {});
  w.persist(store, "cooldown\u0000a1\u0000m", write("set", ["hold"]));
  w.persist(store, "cooldown\u0000a1\u0000m", write("clear"));
  gates[0]!.reject(pgError("40001", "could not serialize access"));
  await w.settled(() => Date.now() + 1000);
  expect(calls).toEqual(["set", "clear"]);
  // cleared by hand between tries
  let release!: () => void;
  const w2 = new SharedStateWrites((r) => void lost.push(r), () => new Promise<void>((r) => (release = r)));
  w2.persist(store, "lock\u0000a1", write("lock", [pgError("40P01", "deadlock detected")]));
  await tick();
  w2.forgetAccount("a1");
  expect(w2.has("lock\u0000a1")).toBe(false);
  release();
  await w2.settled(() => Date.now() + 1000);
  expect(calls).toEqual(["set", "clear", "lock"]);
  expect(lost).toEqual([]);
  expect(w.dropped + w2.dropped).toBe(0);
});

test("a transient rejection is tried at most STATE_WRITE_TRIES times, then dropped and counted; a rejection without an SQLSTATE at once", async () => {
  const calls: string[] = [];
  const { write } = writer(calls);
  const lost: RejectedStateWrite[] = [];
  const waits: number[] = [];
  const w = new SharedStateWrites((r) => void lost.push(r), async (ms) => void waits.push(ms));
  const busy = pgError("55P03", "could not obtain lock on row");
  w.persist(store, "removed\u0000a1", write("restore all", Array.from({ length: 9 }, () => busy)));
  w.persist(store, "circuit\u0000p", write("circuit", [new Error("boom")]));
  await w.settled(() => Date.now() + 1000);
  expect(calls.filter((c) => c === "restore all").length).toBe(STATE_WRITE_TRIES);
  expect(calls.filter((c) => c === "circuit").length).toBe(1);
  expect(waits.length).toBe(STATE_WRITE_TRIES - 1);
  // doubling, ±50 %
  waits.forEach((ms, i) => {
    expect(ms).toBeGreaterThanOrEqual(50 * 2 ** i * 0.5);
    expect(ms).toBeLessThanOrEqual(50 * 2 ** i * 1.5);
  });
  expect(lost).toEqual([
    { kind: "circuit", providerId: "p", error: "boom", tries: 1 },
    { kind: "removal", accountId: "a1", sqlstate: "55P03", error: "could not obtain lock on row", tries: STATE_WRITE_TRIES },
  ]);
  expect(w.dropped).toBe(2);
  expect(JSON.parse(rejectedStateWriteLine(lost[1]!, 5)).msg).toBe(
    `the database rejected the write of account a1's removed pairings (all of them) (SQLSTATE 55P03: could not obtain lock on row), after ${STATE_WRITE_TRIES} tries: the change is lost (the database keeps no row of it, other instances do not see it, and this one forgets it at its next re-read of the state; counted in switchyard_store_dropped_total)`,
  );
});

test("a delete of an account's quota windows (a new key or login) the database rejects is said as that, and what stays", async () => {
  const calls: string[] = [];
  const { write } = writer(calls);
  const lost: RejectedStateWrite[] = [];
  const w = new SharedStateWrites((r) => void lost.push(r), async () => {});
  w.persist(store, "quotas\u0000a2", write("clear quotas", [pgError("P0001", "refused by policy")]));
  await w.settled(() => Date.now() + 1000);
  expect(calls).toEqual(["clear quotas"]);
  expect(lost).toEqual([{ kind: "quotas", accountId: "a2", sqlstate: "P0001", error: "refused by policy", tries: 1 }]);
  expect(JSON.parse(rejectedStateWriteLine(lost[0]!, 5)).msg).toBe(
    "the database rejected the write of account a2's quota windows (their delete for a new key or login) (SQLSTATE P0001: refused by policy), not tried again: the change is lost (the database keeps the old credential's windows until they reset, and this instance and the others read them again at their next re-read of the state; counted in switchyard_store_dropped_total)",
  );
});

test("what the writes on their way and waiting did to memory is done again after a re-read, in order", async () => {
  const calls: string[] = [];
  const { write, gates } = writer(calls);
  const memory: string[] = [];
  const w = new SharedStateWrites(() => {}, async () => {});
  w.persist(store, "cooldowns\u0000a1", write("clear all", ["hold"]), () => void memory.push("clear all"));
  w.persist(store, "cooldown\u0000a1\u0000m", write("set m"), () => void memory.push("set m"));
  w.reapply();
  expect(memory).toEqual(["clear all", "set m"]);
  gates[0]!.resolve();
  await w.settled(() => Date.now() + 1000);
  expect(calls).toEqual(["clear all", "set m"]);
  memory.length = 0;
  w.reapply();
  expect(memory).toEqual([]);
});

test("a write made by hand and awaited: a transient rejection is tried again up to the last try, any other is thrown at once", async () => {
  const waits: number[] = [];
  const sleep = async (ms: number) => void waits.push(ms);
  let calls = 0;
  const twice = () => (++calls <= 2 ? Promise.reject(pgError("55P03", "could not obtain lock")) : Promise.resolve("done"));
  expect(await writeTryingAgain(twice, sleep)).toBe("done");
  expect(calls).toBe(3);
  expect(waits.length).toBe(2);
  calls = 0;
  const always = () => (++calls, Promise.reject(pgError("40P01", "deadlock detected")));
  await expect(writeTryingAgain(always, sleep)).rejects.toThrow("deadlock detected");
  expect(calls).toBe(STATE_WRITE_TRIES);
  calls = 0;
  const policy = () => (++calls, Promise.reject(pgError("P0001", "refused by policy")));
  await expect(writeTryingAgain(policy, sleep)).rejects.toThrow("refused by policy");
  expect(calls).toBe(1);
});

test("a write made by hand that the database refuses for good: StoreError rejected naming the change, the SQLSTATE, the database's message and the tries; the store's own errors pass as they are", async () => {
  const sleep = async () => {};
  const hand = { change: "the unlock of account a1", stays: "the account stays locked" };
  const policy = writeTryingAgain(() => Promise.reject(pgError("P0001", "locks are lifted by the operator only")), sleep, hand);
  await expect(policy).rejects.toBeInstanceOf(StoreError);
  await expect(policy).rejects.toMatchObject({
    code: "rejected",
    message: "The database refused the unlock of account a1 (SQLSTATE P0001: locks are lifted by the operator only; not tried again), so it was not done: the account stays locked. Try again once the database accepts the change.",
  });
  let calls = 0;
  const busy = writeTryingAgain(() => (++calls, Promise.reject(pgError("40001", "could not serialize access due to concurrent update"))), sleep, hand);
  await expect(busy).rejects.toMatchObject({
    code: "rejected",
    message: `The database refused the unlock of account a1 (SQLSTATE 40001: could not serialize access due to concurrent update; still refused after ${STATE_WRITE_TRIES} tries), so it was not done: the account stays locked. Try again once the database accepts the change.`,
  });
  expect(calls).toBe(STATE_WRITE_TRIES);
  const long = writeTryingAgain(() => Promise.reject(pgError("P0001", "x".repeat(400))), sleep, hand);
  await expect(long).rejects.toMatchObject({ message: expect.stringContaining(`SQLSTATE P0001: ${"x".repeat(300)}…; not tried again`) });
  const away = new StoreError("unavailable", "the database cannot be reached");
  await expect(writeTryingAgain(() => Promise.reject(away), sleep, hand)).rejects.toBe(away);
  const bug = new TypeError("not a database error");
  await expect(writeTryingAgain(() => Promise.reject(bug), sleep, hand)).rejects.toBe(bug);
});
