/**
 * `switchyard usage [--since 24h] [--by model|account|key|provider|instance]` (SPEC 9.5, 9.6, P-5): the rows of
 * `GET /admin/api/usage` as a table whose first column is named for the grouping, and the legend lines
 * a reader needs: that input is the uncached part once the prompt cache was used, what the `(none)` group is
 * (requests that reached no model, account or provider, or sent without a key) and what "unpriced" in the
 * cost column means.
 */
import type { BudgetUse } from "../../pipeline/ports.ts";
import { describeBudgetUse, dollars } from "./key-limits.ts";
import { dollarsColumn, spentUsd } from "../limits/dollars.ts";
import { SINCE } from "../admin/since.ts";

/** GET /admin/api/usage's `cost`: money spent, and subscriptions' use at API prices (USD). */
export interface CostSplit {
  spentUsd: number;
  subscriptionUsd: number;
}

/** How `usage` groups rows (the admin API's `by`). */
export type UsageGrouping = "model" | "account" | "key" | "provider" | "instance";

/** The groupings `usage --by` takes, in the order its help names them. */
const GROUPINGS: readonly UsageGrouping[] = ["model", "account", "key", "provider", "instance"];


/**
 * The usage error (exit 2, README "Command line") of a `usage --by` that is no grouping or a `--since`
 * that is no duration, said before the instance is asked (whose 400 was exit 1 with the admin API's
 * words); undefined when both are absent or valid.
 */
export function usageOptionProblem(values: { by?: unknown; since?: unknown }): string | undefined {
  if (values.by !== undefined && !(GROUPINGS as readonly unknown[]).includes(values.by)) return `--by must be model, account, key, provider or instance, not ${JSON.stringify(values.by)}`;
  if (values.since !== undefined && !SINCE.test(String(values.since))) return `--since must look like 30m, 24h or 7d (a whole number above 0 and s, m, h or d), not ${JSON.stringify(values.since)}`;
  return undefined;
}

/** The cell of the group that has no value (the API's `group: null`). */
export const NO_GROUP = "(none)";

/**
 * The legend line for `input` when a row has prompt-cache tokens: input counts the uncached tokens only
 * (formats/hub.ts), so a client's prompt_tokens of 5,100 with 5,000 cached reads input 100.
 */
export const INPUT_MEANS =
  "input: uncached input tokens only; those read from or written to the provider's prompt cache are counted apart, in cache_read and cache_write (a client's 5,100 prompt tokens, 5,000 of them cached, read input 100)";

/** What the `(none)` row counts, per grouping. */
const NO_GROUP_MEANS: Record<UsageGrouping, string> = {
  model: "requests no model served (refused, e.g. by a key limit, failed before reaching one, or closed by the client before an attempt reached one)",
  account: "requests no account served (refused, e.g. by a key limit, failed before reaching one, closed by the client before an attempt reached one, or answered by switchyard itself: Claude Code's probes)",
  provider: "requests no provider served (refused, e.g. by a key limit, failed before reaching one, or closed by the client before an attempt reached one)",
  instance: "requests recorded before switchyard kept which instance served them",
  key: "requests without a valid client key: sent without one (allowed from this machine while keys are not required) or refused for a wrong or revoked one",
};


/**
 * A cost cell: "$0.0123" (a few thousandths of a cent as "$0.000016"); "$0.00" for requests served and
 * priced at nothing (a model given `settings.pricing` of 0, such as a local one), as the dashboard's Usage
 * page reads them; "$0.0123 + 2 unpriced" when some requests used a model without a price (what those
 * models used is not in the sum; a partly unpriced request's priced part, such as a failed attempt's at a
 * priced model, is); "2 unpriced" when nothing had a price; "-" when nothing was priced nor served (`served`: the row's
 * requests that did not fail; a row of refusals and errors only). `money` writes the amount: {@link dollars}
 * alone, or the column's formatter (dollarsColumn), so that every row has the column's decimals.
 */
export function costCell(costUsd: unknown, unpriced: unknown, served = 0, money: (usd: number) => string = dollars): string {
  const c = typeof costUsd === "number" ? costUsd : 0;
  const n = typeof unpriced === "number" ? unpriced : 0;
  const sum = c > 0 || (c === 0 && n === 0 && served > 0 && typeof costUsd === "number") ? money(c) : undefined;
  if (n === 0) return sum ?? "-";
  return c > 0 ? `${sum} + ${n} unpriced` : `${n} unpriced`;
}

/**
 * The requests of usage row `x` that a model served and that could have a price, for {@link costCell}:
 * those that did not fail nor were refused; none in the `(none)` row of `--by model`, `account` or
 * `provider`, whose requests reached no provider (one a client closed before an attempt reached one,
 * one answered by switchyard itself), so that its cost reads "-" in each of the three, not "$0.00" by
 * provider and account; none either in a row that used no tokens of any kind (requests whose client
 * left before the reply began), whose cost reads "-" as on the dashboard's Usage page.
 */
function servedAndPriceable(x: Record<string, unknown>, by: UsageGrouping): number {
  if ((x.group === null || x.group === undefined) && by !== "key" && by !== "instance") return 0;
  const tokens = Number(x.inputTokens ?? 0) + Number(x.outputTokens ?? 0) + Number(x.cacheReadTokens ?? 0) + Number(x.cacheWriteTokens ?? 0);
  if (tokens === 0) return 0;
  return Number(x.requests ?? 0) - Number(x.errors ?? 0) - Number(x.refused ?? 0);
}

/**
 * The `usage` output: the table (via `table`, the CLI's plain-text table), then a legend line for each
 * cryptic cell that appears in it; one line saying so when `rows` (the admin API's usage rows over the
 * last `since`) are empty. The cost column is money spent (SPEC 9.5): when subscriptions served some
 * of the rows, their use at API prices (a row's `subscriptionUsd`) is a column of its own,
 * `subscription_use`, and a legend line gives both sums (`cost`, the admin API's split).
 */
export function usageLines(rows: Array<Record<string, unknown>>, by: UsageGrouping, table: (head: string[], rows: unknown[][]) => string, since = "24h", cost?: CostSplit): string[] {
  if (rows.length === 0) return [`no requests in the last ${since}: each request is counted here once it finishes (--since 7d looks further back)`];
  const byKey = by === "key";
  // By account: the attempts each account answered with 429, whichever account then served (newuser12b H9).
  const limited = by === "account";
  // Subscriptions' use at API prices is not money spent: its own column (newuser12b's tryout: the cost column added both).
  const subscriptions = rows.some((x) => typeof x.subscriptionUsd === "number" && x.subscriptionUsd > 0);
  // One precision per money column, as the dashboard's Usage page (dollarsColumn): each row written alone
  // put "$0.00014" above "$0.000027".
  const spent = (x: Record<string, unknown>) => (typeof x.costUsd === "number" ? spentUsd(x as { costUsd: number; subscriptionUsd?: number }) : x.costUsd);
  const costMoney = dollarsColumn(rows.map((x) => spent(x)).filter((c): c is number => typeof c === "number"));
  const subscriptionMoney = dollarsColumn(rows.map((x) => (typeof x.subscriptionUsd === "number" ? x.subscriptionUsd : 0)));
  const out = [
    table(
      [by, "requests", "errors", "refused", ...(limited ? ["rate_limited"] : []), "input", "output", "cache_read", "cache_write", "reasoning", "saved", "cost", ...(subscriptions ? ["subscription_use"] : []), ...(byKey ? ["budgets"] : [])],
      rows.map((x) => [
        x.group ?? NO_GROUP,
        x.requests,
        x.errors,
        x.refused ?? 0,
        ...(limited ? [x.rateLimited ?? 0] : []),
        x.inputTokens,
        x.outputTokens,
        x.cacheReadTokens,
        x.cacheWriteTokens,
        x.reasoningTokens,
        x.savedTokens ?? 0,
        costCell(spent(x), x.unpriced, servedAndPriceable(x, by), costMoney),
        ...(subscriptions ? [typeof x.subscriptionUsd === "number" && x.subscriptionUsd > 0 ? subscriptionMoney(x.subscriptionUsd) : "-"] : []),
        ...(byKey ? [x.budgets ? describeBudgetUse(x.budgets as BudgetUse[]) : "-"] : []),
      ]),
    ),
  ];
  const legend: string[] = [];
  // Input is the uncached part (the hub's convention): said once the prompt cache was used (newuser14 K13).
  if (rows.some((x) => Number(x.cacheReadTokens ?? 0) > 0 || Number(x.cacheWriteTokens ?? 0) > 0)) legend.push(INPUT_MEANS);
  if (rows.some((x) => x.group === null || x.group === undefined)) legend.push(`${NO_GROUP}: ${NO_GROUP_MEANS[by]}`);
  if (limited && rows.some((x) => typeof x.rateLimited === "number" && x.rateLimited > 0)) {
    legend.push("rate_limited: attempts the account answered with 429 (rate limited); the request then went to another account or failed, and is counted under the account that served it");
  }
  if (rows.some((x) => typeof x.unpriced === "number" && x.unpriced > 0)) {
    legend.push("unpriced: requests that used a model without a price (the one that served them or a failed attempt's); the cost counts only the part that had a price (give the model a settings.pricing entry)");
  }
  // A subscription's cost is what its requests would have cost at API prices: not money spent (newuser12b's tryout).
  if (subscriptions || (cost && cost.subscriptionUsd > 0)) {
    const sums = cost ? `: ${dollars(cost.spentUsd)} spent (API keys and other providers); ${dollars(cost.subscriptionUsd)} of subscriptions' use` : "";
    legend.push(`cost is money spent; subscription_use is what subscriptions served at API prices, not billed per request (paid by the month)${sums}`);
  }
  if (legend.length > 0) out.push("", ...legend);
  return out;
}
