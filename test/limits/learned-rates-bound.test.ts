/**
 * What a request in flight holds per token against a USD budget is its model's learned USD per token
 * (src/limits/accounting.ts `expectedUsdPerToken`), kept per provider and model. With client-chosen
 * model names all priced (`provider/*` in settings.pricing) that map must stay bounded: at most
 * MAX_LEARNED_RATES models per provider, the least recently learned forgotten first (it then holds its
 * price's upper bound again, the dearer of input and output).
 */
import { expect, test } from "bun:test";
import type { RequestContext } from "../../pipeline/context.ts";
import type { UsageRecord } from "../../pipeline/ports.ts";
import { MAX_LEARNED_RATES, RequestAccounting } from "../../src/limits/accounting.ts";

test("learned rates: at most MAX_LEARNED_RATES models per provider; the least recently learned is forgotten first", () => {
  // $1 per million input, $3 per million output: a request of 400 in + 100 out costs $0.0007 for 500
  // tokens (1.4e-6 per token); an unlearned model holds the upper bound, 3e-6 per token.
  const pricing = new Map([["p-any/*", { input: 1, output: 3 }]]);
  const accounting = new RequestAccounting({ pricing: () => pricing, counters: {} as never });
  const served = (model: string) => ({ provider: { id: "p-any", kind: "openai-compatible" as never }, model });
  const send = (model: string, i: number) => {
    const rec = { usage: { inputTokens: 400, outputTokens: 100 }, estimated: false, outcome: "ok", status: 200 } as UsageRecord;
    accounting.finish({ endpoint: "chat", limitsAdmitted: false } as unknown as RequestContext, rec, served(model), i);
    expect(rec.costUsd).toBeCloseTo(0.0007, 12);
  };
  const rate = (model: string) => accounting.expectedUsdPerToken("p-any", "openai-compatible" as never, model)!;
  expect(MAX_LEARNED_RATES).toBe(1000);
  send("m-0", 0);
  expect(rate("m-0")).toBeCloseTo(1.4e-6, 15);
  expect(rate("never-sent")).toBeCloseTo(3e-6, 15);
  for (let i = 1; i < MAX_LEARNED_RATES; i++) send(`m-${i}`, i);
  send("m-0", 5_000); // learned again: now the most recent
  send("m-new", 5_001); // past the cap: forgets m-1, the least recently learned
  expect(rate("m-0")).toBeCloseTo(1.4e-6, 15);
  expect(rate("m-new")).toBeCloseTo(1.4e-6, 15);
  expect(rate(`m-${MAX_LEARNED_RATES - 1}`)).toBeCloseTo(1.4e-6, 15);
  expect(rate("m-1")).toBeCloseTo(3e-6, 15);
  expect(rate("m-2")).toBeCloseTo(1.4e-6, 15);
  for (let i = 0; i < 5_000; i++) send(`r-${i}`, 10_000 + i);
  const learned = Array.from({ length: 5_000 }, (_, i) => rate(`r-${i}`)).filter((r) => r < 2e-6).length;
  expect(learned).toBe(MAX_LEARNED_RATES);
});
