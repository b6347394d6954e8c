/**
 * `switchyard usage`'s table (src/cli/usage-table.ts): the first column is named for the grouping, the
 * group without a value reads "(none)" and the cost of requests without a price reads "unpriced", each
 * explained by a legend line under the table; nothing cryptic ("-" as a group, "? (+N unpriced)").
 */
import { describe, expect, test } from "bun:test";
import { costCell, usageLines } from "../../src/cli/usage-table.ts";
import { describeBudgetUse, dollars } from "../../src/cli/key-limits.ts";
import { dollarsColumn, dollarsPair } from "../../src/limits/dollars.ts";
import { usdColumn } from "../../src/dashboard/client/format.ts";
import { formatBudgetAmount } from "../../pipeline/key-limits.ts";

/** A table as tab-joined cells, so the test reads the cells, not the padding. */
const tsv = (head: string[], rows: unknown[][]) => [head, ...rows].map((r) => r.map(String).join("\t")).join("\n");
const row = (group: string | null, extra: Record<string, unknown> = {}) => ({
  group,
  requests: 2,
  errors: 0,
  inputTokens: 10,
  outputTokens: 5,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  savedTokens: 0,
  costUsd: 0,
  unpriced: 0,
  ...extra,
});

describe("usage table", () => {
  test("the cost column has one precision, its smallest amount's, as the dashboard's: scripts/demo printed $0.00014 above $0.000027", () => {
    const rows = [row("claude-sonnet", { costUsd: 0.00014 }), row("gpt-mini", { costUsd: 0.000027 }), row("local", { costUsd: 0 }), row("big", { costUsd: 1.5, unpriced: 1 })];
    const costs = usageLines(rows, "model", tsv)[0].split("\n").slice(1).map((l) => l.split("\t").at(-1));
    expect(costs).toEqual(["$0.000140", "$0.000027", "$0.00", "$1.500000 + 1 unpriced"]); // nothing spent reads $0.00, as the dashboard's $0
    // the dashboard's Usage page writes the same amounts of one column with the same decimals (src/limits/dollars.ts columnDecimals)
    const web = usdColumn([0.00014, 0.000027, 1.5]);
    expect([web(0.00014), web(0.000027), web(1.5)]).toEqual(["$0.000140", "$0.000027", "$1.500000"]);
    for (const column of [[0.00014, 0.000027], [0.025, 0.05, 1], [0.001, 0.1], [1.25, 0.5], [0.0012, 3], [0.054, 0.000043]]) {
      const cli = dollarsColumn(column);
      const dash = usdColumn(column);
      expect(column.map(cli)).toEqual(column.map((v) => dash(v)));
    }
    // subscriptions' use at API prices: a column of its own, with its own precision
    const subs = usageLines([row("cc/opus", { costUsd: 0.5, subscriptionUsd: 0.5 }), row("cc/haiku", { costUsd: 0.00031, subscriptionUsd: 0.00031 })], "model", tsv)[0].split("\n").slice(1).map((l) => l.split("\t").at(-1));
    expect(subs).toEqual(["$0.50000", "$0.00031"]);
  });

  test("by model: the (none) row and the unpriced cost are explained under the table", () => {
    const out = usageLines([row("claude-x", { costUsd: 0.0123, unpriced: 1 }), row("glm-5", { unpriced: 2 }), row(null, { refused: 2 })], "model", tsv);
    expect(out).toEqual([
      [
        "model\trequests\terrors\trefused\tinput\toutput\tcache_read\tcache_write\treasoning\tsaved\tcost",
        "claude-x\t2\t0\t0\t10\t5\t0\t0\t0\t0\t$0.012 + 1 unpriced", // two significant digits, as the dashboard's column
        "glm-5\t2\t0\t0\t10\t5\t0\t0\t0\t0\t2 unpriced",
        "(none)\t2\t0\t2\t10\t5\t0\t0\t0\t0\t-",
      ].join("\n"),
      "",
      "(none): requests no model served (refused, e.g. by a key limit, failed before reaching one, or closed by the client before an attempt reached one)",
      "unpriced: requests that used a model without a price (the one that served them or a failed attempt's); the cost counts only the part that had a price (give the model a settings.pricing entry)",
    ]);
  });

  test("the (none) row's cost reads \"-\" by model, account and provider alike: nothing there was priced (by account and provider it read $0.00)", () => {
    // a request the client closed before any provider, and a probe switchyard answered itself: neither failed nor was refused
    const none = row(null, { requests: 3, errors: 1, refused: 1 });
    for (const by of ["model", "account", "provider"] as const) {
      const cells = usageLines([row("x"), none], by, tsv)[0].split("\n")[2].split("\t");
      expect({ by, group: cells[0], cost: cells.at(-1) }).toEqual({ by, group: "(none)", cost: "-" });
    }
    // by key, (none) is requests sent without a key: served and priced like any other
    expect(usageLines([row(null, { costUsd: 0 })], "key", tsv)[0].split("\n")[1]).toEndWith("\t$0.00\t-"); // then its budgets: none
  });

  test("once the prompt cache was used, a legend line says input is the uncached part (newuser14 K13)", () => {
    const cached = usageLines([row("fa/claude-cache", { inputTokens: 100, outputTokens: 20, cacheReadTokens: 5000, cacheWriteTokens: 300 })], "model", tsv);
    expect(cached.slice(1)).toEqual([
      "",
      "input: uncached input tokens only; those read from or written to the provider's prompt cache are counted apart, in cache_read and cache_write (a client's 5,100 prompt tokens, 5,000 of them cached, read input 100)",
    ]);
    // without cache tokens input is all the input: nothing to say
    expect(usageLines([row("fc/gpt")], "model", tsv)).toHaveLength(1);
  });

  test("by key: (none) is requests without a client key; no legend when nothing needs one", () => {
    expect(usageLines([row(null)], "key", tsv).slice(1)).toEqual(["", "(none): requests without a valid client key: sent without one (allowed from this machine while keys are not required) or refused for a wrong or revoked one"]);
    const plain = usageLines([row("ci", { costUsd: 1.5 })], "account", tsv);
    expect(plain).toHaveLength(1);
    expect(plain[0]).toStartWith("account\trequests\t");
    expect(plain[0]).toEndWith("\t$1.50");
  });

  test("cost cells", () => {
    expect([costCell(0.5, 0), costCell(2, 0), costCell(0, 0), costCell(0.25, 3), costCell(0, 3), costCell(undefined, undefined)]).toEqual(["$0.5000", "$2.00", "-", "$0.2500 + 3 unpriced", "3 unpriced", "-"]);
  });

  test("a model priced at nothing (settings.pricing of 0, a local model) costs $0.00, as on the dashboard, not \"-\"", () => {
    // Found by a new operator: `usage` printed "-" for it, the mark of a row without any cost, while the dashboard read $0.00.
    expect([costCell(0, 0, 4), costCell(0, 0, 0), costCell(undefined, 0, 4)]).toEqual(["$0.00", "-", "-"]);
    expect(usageLines([{ group: "ollama/qwen3", requests: 4, errors: 0, inputTokens: 40, outputTokens: 20, costUsd: 0, unpriced: 0 }], "model", (_h, rows) => rows.map((r) => r.join("\t")).join("\n"))[0]).toEndWith("\t$0.00");
    // ... while requests that used no tokens at all (their client left before the reply began) cost nothing that was priced: "-", as on the dashboard
    expect(usageLines([{ group: "anth-1", requests: 1, errors: 0, clientClosed: 1, inputTokens: 0, outputTokens: 0, costUsd: 0, unpriced: 0 }], "account", (_h, rows) => rows.map((r) => r.join("\t")).join("\n"))[0]).toEndWith("\t-");
  });

  test("a cost of a few thousandths of a cent keeps its leading digits (it read $0.0000)", () => {
    expect([costCell(0.000016, 0), costCell(0.000043, 2), costCell(0.00012, 0), costCell(4e-9, 0)]).toEqual(["$0.000016", "$0.000043 + 2 unpriced", "$0.00012", "$0.000000004"]);
  });

  test("under $0.001, two significant digits, as a budget's 429 writes them: $0.00012 read $0.0001 in keys list, usage and the dashboard", () => {
    expect([dollars(0.00012), dollars(0.00054321), dollars(0.0001), dollars(0.000999), dollars(0.001), dollars(0.0031), dollars(0.5), dollars(12.345), dollars(0)]).toEqual([
      "$0.00012", "$0.00054", "$0.0001", "$0.001", "$0.0010", "$0.0031", "$0.5000", "$12.35", "$0.00",
    ]);
    // the usage table's sum line, keys list's budget cell: the same words as the 429 (one function)
    const budget = { window: "1d", usd: 0.0001 } as const;
    expect(describeBudgetUse([{ budget, used: 0.00012, resetsAt: Date.UTC(2026, 11, 4, 12) }])).toBe("1d $0.00012 / $0.0001 (120 %), resets 2026-12-04T12:00:00Z");
    for (const v of [0, 0.00012, 0.00054321, 0.0001, 0.000999, 0.0031, 0.5, 25, 1234.5]) expect(dollars(v)).toBe(formatBudgetAmount(budget, v));
    expect(dollarsPair(0.00012, 0.0005)).toEqual(["$0.00012", "$0.00050"]);
  });
});

describe("USD amounts of key budgets (keys list, usage --by key, the guard's 429)", () => {
  test("a spend under a cent keeps its digits instead of reading $0.00 or $0.0000", () => {
    const day = { window: "1d", usd: 1 } as const;
    expect(describeBudgetUse([{ budget: day, used: 0.0031, resetsAt: Date.UTC(2026, 11, 4, 12) }])).toBe("1d $0.0031 / $1.00 (0 %), resets 2026-12-04T12:00:00Z");
    expect(describeBudgetUse([{ budget: { window: "1d", usd: 0.00004 }, used: 0.00005, resetsAt: Date.UTC(2026, 11, 4, 12) }])).toBe("1d $0.00005 / $0.00004 (125 %), resets 2026-12-04T12:00:00Z");
    expect(describeBudgetUse([{ budget: { window: "5h", usd: 2.5 }, used: 0 }])).toBe("5h $0.00 / $2.50 (0 %), not started");
    expect(formatBudgetAmount({ window: "1d", usd: 0.00004 }, 0.00004)).toBe("$0.00004");
    expect(formatBudgetAmount({ window: "1d", usd: 1 }, 0.0031)).toBe("$0.0031");
    // two significant digits under $0.001: a $0.0001 budget's use of $0.00012 read "$0.0001"
    expect(formatBudgetAmount({ window: "1d", usd: 0.0001 }, 0.00012)).toBe("$0.00012");
    expect(formatBudgetAmount({ window: "1d", usd: 0.0001 }, 0.0001)).toBe("$0.0001");
    expect(formatBudgetAmount({ window: "1d", usd: 1 }, 0.00054321)).toBe("$0.00054");
    expect(formatBudgetAmount({ window: "1d", usd: 25 }, 25)).toBe("$25.00");
    expect(formatBudgetAmount({ window: "1d", tokens: 3000000 }, 1234567)).toBe("1,234,567 tokens");
  });

  test("keys list says how many requests used models without a price, of which a USD budget counted only the priced part (try18 D17); a token budget, or none, says nothing", () => {
    const at = Date.UTC(2026, 11, 4, 12);
    expect(describeBudgetUse([{ budget: { window: "1d", usd: 5 }, used: 0, resetsAt: at, unpriced: 7 }])).toBe(
      "1d $0.00 / $5.00 (0 %), resets 2026-12-04T12:00:00Z, 7 requests used models without a price: only their priced part is counted (settings.pricing gives one)",
    );
    expect(describeBudgetUse([{ budget: { window: "1d", usd: 5 }, used: 0, resetsAt: at, unpriced: 1 }])).toContain(", 1 request used a model without a price: only its priced part is counted (");
    expect(describeBudgetUse([{ budget: { window: "1d", usd: 5 }, used: 0, resetsAt: at, unpriced: 1234 }])).toContain(", 1,234 requests used models without a price: only their priced part is counted (");
    expect(describeBudgetUse([{ budget: { window: "1d", usd: 5 }, used: 0, resetsAt: at, unpriced: 0 }])).toBe("1d $0.00 / $5.00 (0 %), resets 2026-12-04T12:00:00Z");
  });
});
