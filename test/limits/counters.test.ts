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

describe("minuteUse: this minute's requests and tokens against rpm and tpm (the Keys page)", () => {
  test("admitted requests and settled tokens of the rolling minute; a refused request is not counted; limits the key lacks are absent", () => {
    const c = new MemoryKeyCounters();
    const limits = { rpm: 2, tpm: 1000 };
    expect(c.minuteUse("k", limits, T0)).toEqual({ requests: { used: 0, limit: 2 }, tokens: { used: 0, limit: 1000 } });
    const first = c.admit("k", limits, T0);
    c.settle("k", limits, { tokens: 300, usd: 0 }, T0 + 500, first.ok ? first.ticket : undefined);
    expect(c.admit("k", limits, T0 + 10_000).ok).toBe(true);
    expect(c.admit("k", limits, T0 + 20_000).ok).toBe(false);
    // at rpm, with the wait admit's refusal has (the dry run's 429 says it, try18 D10)
    expect(c.minuteUse("k", limits, T0 + 20_000)).toEqual({ requests: { used: 2, limit: 2, freesInMs: 40_000 }, tokens: { used: 300, limit: 1000 } });
    // a minute on: the first request and its tokens have left it
    expect(c.minuteUse("k", limits, T0 + 65_000)).toEqual({ requests: { used: 1, limit: 2 }, tokens: { used: 0, limit: 1000 } });
    expect(c.minuteUse("k", { concurrency: 1 }, T0)).toEqual({});
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
      { budget: { window: "1d", usd: 1 }, used: 0.5, startedAt: start, resetsAt: start + 86_400_000, unpriced: 0 },
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

  test("with a monotonic clock, a wall clock stepped back an hour moves the persisted start with it: a restart keeps the window's true end", () => {
    let mono = 1_000;
    const c = new MemoryKeyCounters(() => mono);
    c.admit("k", limits, T0);
    // 10 minutes pass while the wall clock is stepped back an hour.
    mono += 600_000;
    const wall = T0 - 3_600_000 + 600_000;
    c.settle("k", limits, { tokens: 1000, usd: 0.1 }, wall);
    const rows = c.takeDirty();
    expect(rows.map((r) => r.startedAt)).toEqual([T0 - 3_600_000, T0 - 3_600_000]);
    const use = c.budgetUse("k", limits, wall);
    expect(use[0]).toMatchObject({ startedAt: T0 - 3_600_000, resetsAt: T0 - 3_600_000 + 5 * 3_600_000 });
    // After a restart on the stepped clock, the 5h window ends 5 h after it opened (4 h 50 min from now).
    let mono2 = 50;
    const next = new MemoryKeyCounters(() => mono2);
    next.load(rows, wall);
    mono2 += 4 * 3_600_000 + 49 * 60_000;
    expect(next.admit("k", limits, wall + 4 * 3_600_000 + 49 * 60_000).ok).toBe(false);
    mono2 += 60_000;
    expect(next.admit("k", { budgets: [limits.budgets[0]] }, wall + 4 * 3_600_000 + 50 * 60_000).ok).toBe(true);
  });
});

describe("a USD budget's requests of models without a price (review19 R5: counted where the budget is settled)", () => {
  const limits = { budgets: [{ window: "5h" as const, usd: 1 }, { window: "1d" as const, tokens: 10_000 }] };
  const serve = (c: MemoryKeyCounters, at: number, spent: { tokens: number; usd: number; unpriced?: boolean }) => {
    const v = c.admit("k", limits, at);
    if (!v.ok) throw new Error("refused");
    c.settle("k", limits, spent, at + 1, v.ticket);
  };

  test("counted in the window with its spend, on USD budgets only; persisted with the window; reset with it", () => {
    const c = new MemoryKeyCounters();
    for (let i = 0; i < 3; i++) serve(c, T0 + i, { tokens: 20, usd: 0, unpriced: true });
    for (let i = 0; i < 2; i++) serve(c, T0 + 10 + i, { tokens: 30, usd: 0.03 });
    expect(c.budgetUse("k", limits, T0 + 100)).toEqual([
      { budget: limits.budgets[0], used: 0.06, startedAt: T0, resetsAt: T0 + 5 * 3_600_000, unpriced: 3 },
      { budget: limits.budgets[1], used: 120, startedAt: T0, resetsAt: T0 + 86_400_000 },
    ]);
    // a restart: the count comes back with the window
    const rows = c.takeDirty();
    expect(rows.find((r) => r.window === "5h")).toEqual({ keyName: "k", window: "5h", startedAt: T0, tokens: 120, usd: 0.06, unpriced: 3 });
    const next = new MemoryKeyCounters();
    next.load(rows, T0 + 200);
    expect(next.budgetUse("k", limits, T0 + 200)[0]).toMatchObject({ used: 0.06, unpriced: 3 });
    // the 5h window ends: no window, no count; the next one starts from the requests it settles
    const later = T0 + 5 * 3_600_000;
    expect(next.budgetUse("k", limits, later)[0]).toEqual({ budget: limits.budgets[0], used: 0 });
    serve(next, later, { tokens: 30, usd: 0.03 });
    expect(next.budgetUse("k", limits, later + 10)[0]).toMatchObject({ used: 0.03, unpriced: 0, startedAt: later });
    serve(next, later + 20, { tokens: 20, usd: 0, unpriced: true });
    expect(next.budgetUse("k", limits, later + 30)[0]).toMatchObject({ used: 0.03, unpriced: 1 });
    // the 1d window (a token budget, still open) counted every request's tokens
    expect(next.budgetUse("k", limits, later + 30)[1]).toMatchObject({ used: 170 });
  });
});

describe("requests in flight hold their expected tokens against tpm and budgets", () => {
  const tokens = { budgets: [{ window: "5h" as const, tokens: 100 }] };

  test("20 requests arriving together 10 tokens short of a token budget: one goes, the rest wait for it", () => {
    const c = new MemoryKeyCounters();
    const first = c.admit("k", tokens, T0, { tokens: 20 });
    if (!first.ok) throw new Error("refused");
    c.settle("k", tokens, { tokens: 90, usd: 0 }, T0 + 10, first.ticket);
    // each request's body is worth 20 tokens; the key's last request spent 90
    const verdicts = Array.from({ length: 20 }, () => c.admit("k", tokens, T0 + 20, { tokens: 20 }));
    expect(verdicts.filter((v) => v.ok)).toHaveLength(1);
    expect(verdicts[1]).toEqual({
      ok: false,
      refusal: { limit: "budget", budget: { window: "5h", tokens: 100 }, used: 90, max: 100, retryAfterMs: 1000, inFlight: 1 },
    });
    // it spends 30: the budget is now over by one request's worth, and the window refuses until it ends
    const one = verdicts[0];
    if (!one.ok) throw new Error("refused");
    c.settle("k", tokens, { tokens: 30, usd: 0 }, T0 + 30, one.ticket);
    const after = c.admit("k", tokens, T0 + 40, { tokens: 20 });
    expect(after.ok === false && after.refusal.retryAfterMs).toBe(5 * 3_600_000 - 40);
  });

  test("far from the limit, requests in flight do not hold each other back", () => {
    const c = new MemoryKeyCounters();
    const l = { budgets: [{ window: "1d" as const, tokens: 1_000_000 }], tpm: 100_000 };
    const verdicts = Array.from({ length: 10 }, () => c.admit("k", l, T0, { tokens: 5000 }));
    expect(verdicts.every((v) => v.ok)).toBe(true);
    expect(c.inFlight("k")).toBe(10);
  });

  test("a request arriving while none is in flight is admitted under the limit, however large its estimate", () => {
    const c = new MemoryKeyCounters();
    const a = c.admit("k", tokens, T0, { tokens: 10 });
    if (!a.ok) throw new Error("refused");
    c.settle("k", tokens, { tokens: 99, usd: 0 }, T0 + 1, a.ticket);
    expect(c.admit("k", tokens, T0 + 2, { tokens: 1_000_000 }).ok).toBe(true);
  });

  test("the key's mean per request counts when it is larger than a request's body: a small body waits behind a large reply", () => {
    const c = new MemoryKeyCounters();
    const l = { budgets: [{ window: "5h" as const, tokens: 1000 }] };
    const a = c.admit("k", l, T0, { tokens: 5 });
    if (!a.ok) throw new Error("refused");
    c.settle("k", l, { tokens: 400, usd: 0 }, T0 + 1, a.ticket); // mean 400
    expect(c.admit("k", l, T0 + 2, { tokens: 5 }).ok).toBe(true); // 400 + 400 ≤ 1000
    const r = c.admit("k", l, T0 + 3, { tokens: 5 }); // 400 + 400 + 400 > 1000
    expect(r.ok === false && r.refusal).toMatchObject({ limit: "budget", inFlight: 1, retryAfterMs: 1000 });
  });

  test("USD budgets reserve the expected tokens at the window's USD per token", () => {
    const c = new MemoryKeyCounters();
    const l = { budgets: [{ window: "1d" as const, usd: 1 }] };
    const a = c.admit("k", l, T0, { tokens: 100 });
    if (!a.ok) throw new Error("refused");
    c.settle("k", l, { tokens: 1000, usd: 0.5 }, T0 + 1, a.ticket); // $0.0005 per token, mean 1000 tokens = $0.50
    const b = c.admit("k", l, T0 + 2, { tokens: 100 }); // $0.50 + $0.50 reserved: not over $1
    expect(b.ok).toBe(true);
    const r = c.admit("k", l, T0 + 3, { tokens: 100 });
    expect(r.ok === false && r.refusal).toMatchObject({ limit: "budget", used: 0.5, max: 1, inFlight: 1 });
    if (!b.ok) throw new Error("refused");
    c.settle("k", l, { tokens: 100, usd: 0.05 }, T0 + 4, b.ticket);
    expect(c.admit("k", l, T0 + 5, { tokens: 100 }).ok).toBe(true); // nothing in flight, $0.55 < $1
  });

  test("a fresh USD budget reserves the expected tokens at the model's dearest token price; an unpriced model reserves nothing, as before", () => {
    const c = new MemoryKeyCounters();
    const l = { budgets: [{ window: "1d" as const, usd: 0.05 }] };
    // 20 tokens at $0.001 = $0.02 each: the first goes (none in flight), the second fits ($0.04), the third would pass $0.05.
    const verdicts = Array.from({ length: 5 }, () => c.admit("k", l, T0, { tokens: 20, usdPerToken: 0.001 }));
    expect(verdicts.map((v) => v.ok)).toEqual([true, true, false, false, false]);
    expect(verdicts[2].ok === false && verdicts[2].refusal).toEqual({ limit: "budget", budget: { window: "1d", usd: 0.05 }, used: 0, max: 0.05, retryAfterMs: 1000, inFlight: 2 });
    // An unpriced model (no usdPerToken) on another key: nothing to reserve, all five go.
    expect(Array.from({ length: 5 }, () => c.admit("u", l, T0, { tokens: 20 }).ok)).toEqual([true, true, true, true, true]);
    // Once a priced request has settled in the window, the window's own USD per token counts, or the
    // model's when that is dearer.
    const first = verdicts[0];
    if (!first.ok) throw new Error("refused");
    c.settle("k", l, { tokens: 100, usd: 0.01 }, T0 + 1, first.ticket); // $0.0001 per token; mean 100 tokens
    // $0.01 used + $0.02 held by the second + 100 tokens at the model's $0.001 ($0.10): refused (it held
    // the window's $0.01 until 2026-12-04, and a burst to the dear model went over the budget).
    expect(c.admit("k", l, T0 + 2, { tokens: 20, usdPerToken: 0.001 }).ok).toBe(false);
    // A model cheaper than the window's mean ($0.00001 per token) holds the mean: 100 tokens at $0.0001
    // ($0.01) each, two more go, a third would pass $0.05.
    expect([1, 2, 3].map((i) => c.admit("k", l, T0 + 2 + i, { tokens: 20, usdPerToken: 0.00001 }).ok)).toEqual([true, true, false]);
  });

  test("tpm: requests in flight that would take the minute over the limit make the next one wait", () => {
    const c = new MemoryKeyCounters();
    const l = { tpm: 1000 };
    expect(c.admit("k", l, T0, { tokens: 400 }).ok).toBe(true);
    expect(c.admit("k", l, T0, { tokens: 400 }).ok).toBe(true);
    expect(c.admit("k", l, T0, { tokens: 400 })).toEqual({ ok: false, refusal: { limit: "tpm", used: 0, max: 1000, retryAfterMs: 1000, inFlight: 2 } });
  });

  test("settling releases the reservation: after every request ended nothing is held", () => {
    const c = new MemoryKeyCounters();
    const tickets = [c.admit("k", tokens, T0, { tokens: 40 }), c.admit("k", tokens, T0, { tokens: 40 })];
    expect(c.admit("k", tokens, T0, { tokens: 40 }).ok).toBe(false);
    for (const t of tickets) if (t.ok) c.settle("k", tokens, { tokens: 0, usd: 0 }, T0 + 1, t.ticket);
    expect(c.admit("k", tokens, T0 + 2, { tokens: 40 }).ok).toBe(true);
    expect(c.admit("k", tokens, T0 + 2, { tokens: 40 }).ok).toBe(true);
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
