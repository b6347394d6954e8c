/**
 * Account strategies (SPEC A-3): ordering properties of the scored formula, p2c, random and
 * round-robin; the decayed success rate and latency EWMA they read.
 */
import { describe, expect, test } from "bun:test";
import { seededRng } from "../../pipeline/order.ts";
import type { Account } from "../../pipeline/ports.ts";
import { rankAccounts, scoreAll, SCORE_WEIGHTS, type AccountFacts } from "../../src/accounts/selection.ts";
import { AccountStats, SUCCESS_HALF_LIFE_MS } from "../../src/accounts/stats.ts";

const acct = (id: string, priority = 0): Account => ({ id, providerId: "p", priority, credential: { type: "api_key", apiKey: "k" }, disabled: false, source: "config" });
const fresh = (id: string, extra: Partial<AccountFacts> = {}): AccountFacts => ({ account: acct(id), successRate: 1, ...extra });
const ids = (r: { account: Account }[]) => r.map((x) => x.account.id);
const scored = (facts: AccountFacts[]) => ids(rankAccounts("scored", facts, Math.random, 0));

describe("scored (the default)", () => {
  test("weights sum to 1", () => {
    expect(Object.values(SCORE_WEIGHTS).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
  });

  test("equal health keeps the list order (position breaks ties)", () => {
    expect(scored(["a", "b", "c", "d"].map((x) => fresh(x)))).toEqual(["a", "b", "c", "d"]);
  });

  test("one recent failure moves an account behind a healthy one, whatever the list length", () => {
    for (const n of [2, 3, 10]) {
      const facts = Array.from({ length: n }, (_, i) => fresh(`a${i}`));
      facts[0].successRate = 0.5; // (0 + 1) / (0 + 1 + 1)
      expect(scored(facts)[0]).toBe("a1");
    }
  });

  test("a markedly slower account (2×) goes behind its neighbour; a marginally slower one (1.2×) keeps its place", () => {
    expect(scored([fresh("a", { latencyMs: 2000 }), fresh("b", { latencyMs: 1000 })])).toEqual(["b", "a"]);
    expect(scored([fresh("a", { latencyMs: 1200 }), fresh("b", { latencyMs: 1000 })])).toEqual(["a", "b"]);
  });

  test("an account never measured is not penalised for latency", () => {
    expect(scored([fresh("a"), fresh("b", { latencyMs: 300 })])).toEqual(["a", "b"]);
  });

  test("less quota left moves an account back; none reported counts as full", () => {
    expect(scored([fresh("a", { quota: 0.1 }), fresh("b")])).toEqual(["b", "a"]);
    expect(scored([fresh("a", { quota: 0.9 }), fresh("b")])).toEqual(["a", "b"]);
    expect(scored([fresh("a", { quota: 0.2 }), fresh("b", { quota: 0.9 }), fresh("c", { quota: 0.6 })])).toEqual(["b", "c", "a"]);
    // a small quota gap does not beat the list position: 0.25 · 0.15 = 0.0375 < the 0.05 a 2-account gap is worth
    expect(scored([fresh("a", { quota: 0.35 }), fresh("b", { quota: 0.5 })])).toEqual(["a", "b"]);
  });

  test("the score is the documented weighted sum", () => {
    const [s] = scoreAll([fresh("a", { successRate: 0.8, latencyMs: 200, quota: 0.5 }), fresh("b", { latencyMs: 100 })]);
    expect(s).toEqual({ success: 0.8, latency: 0.5, quota: 0.5, position: 1, total: 0.45 * 0.8 + 0.2 * 0.5 + 0.25 * 0.5 + 0.1 * 1 });
  });

  test("the note explains the score", () => {
    const [r] = rankAccounts("scored", [fresh("a")], Math.random, 0);
    expect(r.note).toBe("score 1.00 (success 1.00, latency 1.00, quota 1.00, position 1.00)");
  });
});

describe("success rate and latency (stats.ts)", () => {
  test("fresh = 1, one failure = 0.5, and failures fade with a 5-minute half-life", () => {
    const s = new AccountStats();
    expect(s.successRate("a", 0)).toBe(1);
    s.failure("a", 0);
    expect(s.successRate("a", 0)).toBe(0.5);
    expect(s.successRate("a", SUCCESS_HALF_LIFE_MS)).toBeCloseTo(1 / 1.5, 10);
    expect(s.successRate("a", 60 * 60_000)).toBeGreaterThan(0.99);
  });

  test("an account recovers its place without traffic once its failure fades", () => {
    const s = new AccountStats();
    s.failure("a", 0);
    const at = (t: number) => scored([fresh("a", { successRate: s.successRate("a", t) }), fresh("b", { successRate: s.successRate("b", t) })]);
    expect(at(0)).toEqual(["b", "a"]);
    expect(at(30 * 60_000)).toEqual(["a", "b"]);
  });

  test("latency is an EWMA (α = 0.3) of successful attempts", () => {
    const s = new AccountStats();
    s.success("a", 1000, 0);
    s.success("a", 2000, 0);
    expect(s.latency("a")).toBeCloseTo(1300, 6);
  });
});

describe("other strategies", () => {
  const four = ["a", "b", "c", "d"].map((x) => fresh(x));

  test("round-robin rotates the start by one per turn", () => {
    expect([0, 1, 2, 3, 4].map((t) => ids(rankAccounts("round-robin", four, Math.random, t))[0])).toEqual(["a", "b", "c", "d", "a"]);
    expect(ids(rankAccounts("round-robin", four, Math.random, 2))).toEqual(["c", "d", "a", "b"]);
  });

  test("random is a uniform shuffle (seeded: each account first about 1/4 of the time)", () => {
    const rng = seededRng(1);
    const first = new Map<string, number>();
    for (let i = 0; i < 8000; i++) {
      const r = ids(rankAccounts("random", four, rng, 0));
      expect(new Set(r).size).toBe(4);
      first.set(r[0], (first.get(r[0]) ?? 0) + 1);
    }
    for (const id of ["a", "b", "c", "d"]) expect(Math.abs(first.get(id)! / 8000 - 0.25)).toBeLessThan(0.02);
  });

  test("p2c: the worst account is never first; the best is first whenever drawn", () => {
    const facts = [fresh("a", { successRate: 0.2 }), fresh("b"), fresh("c", { successRate: 0.6 }), fresh("d", { successRate: 0.9 })];
    const rng = seededRng(3);
    const first = new Map<string, number>();
    for (let i = 0; i < 6000; i++) {
      const r = ids(rankAccounts("p2c", facts, rng, 0));
      expect(new Set(r).size).toBe(4);
      first.set(r[0], (first.get(r[0]) ?? 0) + 1);
    }
    expect(first.get("a") ?? 0).toBe(0);
    // b is best: it wins every pair it is in, i.e. P(b drawn) = 1 − C(3,2)/C(4,2) = 1/2
    expect(Math.abs(first.get("b")! / 6000 - 0.5)).toBeLessThan(0.03);
    // d wins only against a and c: 2 of 6 pairs → 1/3; c only against a: 1/6
    expect(Math.abs(first.get("d")! / 6000 - 1 / 3)).toBeLessThan(0.03);
    expect(Math.abs(first.get("c")! / 6000 - 1 / 6)).toBeLessThan(0.03);
  });

  test("a single account is simply first under every strategy", () => {
    for (const s of ["scored", "p2c", "random", "round-robin"] as const) expect(ids(rankAccounts(s, [fresh("x")], Math.random, 5))).toEqual(["x"]);
  });
});
