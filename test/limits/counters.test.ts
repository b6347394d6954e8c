/**
 * The in-memory key limit counters (SPEC 9.6) on a fixed clock: which request is refused, the wait it
 * is told, budget windows aligned to the first use, and budget windows surviving a restart.
 */
import { describe, expect, test } from "bun:test";
import { MemoryKeyCounters } from "../../src/limits/counters.ts";
import { modelAllowed } from "../../pipeline/key-limits.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("rpm: an exact rolling minute", () => {
  test("the rpm+1-th request in a minute is refused until the first leaves the minute", () => {
    const c = new MemoryKeyCounters();
    const limits = { rpm: 3 };
    expect(c.admit("k", limits, T0).ok).toBe(true);
    expect(c.admit("k", limits, T0 + 10_000).ok).toBe(true);
    expect(c.admit("k", limits, T0 + 20_000).ok).toBe(true);
    const r = c.admit("k", limits, T0 + 30_000);
    expect(r).toEqual({ ok: false, refusal: { limit: "rpm", used: 3, max: 3, retryAfterMs: 30_000 } });
    // a refused request is not counted: at T0+60s the first slot is free again
    expect(c.admit("k", limits, T0 + 60_000).ok).toBe(true);
    expect(c.admit("k", limits, T0 + 60_001).ok).toBe(false);
    expect(c.admit("k", limits, T0 + 70_000).ok).toBe(true);
  });

  test("another key has its own counters", () => {
    const c = new MemoryKeyCounters();
    c.admit("a", { rpm: 1 }, T0);
    expect(c.admit("a", { rpm: 1 }, T0 + 1).ok).toBe(false);
    expect(c.admit("b", { rpm: 1 }, T0 + 1).ok).toBe(true);
  });
});

describe("tpm: settled tokens over the last minute", () => {
  test("refused once the minute holds tpm tokens; admitted when they leave it", () => {
    const c = new MemoryKeyCounters();
    const limits = { tpm: 1000 };
    expect(c.admit("k", limits, T0).ok).toBe(true);
    c.settle("k", limits, { tokens: 600, usd: 0 }, T0 + 500);
    expect(c.admit("k", limits, T0 + 5_000).ok).toBe(true);
    c.settle("k", limits, { tokens: 400, usd: 0 }, T0 + 5_500);
    const r = c.admit("k", limits, T0 + 10_000);
    // 1000 used; the 600 tokens of second T0 leave the minute at T0 + 60 s
    expect(r).toEqual({ ok: false, refusal: { limit: "tpm", used: 1000, max: 1000, retryAfterMs: 50_000 } });
    expect(c.admit("k", limits, T0 + 60_000).ok).toBe(true);
  });
});

describe("concurrency", () => {
  test("requests in flight are counted until settled", () => {
    const c = new MemoryKeyCounters();
    const limits = { concurrency: 2 };
    expect(c.admit("k", limits, T0).ok).toBe(true);
    expect(c.admit("k", limits, T0).ok).toBe(true);
    expect(c.admit("k", limits, T0)).toEqual({ ok: false, refusal: { limit: "concurrency", used: 2, max: 2, retryAfterMs: 1000 } });
    c.settle("k", limits, { tokens: 0, usd: 0 }, T0 + 1);
    expect(c.inFlight("k")).toBe(1);
    expect(c.admit("k", limits, T0 + 2).ok).toBe(true);
  });
});

describe("budgets: fixed windows aligned to the first use", () => {
  const limits = { budgets: [{ window: "5h" as const, tokens: 1000 }, { window: "1d" as const, usd: 1 }] };

  test("the request after the budget is spent is refused until the window ends", () => {
    const c = new MemoryKeyCounters();
    const start = T0 + 123_456; // the window opens at the first use, not on a clock boundary
    expect(c.admit("k", limits, start).ok).toBe(true);
    const changes = c.settle("k", limits, { tokens: 999, usd: 0.25 }, start + 1000);
    expect(changes).toEqual([
      { budget: { window: "5h", tokens: 1000 }, before: 0, after: 999, resetsAt: start + 5 * 3_600_000 },
      { budget: { window: "1d", usd: 1 }, before: 0, after: 0.25, resetsAt: start + 86_400_000 },
    ]);
    expect(c.admit("k", limits, start + 2000).ok).toBe(true); // 999 < 1000
    c.settle("k", limits, { tokens: 5, usd: 0.25 }, start + 3000);
    const r = c.admit("k", limits, start + 4000);
    expect(r).toEqual({
      ok: false,
      refusal: { limit: "budget", budget: { window: "5h", tokens: 1000 }, used: 1004, max: 1000, retryAfterMs: 5 * 3_600_000 - 4000 },
    });
    // a new 5h window opens with the first request after the old one ended
    const later = start + 5 * 3_600_000;
    expect(c.admit("k", limits, later).ok).toBe(true);
    expect(c.budgetUse("k", limits, later)).toEqual([
      { budget: { window: "5h", tokens: 1000 }, used: 0, startedAt: later, resetsAt: later + 5 * 3_600_000 },
      { budget: { window: "1d", usd: 1 }, used: 0.5, startedAt: start, resetsAt: start + 86_400_000 },
    ]);
  });

  test("the longest wait wins when several limits refuse", () => {
    const c = new MemoryKeyCounters();
    const l = { rpm: 1, budgets: [{ window: "1d" as const, tokens: 10 }] };
    c.admit("k", l, T0);
    c.settle("k", l, { tokens: 10, usd: 0 }, T0 + 1);
    const r = c.admit("k", l, T0 + 2);
    expect(r.ok === false && r.refusal.limit).toBe("budget");
  });

  test("budget windows survive a restart through takeDirty/load", () => {
    const c = new MemoryKeyCounters();
    c.admit("k", limits, T0);
    c.settle("k", limits, { tokens: 1000, usd: 0.1 }, T0 + 10);
    const rows = c.takeDirty();
    expect(rows).toEqual([
      { keyName: "k", window: "5h", startedAt: T0, tokens: 1000, usd: 0.1 },
      { keyName: "k", window: "1d", startedAt: T0, tokens: 1000, usd: 0.1 },
    ]);
    expect(c.takeDirty()).toEqual([]);
    const next = new MemoryKeyCounters();
    next.load(rows, T0 + 60_000);
    const r = next.admit("k", limits, T0 + 60_000);
    expect(r.ok === false && r.refusal.limit).toBe("budget");
    // an ended window is not restored
    const after = new MemoryKeyCounters();
    after.load(rows, T0 + 5 * 3_600_000);
    expect(after.admit("k", limits, T0 + 5 * 3_600_000).ok).toBe(true);
  });
});

describe("models allow-list", () => {
  test("exact names and provider/* patterns", () => {
    const l = { models: ["coding", "glm/*"] };
    expect(modelAllowed(l, "coding")).toBe(true);
    expect(modelAllowed(l, "glm/glm-5.3")).toBe(true);
    expect(modelAllowed(l, "glm/")).toBe(false);
    expect(modelAllowed(l, "glmx/a")).toBe(false);
    expect(modelAllowed(l, "openai/gpt-5")).toBe(false);
    expect(modelAllowed({}, "anything")).toBe(true);
  });
});
