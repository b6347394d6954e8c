/**
 * The shared key-limit counters' "shared store unreachable" / "reachable again" lines (README "Running
 * several instances": an outage is logged once), against a fake store that alternates between failing
 * and answering, as one does in the seconds after a stall ends: one pair per outage, the second line
 * once the store has answered for the hold without failing. Before, each flip logged a line (four of
 * each in 3 s in the team-operator tryout, session 37).
 */
import { afterEach, expect, test } from "bun:test";
import { SharedKeyCounters } from "../../src/limits/shared-counters.ts";
import type { QuotaShareRequest, QuotaUse, SharedStore } from "../../src/store/shared.ts";
import { StoreError } from "../../src/store/types.ts";
import { until } from "../support/until.ts";

/** A shared store that answers (an empty pool, no one else's use) while `reachable`, else throws `unavailable`; counts its answers. */
function flakyStore() {
  const state = { reachable: true, answers: 0 };
  const gate = () => {
    if (!state.reachable) throw new StoreError("unavailable", "database unreachable");
    state.answers++;
  };
  const store = {
    shared: true,
    setQuotaShare: (r: QuotaShareRequest) => (gate(), { granted: r.target, othersUsed: 0, now: Date.now() }),
    reportQuotaUse: (rows: readonly QuotaUse[]) => (gate(), rows.map(() => 0)),
    exchangeQuotaUse: () => (gate(), []),
  } as unknown as SharedStore;
  return { state, store };
}

const open: SharedKeyCounters[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

const said = (logs: string[]) => logs.map((l) => JSON.parse(l).msg as string).map((m) => (m.includes("unreachable") ? "unreachable" : m.includes("reachable again") ? "reachable again" : m));

test("a store that flaps after a stall: unreachable and reachable again logged once, the second after the hold", async () => {
  const { state, store } = flakyStore();
  const logs: string[] = [];
  const c = new SharedKeyCounters(store, (l) => logs.push(l), { reportMs: 10, backHoldMs: 400 });
  open.push(c);
  for (let i = 0; i < 4; i++) {
    state.reachable = false;
    // a key new here asks the store for its share: the failure makes the instance count alone
    expect((await c.admit(`k${i}`, { rpm: 100 }, Date.now())).ok).toBe(true);
    state.reachable = true;
    // the next tick's probe answers: it counts across instances again
    const before = state.answers;
    await until(() => state.answers > before, 2_000, "the probe to answer", 5);
    await Bun.sleep(20);
  }
  expect(said(logs)).toEqual(["unreachable"]);
  await until(() => logs.length > 1, 3_000, "reachable again", 10);
  await Bun.sleep(100);
  expect(said(logs)).toEqual(["unreachable", "reachable again"]);
  expect(JSON.parse(logs[0]!).msg).toBe("shared store unreachable: client key limits are counted by this instance alone until it is back");

  // a later outage is a new one: its own pair
  state.reachable = false;
  await c.admit("k-later", { rpm: 100 }, Date.now());
  state.reachable = true;
  await until(() => logs.length > 3, 3_000, "the second outage's lines", 10);
  expect(said(logs)).toEqual(["unreachable", "reachable again", "unreachable", "reachable again"]);
});
