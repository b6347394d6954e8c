/**
 * Regression test: the log warning of a key with a USD budget and a model without a price
 * (src/limits/accounting.ts warnUnpriced) said "a key with a USD budget was served by a model that has
 * no price: its requests are not counted against the budget" (until session 47). It also fires for a
 * failed attempt's model, which served nothing, and a request that is only partly unpriced has its
 * priced part counted: both untrue. The warning now says the model was used (to serve or in a failed
 * attempt) and that what that model used is not counted.
 */
import { expect, test } from "bun:test";
import type { RequestContext } from "../../pipeline/context.ts";
import type { UsageRecord } from "../../pipeline/ports.ts";
import { RequestAccounting, UNPRICED_WARNING } from "../../src/limits/accounting.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

test("a failed attempt's unpriced model under a USD-budget key: the warning names it and says only its use is not counted", () => {
  const lines: string[] = [];
  // the served model has a price (USD 1 per million tokens in and out); the failed attempt's model none
  const accounting = new RequestAccounting({ pricing: () => new Map([["p-chat/good", { input: 1, output: 1 }]]), counters: { settle: () => [] } as never, log: (l) => lines.push(l) });
  const key = { name: "alpha", limits: { budgets: [{ window: "1d", usd: 8 }] } };
  const billed = [{ target: { provider: { id: "p-broken", kind: "openai-compatible" }, model: "broken" }, usage: { inputTokens: 300, outputTokens: 0 } }];
  const ctx = { endpoint: "chat", key, limitsAdmitted: false, billed } as unknown as RequestContext;
  const rec = { usage: { inputTokens: 400, outputTokens: 100 }, estimated: false, outcome: "ok", status: 200 } as UsageRecord;
  accounting.finish(ctx, rec, { provider: { id: "p-chat", kind: "openai-compatible" as never }, model: "good" }, T0);
  // the request is partly unpriced: the served reply's 500 tokens are priced, the attempt's are not
  expect({ costUsd: rec.costUsd, unpriced: rec.unpriced }).toEqual({ costUsd: 0.0005, unpriced: true });
  expect(lines.map((l) => JSON.parse(l))).toEqual([{ level: "warn", time: expect.any(Number), msg: UNPRICED_WARNING, key: "alpha", model: "p-broken/broken" }]);
  // before: "a key with a USD budget was served by a model that has no price: its requests are not counted against the budget; …"
  expect(UNPRICED_WARNING).toBe(
    "a key with a USD budget used a model that has no price (to serve a request or in a failed attempt): what that model used is not counted against the budget; give the model a price in settings.pricing",
  );
});
