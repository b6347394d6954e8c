/**
 * The budget reset in words: a client's 429 for a used-up budget ("the window resets in …",
 * pipeline/key-limits.ts) and the dashboard's Keys page ("resets in …", src/dashboard/client/format.ts)
 * say the same at the same moment (newuser11's tryout: the 429 said "24h 0m" while the page said
 * "23h 59m"). Both round up, as the Retry-After header beside the refusal does.
 */
import { expect, test } from "bun:test";
import { refusalError } from "../../pipeline/key-limits.ts";
import { budgetResets } from "../../src/dashboard/client/format.ts";

const NOW = Date.parse("2026-12-05T01:45:50Z");

/** The 429 message and the Keys page's foot for a 1d budget that resets `left` ms from now. */
function both(left: number): { refusal: string; page: string; retryAfter: number | undefined } {
  const resetsAt = NOW + left;
  const err = refusalError("bud", { limit: "budget", retryAfterMs: left, used: 0.035, max: 0.03, budget: { window: "1d", usd: 0.03 }, resetsAt }, NOW);
  return { refusal: err.message, page: budgetResets(resetsAt, NOW), retryAfter: err.retryAfterSeconds };
}

test("23 h 59 min 40 s left: both say 24h 0m (rounded up, as Retry-After: 86380 is)", () => {
  const r = both(86_380_000);
  expect(r.refusal).toContain("the window resets in 24h 0m (at 2026-12-06T01:45:30Z)");
  expect(r.page).toBe("resets in 24h 0m");
  expect(r.retryAfter).toBe(86_380);
});

test("at every moment of a window the page's words are the refusal's", () => {
  for (const left of [1, 999, 1000, 59_001, 119_000, 120_001, 3_599_400, 7_199_000, 7_200_001, 86_399_999, 172_800_000, 5 * 86_400_000 - 1]) {
    const r = both(left);
    const words = r.page.replace(/^resets in /, "");
    expect(r.refusal, `${left} ms`).toContain(`the window resets in ${words} (at `);
  }
});

test("a window that has ended reads 'resets now' on the page", () => {
  expect(budgetResets(NOW - 1, NOW)).toBe("resets now");
});
