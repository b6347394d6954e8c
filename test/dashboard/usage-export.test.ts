/**
 * The Usage download's CSV has the page's two cost columns (review14 R7): money spent, and
 * subscriptions' use at API prices apart, so a spreadsheet's sum of spent is what was paid.
 */
import { expect, test } from "bun:test";
import { usageCsv } from "../../src/dashboard/client/usage-export.ts";
import type { UsageRow } from "../../src/dashboard/client/types.ts";

const row = (group: string, costUsd: number, subscriptionUsd?: number) =>
  ({ group, requests: 1, errors: 0, clientClosed: 0, fallbacks: 0, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd, ...(subscriptionUsd !== undefined ? { subscriptionUsd } : {}), unpriced: 0, savedTokens: 0, avgTtfbMs: 100, avgTotalMs: 200 }) as unknown as UsageRow;

test("a subscription account's use is in subscription_use_usd, not in spent_usd", () => {
  const lines = usageCsv([row("api", 0.5), row("cc", 0.0018, 0.0018), row("mixed", 1.25, 0.25)], "account").split("\r\n");
  const head = lines[0]!.split(",");
  const col = (line: string, name: string) => line.split(",")[head.indexOf(name)];
  expect(head).not.toContain("cost_usd");
  expect(lines.slice(1, 4).map((l) => [col(l, "account"), col(l, "spent_usd"), col(l, "subscription_use_usd")])).toEqual([
    ["api", "0.5", "0"],
    ["cc", "0", "0.0018"],
    ["mixed", "1", "0.25"],
  ]);
});
