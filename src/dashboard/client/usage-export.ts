/**
 * The Usage page's download (newuser12a G12): what the page shows for its range and grouping as a CSV
 * file (the table, one line per group) or a JSON file (the admin API's answer the page drew: rows, the
 * time series of the charts, the cost split). Made in the browser from the answer the page already
 * holds (no second request, no secret: usage carries names and figures only); the page hands it over
 * as a `blob:` download, which the dashboard's Content-Security-Policy leaves alone (no script, no
 * style). No DOM here: the tests import it.
 */
import { spentUsd } from "../../limits/dollars.ts";
import type { UsageAnswer, UsageRow } from "./types.ts";

/**
 * A CSV cell (RFC 4180): quoted when it holds a comma, quote or line break. A text that a spreadsheet
 * would read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return: a model or key
 * name is the client's or operator's text) gets a leading `'` so it stays text (OWASP "CSV injection").
 */
export function csvCell(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") return Number.isFinite(v) ? String(v) : "";
  const text = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The CSV of the Usage table: a header line whose first column is named for the grouping (`model`,
 * `account`, `key`, `provider`, `instance`), then one line per group in the order given; the group that
 * has no value reads `(none)`. `rate_limited` only by account. Costs in USD as the page's two columns:
 * `spent_usd` (money spent: API prices of the keys' accounts) and `subscription_use_usd` (subscriptions'
 * use at API prices, paid by the month, not billed per request), so a spreadsheet's sum of spent is what
 * was paid (review14 R7: one `cost_usd` added both). Times in ms, unrounded.
 * Lines end in CRLF (RFC 4180).
 */
export function usageCsv(rows: readonly UsageRow[], by: string): string {
  const limited = by === "account";
  const head = [by, "requests", "errors", "refused", "client_closed", "fallbacks", ...(limited ? ["rate_limited"] : []), "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "spent_usd", "subscription_use_usd", "unpriced_requests", "saved_tokens", "avg_first_byte_ms", "avg_total_ms"];
  const lines = rows.map((r) =>
    [
      r.group ?? "(none)",
      r.requests,
      r.errors,
      r.refused ?? 0,
      r.clientClosed,
      r.fallbacks,
      ...(limited ? [r.rateLimited ?? 0] : []),
      r.inputTokens,
      r.outputTokens,
      r.cacheReadTokens,
      r.cacheWriteTokens,
      r.reasoningTokens,
      spentUsd(r),
      r.subscriptionUsd ?? 0,
      r.unpriced,
      r.savedTokens,
      r.avgTtfbMs,
      r.avgTotalMs,
    ]
      .map(csvCell)
      .join(","),
  );
  return [head.join(","), ...lines].map((l) => `${l}\r\n`).join("");
}

/** The file name of a download: `switchyard-usage-24h-by-model-2026-12-05T1113Z.csv` (the range, the grouping, when it was made, UTC). */
export function usageFileName(range: string, by: string, now: number, ext: "csv" | "json"): string {
  const at = new Date(now).toISOString().slice(0, 16).replace(":", "");
  return `switchyard-usage-${range}-by-${by}-${at}Z.${ext}`;
}

/** The JSON download: the admin API's answer the page drew (`GET /admin/api/usage`), its rows in the page's order, indented. */
export function usageJson(answer: UsageAnswer, rows: readonly UsageRow[]): string {
  return `${JSON.stringify({ ...answer, rows }, null, 2)}\n`;
}
