/**
 * Quota windows from providers' rate-limit headers (SPEC P-5) and the reset times the
 * classification reads from them (SPEC 6.3 "429 with a reset time"). The header sets are real
 * replies as published by other clients of the same endpoints (values unchanged), and the header
 * tables of the vendors' docs.
 */
import { describe, expect, test } from "bun:test";
import { classify, resetTimeOf } from "../../pipeline/classify.ts";
import { remainingFraction, QuotaBook } from "../../src/accounts/quota.ts";
import { readQuotaWindows } from "../../src/providers/quota-headers.ts";

const NOW = 1_789_400_000_000;
const ctx = (model = "claude-opus-4-1") => ({ accountId: "acct", model, now: NOW });

/** A Claude Max reply's unified headers (captured reply of api.anthropic.com with an OAuth token). */
const CLAUDE_SAMPLE = {
  "anthropic-ratelimit-unified-status": "allowed",
  "anthropic-ratelimit-unified-5h-status": "allowed",
  "anthropic-ratelimit-unified-5h-reset": "1789414200",
  "anthropic-ratelimit-unified-5h-utilization": "0.26",
  "anthropic-ratelimit-unified-7d-status": "allowed",
  "anthropic-ratelimit-unified-7d-reset": "1789542000",
  "anthropic-ratelimit-unified-7d-utilization": "0.06",
  "anthropic-ratelimit-unified-7d_opus-utilization": "0.13",
  "anthropic-ratelimit-unified-7d_opus-reset": "1789542000",
  "anthropic-ratelimit-unified-representative-claim": "five_hour",
  "anthropic-ratelimit-unified-fallback-percentage": "0.5",
  "anthropic-ratelimit-unified-overage-status": "rejected",
  "anthropic-ratelimit-unified-overage-reset": "1789600000",
};

/** A ChatGPT Codex reply's headers (captured reply of chatgpt.com/backend-api/codex/responses). */
const CODEX_SAMPLE = {
  "x-codex-primary-reset-after-seconds": "394022",
  "x-codex-primary-reset-at": "1789805965",
  "x-codex-primary-used-percent": "28",
  "x-codex-primary-window-minutes": "10080",
  "x-codex-secondary-reset-after-seconds": "0",
  "x-codex-secondary-used-percent": "0",
  "x-codex-secondary-window-minutes": "0",
  "x-codex-bengalfox-primary-used-percent": "0",
  "x-codex-bengalfox-primary-window-minutes": "300",
};

describe("readQuotaWindows", () => {
  test("Claude unified: 5h and 7d windows for every model, the opus window for opus models only; overage is not quota", () => {
    const w = readQuotaWindows(new Headers(CLAUDE_SAMPLE), ctx("claude-opus-4-1"));
    expect(w).toEqual([
      { accountId: "acct", window: "5h", model: "*", usedPercent: 26, resetAt: 1_789_414_200_000, updatedAt: NOW },
      { accountId: "acct", window: "7d", model: "*", usedPercent: 6, resetAt: 1_789_542_000_000, updatedAt: NOW },
      { accountId: "acct", window: "7d_opus", model: "claude-opus-4-1", usedPercent: 13, resetAt: 1_789_542_000_000, updatedAt: NOW },
    ]);
    const sonnet = readQuotaWindows(new Headers(CLAUDE_SAMPLE), ctx("claude-sonnet-4-5"));
    expect(sonnet.map((x) => x.window)).toEqual(["5h", "7d"]);
  });

  test("Claude unified rejection naming its window marks it exhausted", () => {
    const w = readQuotaWindows(
      new Headers({ "anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": "1789414200", "anthropic-ratelimit-unified-representative-claim": "five_hour" }),
      ctx(),
    );
    expect(w).toEqual([{ accountId: "acct", window: "5h", model: "*", usedPercent: 100, resetAt: 1_789_414_200_000, updatedAt: NOW }]);
  });

  test("Codex: primary window for the account; an empty secondary (0 minutes, 0 %) and an inactive model family are skipped", () => {
    const w = readQuotaWindows(new Headers(CODEX_SAMPLE), ctx("gpt-5-codex"));
    expect(w).toEqual([{ accountId: "acct", window: "primary", model: "*", usedPercent: 28, resetAt: 1_789_805_965_000, updatedAt: NOW }]);
  });

  test("Codex: when the active limit is a model family, its numbers are this model's, not the account's", () => {
    const w = readQuotaWindows(
      new Headers({
        "x-codex-active-limit": "codex_bengalfox",
        "x-codex-primary-used-percent": "97",
        "x-codex-primary-window-minutes": "300",
        "x-codex-bengalfox-primary-used-percent": "97",
        "x-codex-bengalfox-primary-window-minutes": "300",
        "x-codex-bengalfox-primary-reset-after-seconds": "600",
      }),
      ctx("gpt-5.3-codex-spark"),
    );
    expect(w).toEqual([{ accountId: "acct", window: "bengalfox-primary", model: "gpt-5.3-codex-spark", usedPercent: 97, resetAt: NOW + 600_000, updatedAt: NOW }]);
  });

  test("Anthropic API-key and OpenAI headers: remaining of limit per model, with reset times", () => {
    const a = readQuotaWindows(
      new Headers({
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "49",
        "anthropic-ratelimit-requests-reset": "2026-09-01T12:00:30Z",
        "anthropic-ratelimit-tokens-limit": "50000",
        "anthropic-ratelimit-tokens-remaining": "1000",
        "anthropic-ratelimit-tokens-reset": "2026-09-01T12:00:05Z",
      }),
      ctx("claude-sonnet-4-5"),
    );
    expect(a.map((x) => [x.window, x.model, x.remaining, x.limit, x.resetAt])).toEqual([
      ["requests", "claude-sonnet-4-5", 49, 50, Date.parse("2026-09-01T12:00:30Z")],
      ["tokens", "claude-sonnet-4-5", 1000, 50000, Date.parse("2026-09-01T12:00:05Z")],
    ]);
    expect(remainingFraction(a[1])).toBe(0.02);
    const o = readQuotaWindows(
      new Headers({ "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499", "x-ratelimit-reset-requests": "120ms", "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "29000", "x-ratelimit-reset-tokens": "2s" }),
      ctx("gpt-5"),
    );
    expect(o.map((x) => [x.window, x.remaining, x.limit, x.resetAt])).toEqual([
      ["requests", 499, 500, NOW + 120],
      ["tokens", 29000, 30000, NOW + 2000],
    ]);
  });

  test("a reply carrying every family, among other headers: each family's windows, in the same order", () => {
    const w = readQuotaWindows(
      new Headers({
        "content-type": "application/json",
        date: "Tue, 01 Sep 2026 12:00:00 GMT",
        ...CODEX_SAMPLE,
        "x-ratelimit-remaining-tokens": "29000",
        "x-ratelimit-limit-tokens": "30000",
        "x-ratelimit-reset-tokens": "1m30s",
        "anthropic-ratelimit-output-tokens-remaining": "7000",
        "anthropic-ratelimit-output-tokens-reset": "2026-09-01T12:00:05Z",
        ...CLAUDE_SAMPLE,
        server: "cloudflare",
      }),
      ctx("claude-sonnet-4-5"),
    );
    expect(w).toEqual([
      { accountId: "acct", window: "5h", model: "*", usedPercent: 26, resetAt: 1_789_414_200_000, updatedAt: NOW },
      { accountId: "acct", window: "7d", model: "*", usedPercent: 6, resetAt: 1_789_542_000_000, updatedAt: NOW },
      { accountId: "acct", window: "output-tokens", model: "claude-sonnet-4-5", remaining: 7000, resetAt: Date.parse("2026-09-01T12:00:05Z"), updatedAt: NOW },
      { accountId: "acct", window: "tokens", model: "claude-sonnet-4-5", remaining: 29000, limit: 30000, resetAt: NOW + 90_000, updatedAt: NOW },
      { accountId: "acct", window: "primary", model: "*", usedPercent: 28, resetAt: 1_789_805_965_000, updatedAt: NOW },
    ]);
    // One family alone reads only its own windows.
    expect(readQuotaWindows(new Headers({ "x-ratelimit-remaining-requests": "9", "anthropic-ratelimit-unified-5h-utilization": "0.5" }), ctx()).map((x) => x.window)).toEqual(["5h", "requests"]);
    expect(readQuotaWindows(new Headers({ "anthropic-ratelimit-requests-remaining": "9" }), ctx()).map((x) => x.window)).toEqual(["requests"]);
  });

  test("no rate-limit headers, or malformed ones: no windows, no error", () => {
    expect(readQuotaWindows(new Headers({ "content-type": "text/event-stream" }), ctx())).toEqual([]);
    expect(readQuotaWindows(new Headers({ "x-codex-primary-used-percent": "lots", "anthropic-ratelimit-unified-5h-utilization": "" }), ctx())).toEqual([]);
  });

  test("A-1: a window at 1 % left excludes the account until it resets; at 5 % it does not", () => {
    const book = new QuotaBook();
    for (const w of readQuotaWindows(new Headers({ "x-codex-primary-used-percent": "99", "x-codex-primary-reset-at": String((NOW + 3600_000) / 1000) }), ctx("gpt-5"))) book.set(w);
    expect(book.exhausted("acct", "gpt-5", NOW)).toEqual({ reason: expect.stringContaining("1 % left in window primary"), until: NOW + 3600_000 });
    expect(book.exhausted("acct", "gpt-5", NOW + 3600_001)).toBeUndefined();
    for (const w of readQuotaWindows(new Headers({ "x-codex-primary-used-percent": "95" }), ctx("gpt-5"))) book.set(w);
    expect(book.exhausted("acct", "gpt-5", NOW)).toBeUndefined();
  });

  test("tokenLimit: the per-minute token limit of the account's headers, for the model or all models, kept after the window resets and a store re-read without it", () => {
    const book = new QuotaBook();
    expect(book.tokenLimit("acct", "gpt-4o-mini")).toBeUndefined();
    // OpenAI: a full window resets at once ("0s"), and the store drops a row once its reset has passed.
    const openai = new Headers({ "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "30000", "x-ratelimit-reset-tokens": "0s", "x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "499" });
    for (const w of readQuotaWindows(openai, ctx("gpt-4o-mini"))) book.set(w);
    expect(book.tokenLimit("acct", "gpt-4o-mini")).toBe(30000);
    expect(book.tokenLimit("acct", "gpt-4o")).toBeUndefined(); // another model's window is its own
    book.load([]);
    expect(book.tokenLimit("acct", "gpt-4o-mini")).toBe(30000);
    // A newer reading replaces it (a tier raised); Anthropic's input-tokens window counts, the smaller wins.
    for (const w of readQuotaWindows(new Headers({ "x-ratelimit-limit-tokens": "150000", "x-ratelimit-remaining-tokens": "150000" }), ctx("gpt-4o-mini"))) book.set({ ...w, updatedAt: NOW + 1 });
    expect(book.tokenLimit("acct", "gpt-4o-mini")).toBe(150000);
    const anthropic = new Headers({ "anthropic-ratelimit-tokens-limit": "90000", "anthropic-ratelimit-tokens-remaining": "90000", "anthropic-ratelimit-input-tokens-limit": "40000", "anthropic-ratelimit-input-tokens-remaining": "40000" });
    for (const w of readQuotaWindows(anthropic, ctx("claude-x"))) book.set(w);
    expect(book.tokenLimit("acct", "claude-x")).toBe(40000);
  });
});

describe("named reset times in the classification", () => {
  test("Claude 429: the unified reset (Unix seconds) names the cooldown; the later 7-day reset of an allowed window does not stretch it", () => {
    const headers = new Headers({ ...CLAUDE_SAMPLE, "anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": "1789414200", "anthropic-ratelimit-unified-5h-status": "rejected" });
    expect(resetTimeOf({ headers, now: NOW })).toBe(1_789_414_200_000);
    const c = classify({ status: 429, headers, bodyText: '{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}', now: NOW });
    expect(c.row).toBe("rate_limit_with_reset");
    expect(c.account).toEqual({ type: "cooldown_until", scope: "model", until: 1_789_414_200_000, reason: "429 with a reset time" });
  });

  test("Codex: a window at 100 % names its reset (reset-at over reset-after-seconds)", () => {
    const h = new Headers({ "x-codex-primary-used-percent": "100", "x-codex-primary-reset-at": String(NOW / 1000 + 1800), "x-codex-primary-reset-after-seconds": "60", "x-codex-secondary-used-percent": "40", "x-codex-secondary-reset-at": String(NOW / 1000 + 86400) });
    expect(resetTimeOf({ headers: h, now: NOW })).toBe(NOW + 1800_000);
    const only = new Headers({ "x-codex-primary-used-percent": "100", "x-codex-primary-reset-after-seconds": "90" });
    expect(resetTimeOf({ headers: only, now: NOW })).toBe(NOW + 90_000);
  });
});
