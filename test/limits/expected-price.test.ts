/**
 * What a request in flight holds against a USD budget (SPEC 9.5, 9.6): at least what a token of its own
 * model is expected to cost. The model's expected cost per token is what its priced requests cost per
 * counted token so far (src/limits/accounting.ts `expectedUsdPerToken`), the dearer of its input and
 * output price before one settled; the embedded counters hold the dearer of that and the window's mean.
 */
import { describe, expect, test } from "bun:test";
import type { RequestContext } from "../../pipeline/context.ts";
import type { UsageRecord } from "../../pipeline/ports.ts";
import { RequestAccounting } from "../../src/limits/accounting.ts";
import { MemoryKeyCounters } from "../../src/limits/counters.ts";
import type { PriceOverride } from "../../src/pricing/prices.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const DEAR = { provider: { id: "up", kind: "openai" as const }, model: "gpt-dear" };

/** A finished Chat request of no key, served by `DEAR`, with this usage. */
const finished = (accounting: RequestAccounting, input: number, output: number) => {
  const rec = { usage: { inputTokens: input, outputTokens: output }, estimated: false, outcome: "ok", status: 200 } as UsageRecord;
  accounting.finish({ endpoint: "chat" } as unknown as RequestContext, rec, DEAR, T0);
  return rec;
};

describe("a model's expected USD per token", () => {
  test("the dearer of its prices until a request of it settled, then what its requests cost per token; a new pricing starts over", () => {
    let pricing: ReadonlyMap<string, PriceOverride> = new Map([["up/gpt-dear", { input: 100, output: 1000 }]]);
    const accounting = new RequestAccounting({ pricing: () => pricing, counters: {} as never });
    const expected = () => accounting.expectedUsdPerToken("up", "openai", "gpt-dear");
    expect(expected()).toBeCloseTo(0.001, 12); // $1,000 per million output tokens
    expect(accounting.expectedUsdPerToken("up", "openai", "gpt-unpriced")).toBeUndefined();
    // 20 input at $0.0001 and 10 output at $0.001: $0.012 for 30 tokens
    expect(finished(accounting, 20, 10).costUsd).toBeCloseTo(0.012, 12);
    expect(expected()).toBeCloseTo(0.0004, 12);
    // 30 input tokens alone: $0.0001 per token; the mean moves by 0.3 of the step
    finished(accounting, 30, 0);
    expect(expected()).toBeCloseTo(0.0004 + 0.3 * (0.0001 - 0.0004), 12);
    pricing = new Map([["up/gpt-dear", { input: 2000, output: 3000 }]]);
    expect(expected()).toBeCloseTo(0.003, 12);
  });
});

describe("the embedded counters' reservation against a USD budget", () => {
  const limits = { budgets: [{ window: "1d" as const, usd: 0.05 }] };

  test("a request to a model dearer than the window's mean holds the model's price", () => {
    const c = new MemoryKeyCounters();
    const first = c.admit("k", limits, T0, { tokens: 30, usdPerToken: 0.000001 });
    expect(first.ok).toBe(true);
    c.settle("k", limits, { tokens: 30, usd: 0.00003 }, T0 + 10, first.ok ? first.ticket : undefined); // the window's mean: $0.000001 per token
    const dear = c.admit("k", limits, T0 + 20, { tokens: 30, usdPerToken: 0.001 });
    expect(dear.ok && dear.ticket.usd).toBeCloseTo(0.03, 12);
    // the second such request would take the budget past its $0.05: told to retry when the first ends
    const second = c.admit("k", limits, T0 + 30, { tokens: 30, usdPerToken: 0.001 });
    expect(second.ok ? undefined : second.refusal).toMatchObject({ limit: "budget", inFlight: 1, retryAfterMs: 1000 });
  });

  test("a request to a model cheaper than the window's mean still holds the mean", () => {
    const c = new MemoryKeyCounters();
    const first = c.admit("k", limits, T0, { tokens: 30, usdPerToken: 0.001 });
    c.settle("k", limits, { tokens: 30, usd: 0.03 }, T0 + 10, first.ok ? first.ticket : undefined);
    const cheap = c.admit("k", limits, T0 + 20, { tokens: 30, usdPerToken: 0.000001 });
    expect(cheap.ok && cheap.ticket.usd).toBeCloseTo(0.03, 12);
  });
});
