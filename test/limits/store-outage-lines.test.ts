/**
 * The shared key-limit counters' "shared store unreachable" / "reachable again" lines (README "Running
 * several instances": an outage is logged once), against a fake store that stalls (statements hang),
 * then refuses new statements while those left waiting answer or fail one after another, as a stalled
 * PostgreSQL does when it resumes: one pair per outage, the second line as soon as a statement sent
 * after the outage began is answered. Session 37 logged each flip (four of each in 3 s in the
 * team-operator tryout); its fix, a hold of 10 s of answers, made the second line 10 s late.
 */
import { afterEach, expect, test } from "bun:test";
import { SharedKeyCounters } from "../../src/limits/shared-counters.ts";
import type { QuotaShareRequest, QuotaUse, SharedStore } from "../../src/store/shared.ts";
import { StoreError } from "../../src/store/types.ts";
import { until } from "../support/until.ts";

/**
 * A shared store that answers (an empty pool, no one else's use) while `mode` is "up", throws
 * `unavailable` at once while "refusing", and leaves statements unanswered while "stalled" (`waiting`:
 * each one's answer and failure, for the test to call later).
 */
function stallingStore() {
  const state = { mode: "up" as "up" | "stalled" | "refusing", answers: 0, waiting: [] as Array<{ answer: () => void; fail: () => void }> };
  const gate = <T>(value: () => T): Promise<T> => {
    if (state.mode === "refusing") return Promise.reject(new StoreError("unavailable", "database unreachable"));
    if (state.mode === "stalled") {
      return new Promise<T>((resolve, reject) => state.waiting.push({ answer: () => resolve(value()), fail: () => reject(new StoreError("unavailable", "connection closed")) }));
    }
    state.answers++;
    return Promise.resolve(value());
  };
  const store = {
    shared: true,
    setQuotaShare: (r: QuotaShareRequest) => gate(() => ({ granted: r.target, othersUsed: 0, now: Date.now() })),
    reportQuotaUse: (rows: readonly QuotaUse[]) => gate(() => rows.map(() => 0)),
    exchangeQuotaUse: () => gate(() => []),
  } as unknown as SharedStore;
  return { state, store };
}

const open: SharedKeyCounters[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

const said = (logs: string[]) => logs.map((l) => JSON.parse(l).msg as string).map((m) => (m.includes("unreachable") ? "unreachable" : m.includes("reachable again") ? "reachable again" : m));

test("a stall, then late answers and failures while new statements are refused: unreachable once; reachable again at the first answer to a statement sent since; a late failure after it logs nothing", async () => {
  const { state, store } = stallingStore();
  const logs: string[] = [];
  const c = new SharedKeyCounters(store, (l) => logs.push(l), { reportMs: 10, answerMs: 100 });
  open.push(c);
  state.mode = "stalled";
  // keys new here ask the store for their shares at once: unanswered within 100 ms, the instance counts alone
  const admitted = await Promise.all([0, 1, 2, 3].map((i) => c.admit(`k${i}`, { rpm: 100 }, Date.now())));
  expect(admitted.every((a) => a.ok)).toBe(true);
  expect(said(logs)).toEqual(["unreachable"]);
  // the store knows it is away now (new statements refused); the four refills left waiting answer and
  // fail in turn (the probe sent into the stall fails, as a statement unanswered for 10 s does)
  state.mode = "refusing";
  const [refills, probes] = [state.waiting.slice(0, 4), state.waiting.slice(4)];
  state.waiting = [];
  for (const p of probes) p.fail();
  const last = refills.pop()!;
  for (const [i, w] of refills.entries()) {
    if (i % 2 === 0) w.answer();
    else w.fail();
    await Bun.sleep(30);
  }
  expect(said(logs)).toEqual(["unreachable"]);
  // back: the next probe (sent after the outage began) is answered, and the line comes with it
  const before = state.answers;
  state.mode = "up";
  const t0 = Date.now();
  await until(() => logs.length > 1, 2_000, "reachable again", 5);
  expect(Date.now() - t0).toBeLessThan(500);
  expect(state.answers).toBeGreaterThan(before);
  expect(said(logs)).toEqual(["unreachable", "reachable again"]);
  expect(JSON.parse(logs[0]!).msg).toBe("shared store unreachable: client key limits are counted by this instance alone until it is back");
  // a statement of the stall that fails only now: not a new outage
  last.fail();
  await Bun.sleep(100);
  expect(said(logs)).toEqual(["unreachable", "reachable again"]);

  // a later outage is a new one: its own pair
  state.mode = "refusing";
  await c.admit("k-later", { rpm: 100 }, Date.now());
  state.mode = "up";
  await until(() => logs.length > 3, 3_000, "the second outage's lines", 10);
  expect(said(logs)).toEqual(["unreachable", "reachable again", "unreachable", "reachable again"]);
});
