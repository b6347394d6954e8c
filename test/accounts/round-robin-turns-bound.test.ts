/**
 * Round-robin turns are kept per (provider, model) (src/accounts/rank-for-request.ts): with
 * client-chosen model names (a provider that serves any name) they must stay bounded, at most
 * MAX_ROUND_ROBIN_TURNS pairs, the least recently used forgotten first (its next request starts again
 * at the first account); a model in use keeps its turn however many other names come and go.
 */
import { expect, test } from "bun:test";
import type { Account } from "../../pipeline/ports.ts";
import { Bindings } from "../../src/accounts/bindings.ts";
import { QuotaBook } from "../../src/accounts/quota.ts";
import { MAX_ROUND_ROBIN_TURNS, RequestRanking } from "../../src/accounts/rank-for-request.ts";
import { AccountStats } from "../../src/accounts/stats.ts";

test("round-robin turns: at most MAX_ROUND_ROBIN_TURNS (provider, model) pairs; the least recently used is forgotten", () => {
  const ranking = new RequestRanking({
    clock: { now: () => 1_000_000 } as never,
    opts: { strategy: () => "round-robin" },
    stats: new AccountStats(),
    quota: new QuotaBook(),
    bindings: new Bindings(),
  });
  const accounts = ["a", "b", "c"].map((id) => ({ id }) as unknown as Account);
  const first = (model: string) => ranking.of(accounts, "p", model, {} as never)[0]!.account.id;
  expect(MAX_ROUND_ROBIN_TURNS).toBe(1000);
  // two requests each: the next of "kept" and "old" would go to c
  expect([first("old"), first("old")]).toEqual(["a", "b"]);
  expect([first("kept"), first("kept")]).toEqual(["a", "b"]);
  for (let i = 0; i < MAX_ROUND_ROBIN_TURNS - 2; i++) first(`rnd-${i}`);
  expect(first("kept")).toBe("c"); // used again: now the most recent
  first("rnd-new"); // past the cap: "old", the least recently used, is forgotten
  expect(first("kept")).toBe("a");
  expect(first("old")).toBe("a"); // starts again at the first account
  // "rnd-0" went when "old" came back; "rnd-1" is still there (its turn 1: b)
  expect(first("rnd-1")).toBe("b");
});
