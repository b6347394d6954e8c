/**
 * QuotaBook bounded under client-chosen model names: per-model windows from OpenAI-style
 * x-ratelimit-* headers are stored under the request's model, so an OpenAI-compatible upstream answering
 * for random model names must not grow an account's windows or token limits without bound.
 */
import { expect, test } from "bun:test";
import { MAX_QUOTA_MODELS_PER_ACCOUNT, QuotaBook } from "../../src/accounts/quota.ts";
import { ALL_MODELS } from "../../src/store/types.ts";

const internals = (q: QuotaBook) => q as unknown as { limits: Map<string, Map<string, unknown>> };
/** Every window the book still holds for the account, reset or not (each test's resets are after 0). */
const heldWindows = (q: QuotaBook, acc: string) => q.windows(acc, 0).length;

test("5,000 random model names: windows and token limits held stay at the cap; the account-wide window survives", () => {
  const q = new QuotaBook();
  const now = 1_800_000_000_000;
  q.set({ accountId: "acc", window: "tokens", model: ALL_MODELS, usedPercent: 99, limit: 50, resetAt: now + 3_600_000, updatedAt: now });
  const t0 = performance.now();
  for (let i = 0; i < 5000; i++) {
    q.set({ accountId: "acc", window: "tokens", model: `rnd-${i}`, usedPercent: 10, limit: 1000, resetAt: now + 60_000, updatedAt: now });
  }
  const ms = performance.now() - t0;
  // The old book held 5,001 windows and 5,001 limits here (and took ~97 ms: each set scanned the list).
  expect(heldWindows(q, "acc")).toBe(MAX_QUOTA_MODELS_PER_ACCOUNT + 1);
  expect(internals(q).limits.get("acc")!.size).toBe(MAX_QUOTA_MODELS_PER_ACCOUNT + 1);
  expect(ms).toBeLessThan(1000);
  // The newest names are kept, the oldest forgotten; the `*` window and limit are never dropped for room.
  expect(q.tightest("acc", "rnd-4999", now, true)?.window.model).toBe("rnd-4999");
  expect(q.tightest("acc", "rnd-0", now, true)).toBeUndefined();
  expect(q.exhausted("acc", "rnd-0", now)?.reason).toBe("quota 1 % left in window tokens");
  expect(q.tokenLimit("acc", "rnd-4999")).toBe(50);
  expect(q.tokenLimit("acc", "rnd-0")).toBe(50);
  expect(q.tokenLimit("acc", ALL_MODELS)).toBe(50);
});

test("windows whose reset has passed are dropped as later ones are set", () => {
  const q = new QuotaBook();
  const now = 1_800_000_000_000;
  for (let i = 0; i < 100; i++) q.set({ accountId: "acc", window: "requests", model: `old-${i}`, remaining: 5, limit: 10, resetAt: now + 1000, updatedAt: now });
  expect(q.windows("acc", now).length).toBe(100);
  for (let i = 0; i < 100; i++) q.set({ accountId: "acc", window: "requests", model: `new-${i}`, remaining: 5, limit: 10, resetAt: now + 61_000, updatedAt: now + 60_000 });
  // The old book still held 200 here; every old-* window had reset.
  expect(heldWindows(q, "acc")).toBe(100);
  expect(q.windows("acc", now + 60_000).map((w) => w.model)).toEqual(Array.from({ length: 100 }, (_, i) => `new-${i}`));
});

test("setting a model again keeps it: least recently set goes first", () => {
  const q = new QuotaBook();
  const now = 1_800_000_000_000;
  q.set({ accountId: "acc", window: "tokens", model: "gpt-real", remaining: 1, limit: 100, resetAt: now + 600_000, updatedAt: now });
  for (let i = 0; i < 3 * MAX_QUOTA_MODELS_PER_ACCOUNT; i++) {
    q.set({ accountId: "acc", window: "tokens", model: `rnd-${i}`, remaining: 90, limit: 100, resetAt: now + 600_000, updatedAt: now });
    if (i % 100 === 0) q.set({ accountId: "acc", window: "tokens", model: "gpt-real", remaining: 1, limit: 100, resetAt: now + 600_000, updatedAt: now });
  }
  expect(q.exhausted("acc", "gpt-real", now)?.reason).toBe("quota 1 % left in window tokens for gpt-real");
  expect(q.tokenLimit("acc", "gpt-real")).toBe(100);
});

test("after a re-read (load) the model least recently updated is the first dropped for room, not the first in the store's order", () => {
  // Fixed 2026-12-07: load set the windows in the store's order (account, window, model), so the next
  // new model pushed out "a-real", read a second ago, before "z-old", read an hour ago.
  const q = new QuotaBook();
  const now = 1_800_000_000_000;
  const stored = [
    { accountId: "acc", window: "tokens", model: "a-real", remaining: 1, limit: 100, resetAt: now + 600_000, updatedAt: now - 1000 },
    ...Array.from({ length: MAX_QUOTA_MODELS_PER_ACCOUNT - 2 }, (_, i) => ({ accountId: "acc", window: "tokens", model: `m-${String(i).padStart(3, "0")}`, remaining: 90, limit: 100, resetAt: now + 600_000, updatedAt: now - 2000 })),
    { accountId: "acc", window: "tokens", model: "z-old", remaining: 90, limit: 100, resetAt: now + 600_000, updatedAt: now - 3_600_000 },
  ];
  q.load(stored);
  expect(heldWindows(q, "acc")).toBe(MAX_QUOTA_MODELS_PER_ACCOUNT);
  q.set({ accountId: "acc", window: "tokens", model: "new-one", remaining: 90, limit: 100, resetAt: now + 600_000, updatedAt: now });
  expect(heldWindows(q, "acc")).toBe(MAX_QUOTA_MODELS_PER_ACCOUNT);
  expect(q.tightest("acc", "z-old", now, true)).toBeUndefined();
  expect(q.exhausted("acc", "a-real", now)?.reason).toBe("quota 1 % left in window tokens for a-real");
});

test("a window without a reset time stops counting a day after it was read, as the store drops it", () => {
  // Fixed 2026-12-07: memory kept it until the next re-read of the store (and the store for 30 days).
  const q = new QuotaBook();
  const now = 1_800_000_000_000;
  const day = 24 * 3_600_000;
  q.set({ accountId: "acc", window: "requests", model: "gpt-x", remaining: 1, limit: 100, updatedAt: now - day + 1000 });
  expect(q.exhausted("acc", "gpt-x", now)?.reason).toBe("quota 1 % left in window requests for gpt-x");
  expect(q.windows("acc", now).map((w) => w.model)).toEqual(["gpt-x"]);
  expect(q.exhausted("acc", "gpt-x", now + 1000)).toBeUndefined();
  expect(q.windows("acc", now + 1000)).toEqual([]);
});
