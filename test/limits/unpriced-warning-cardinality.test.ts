/**
 * Found in a 45-minute soak (fixed: MAX_UNPRICED_WARNINGS in src/limits/accounting.ts): a key with a USD budget served by models that
 * have no price gets one `warn` line per distinct (key, provider/model) pair, and the pairs are kept in
 * a Set for the life of the process (src/limits/accounting.ts `warnUnpriced`, `warnedUnpriced`). A
 * client that sends random model names to a provider that serves any name (an openai-compatible server)
 * therefore makes one warning per request and an ever-growing Set: in the soak, 128 such lines in the
 * first 6 minutes at ~9 requests/s, beside ~3,000 request lines. The metrics already cap model labels
 * (src/http/metrics.ts MAX_MODEL_SERIES = 500); the warning has no such cap.
 *
 * Expected: the warning stays bounded however many model names a key sends (a cap, then one line that
 * says further models are not named), so the log does not carry a line per request.
 */
import { expect, test } from "bun:test";
import type { RequestContext } from "../../pipeline/context.ts";
import type { UsageRecord } from "../../pipeline/ports.ts";
import { MAX_UNPRICED_WARNINGS, RequestAccounting } from "../../src/limits/accounting.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

test("random unpriced model names under a USD-budget key do not make one warning line each", () => {
  const lines: string[] = [];
  const accounting = new RequestAccounting({ pricing: () => new Map(), counters: {} as never, log: (l) => lines.push(l) });
  const key = { name: "alpha", limits: { budgets: [{ window: "1d", usd: 8 }] } };
  for (let i = 0; i < 2_000; i++) {
    const rec = { usage: { inputTokens: 400, outputTokens: 100 }, estimated: false, outcome: "ok", status: 200 } as UsageRecord;
    const ctx = { endpoint: "chat", key, limitsAdmitted: false } as unknown as RequestContext;
    accounting.finish(ctx, rec, { provider: { id: "p-chat", kind: "openai-compatible" as never }, model: `rnd-${i}` }, T0 + i);
    expect(rec.unpriced).toBe(true);
  }
  const warnings = lines.filter((l) => l.includes("no price"));
  // Before the cap: 2,000 lines, one per model name.
  expect(warnings.length).toBe(MAX_UNPRICED_WARNINGS + 1);
  expect(MAX_UNPRICED_WARNINGS).toBe(100);
  // The first 100 pairs are named, each once, in the order they came.
  expect(warnings.slice(0, 100).map((l) => JSON.parse(l).model)).toEqual(Array.from({ length: 100 }, (_, i) => `p-chat/rnd-${i}`));
  // Then one line says further ones are not named, and the requests not named are counted.
  const last = JSON.parse(warnings[100]!);
  expect(last.level).toBe("warn");
  expect(last.msg).toContain("past 100 (key, model) pairs they are not named in the log");
  expect(accounting.unnamedUnpriced).toBe(1_900);
});

test("a model named before the cap is still named once, and its later requests are not counted as unnamed", () => {
  const lines: string[] = [];
  const accounting = new RequestAccounting({ pricing: () => new Map(), counters: {} as never, log: (l) => lines.push(l) });
  const key = { name: "alpha", limits: { budgets: [{ window: "1d", usd: 8 }] } };
  const send = (model: string, i: number) => {
    const rec = { usage: { inputTokens: 400, outputTokens: 100 }, estimated: false, outcome: "ok", status: 200 } as UsageRecord;
    const ctx = { endpoint: "chat", key, limitsAdmitted: false } as unknown as RequestContext;
    accounting.finish(ctx, rec, { provider: { id: "p-chat", kind: "openai-compatible" as never }, model }, T0 + i);
  };
  for (let i = 0; i < 150; i++) send(`rnd-${i}`, i);
  for (let i = 0; i < 10; i++) send("rnd-0", 200 + i);
  expect(lines.filter((l) => l.includes("rnd-0\"")).length).toBe(1);
  expect(accounting.unnamedUnpriced).toBe(50);
  expect(lines.length).toBe(101);
});
