/**
 * The 429 of a spent key budget (pipeline/key-limits.ts `refusalError`, SPEC 2.4, 9.6) names when the
 * window resets. The shared counters (PostgreSQL) measure the wait on the database's clock and the
 * message added it to the instance's own, so a window ending at 00:00:00Z read 23:59:59Z in one 429 and
 * 00:00:00Z in the next, while `keys list` and the alerts said 00:00:00Z: a refusal that knows the
 * window's end (`LimitRefusal.resetsAt`) names it.
 */
import { describe, expect, test } from "bun:test";
import { refusalError } from "../../pipeline/key-limits.ts";

const END = Date.parse("2026-12-05T00:00:00Z");
const budget = { window: "1d" as const, tokens: 100 };

describe("refusalError of a spent budget", () => {
  test("names the window's end it is given, whatever the clocks' sub-second offset", () => {
    for (const now of [END - 3_600_000 - 400, END - 3_600_000 + 400]) {
      const e = refusalError("spent", { limit: "budget", budget, used: 108, max: 100, retryAfterMs: END - now - 300, resetsAt: END }, now);
      expect(e.message).toContain("(at 2026-12-05T00:00:00Z)");
      expect(e.message).toContain("108 tokens used");
    }
  });

  test("without one, now plus the wait (the embedded counters, whose wait is measured from that now)", () => {
    const e = refusalError("spent", { limit: "budget", budget, used: 108, max: 100, retryAfterMs: 3_600_000 }, END - 3_600_000);
    expect(e.message).toContain("(at 2026-12-05T00:00:00Z)");
  });

  test("a small USD budget: both amounts with two significant digits under $0.001 ($0.00012 used, not $0.0001)", () => {
    const usd = { window: "1d" as const, usd: 0.0001 };
    const e = refusalError("tiny", { limit: "budget", budget: usd, used: 0.00012, max: 0.0001, retryAfterMs: 3_600_000, resetsAt: END }, END - 3_600_000);
    expect(e.message).toBe('Client key "tiny" has used its 1d budget of $0.0001 ($0.00012 used); the window resets in 60 min (at 2026-12-05T00:00:00Z).');
  });
});

describe("refusalError of a tpm of 1", () => {
  test('says "1 token per minute", not "1 tokens" (as the rpm says "1 request")', () => {
    const used = refusalError("one", { limit: "tpm", used: 1, max: 1, retryAfterMs: 30_000, resetsAt: END }, END - 30_000);
    expect(used.message).toBe('Client key "one" used 1 of its 1 token per minute (tpm); retry in 30 s (at 2026-12-05T00:00:00Z).');
    const held = refusalError("one", { limit: "tpm", used: 0, max: 1, inFlight: 1, retryAfterMs: 30_000, resetsAt: END }, END - 30_000);
    expect(held.message).toStartWith('Client key "one" has 1 request in flight that may use the rest of its 1 token per minute (tpm; 0 used); ');
    const two = refusalError("two", { limit: "tpm", used: 2, max: 2, retryAfterMs: 30_000, resetsAt: END }, END - 30_000);
    expect(two.message).toStartWith('Client key "two" used 2 of its 2 tokens per minute (tpm)');
  });
});
