/**
 * The Keys page's State for a key (src/dashboard/client/key-state.ts): a key whose budget is used up is
 * refused every request until its window resets, and its State says so, not "active" (tryout5 saw a
 * green "active" beside a red 276 % budget bar).
 */
import { expect, test } from "bun:test";
import { keyState } from "../../src/dashboard/client/key-state.ts";
import type { BudgetUse, KeyInfo } from "../../src/dashboard/client/types.ts";

const now = 1_800_000_000_000;
const key = (budgets: BudgetUse[], over: Partial<KeyInfo> = {}): KeyInfo => ({ name: "team-a", scopes: [], source: "db", createdAt: now - 60_000, use: { budgets, inFlight: 0 }, ...over });
const usd = (window: string, used: number, amount: number, resetsAt: number | undefined): BudgetUse => ({ budget: { window, usd: amount }, used, startedAt: now - 1000, resetsAt });

test("a 1d budget at 276 % is used up until its window resets; under it, or once the window has reset, the key is active", () => {
  expect(keyState(key([usd("1d", 0.138, 0.05, now + 86_000_000)]), now)).toEqual({ kind: "budget_used_up", until: now + 86_000_000, windows: ["1d"] });
  expect(keyState(key([usd("1d", 0.05, 0.05, now + 1000)]), now)).toEqual({ kind: "budget_used_up", until: now + 1000, windows: ["1d"] });
  expect(keyState(key([usd("1d", 0.049, 0.05, now + 1000)]), now)).toEqual({ kind: "active" });
  expect(keyState(key([usd("1d", 0.138, 0.05, now - 1)]), now)).toEqual({ kind: "active" });
  expect(keyState(key([usd("1d", 0, 0.05, undefined)]), now)).toEqual({ kind: "active" });
  expect(keyState(key([]), now)).toEqual({ kind: "active" });
});

test("two budgets used up: refused until the later window resets; a token budget counts as a USD one does", () => {
  const tokens: BudgetUse = { budget: { window: "5h", tokens: 1000 }, used: 1200, resetsAt: now + 3_600_000 };
  expect(keyState(key([usd("1d", 6, 5, now + 80_000_000), tokens]), now)).toEqual({ kind: "budget_used_up", until: now + 80_000_000, windows: ["1d", "5h"] });
  expect(keyState(key([tokens]), now)).toEqual({ kind: "budget_used_up", until: now + 3_600_000, windows: ["5h"] });
});

test("revoked and disabled say so first, whatever the budget", () => {
  const spent = [usd("1d", 1, 0.5, now + 1000)];
  expect(keyState(key(spent, { revokedAt: now - 5 }), now)).toEqual({ kind: "revoked", at: now - 5 });
  expect(keyState(key(spent, { disabledAt: now - 7 }), now)).toEqual({ kind: "disabled", at: now - 7 });
});
