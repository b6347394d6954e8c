/**
 * Usage (SPEC 9.4): tokens and cost by model, account, key, provider or instance over time — a chart of the
 * time series and a table of the groups — and the token savers' savings where usage reports them;
 * what it shows downloads as CSV or JSON (../usage-export.ts).
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, qs } from "../api.ts";
import { Breakable, Card, Empty, ErrorLine, TimeChart, useData, useDebounced } from "../components.tsx";
import { spentUsd } from "../../../limits/dollars.ts";
import { count, ms, perBucket, tzOffsetMinutes, usd, usdColumn } from "../format.ts";
import { useLive } from "../live.ts";
import type { UsageAnswer, UsageRow } from "../types.ts";
import { costSeries, total } from "./overview.tsx";
import { usageCsv, usageFileName, usageJson } from "../usage-export.ts";

const RANGES = [
  { id: "1h", label: "1 hour", bucket: "1m" },
  { id: "24h", label: "1 day", bucket: "1h" },
  { id: "7d", label: "7 days", bucket: "1d" },
] as const;
const GROUPS = ["model", "account", "key", "provider", "instance"] as const;

/**
 * What the subtitle says about cost: API prices only when some group of the period cost something (a
 * group's `costUsd` is 0, not absent, when none of its requests had a price), and, when subscriptions
 * served some, that Cost is money spent and their use at API prices is apart; else, when requests used
 * models without a price, that their cost is unknown; else nothing (no request was priced or unpriced,
 * e.g. refused requests only, or models priced at 0).
 */
export function costNote(rows: readonly UsageRow[]): string {
  const cost = rows.some((r) => r.costUsd > 0);
  const unpriced = rows.reduce((n, r) => n + r.unpriced, 0);
  const subscriptions = rows.some((r) => (r.subscriptionUsd ?? 0) > 0);
  const apart = subscriptions ? "; Cost is money spent, subscriptions' use at API prices is apart (paid by the month, not billed per request)" : "";
  if (cost) return `; cost at API prices${apart}${unpriced ? "; what models without a price used is not counted" : ""}`;
  if (unpriced) return `; no cost: ${count(unpriced)} ${unpriced === 1 ? "request" : "requests"} of this period used models without a price (settings.pricing gives one)`;
  return "";
}

/**
 * What the Usage page's heading adds when some requests' tokens are the gateway's estimate (SPEC O-1: the
 * provider reported no usage, e.g. a reply cut off before it): how many, so totals that include them do not
 * read as all reported (try17 T7). Empty when none.
 */
export function estimatedNote(rows: readonly UsageRow[]): string {
  const n = rows.reduce((sum, r) => sum + r.estimated, 0);
  if (n === 0) return "";
  return ` (${count(n)} ${n === 1 ? "request's tokens are" : "requests' tokens are"} the gateway's estimate: the provider reported no usage; the Calls page marks them ≈)`;
}

/**
 * The label of the group whose value is absent (the store's `null` group), for the grouping `by` (the
 * CLI's `usage` legend says the same, src/cli/usage-table.ts): a request refused (a bad body, an unknown
 * model, a key limit) or failed before reaching a target has no model, account or provider; one sent
 * without a client key (allowed from this machine while keys are not required), or refused for a wrong
 * or revoked one, has no key (it read "sent without one" for a revoked key's 401s: newuser12a, G10).
 */
export function noGroupLabel(by: (typeof GROUPS)[number]): string {
  if (by === "key") return "no valid key (none sent, or a wrong or revoked one)";
  if (by === "instance") return "not recorded (calls from before switchyard kept which instance served them)";
  return `no ${by} (refused or failed before one)`;
}

/** Hands `text` to the browser as a file download named `name` (a `blob:` link clicked, then released). */
export function downloadText(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * A column heading with a soft hyphen (U+00AD) where `label` has a "-" ("Fall-backs"): the word may
 * break there, hyphenated, when the table is tight (see {@link useTightHeadings}); otherwise it is
 * whole. The heading's text is the word with the invisible U+00AD in it.
 */
function soft(label: string): string {
  return label.replaceAll("-", "\u00AD");
}

/**
 * Sets `data-tight` on the table when, with its headings' words whole, it is wider than its box (the
 * `.table-wrap` around it), and clears it when it fits: style.css then lets the headings break at their
 * soft hyphens ({@link soft}), so every column stays in view at 1280 px (by account, Refused beside Rate
 * limited pushed Avg total out: try18 D11), while a table with room keeps "Requests" on one line.
 */
function fitHeadings(table: HTMLTableElement | null): void {
  const wrap = table?.parentElement;
  if (!table || !wrap) return;
  table.removeAttribute("data-tight");
  if (wrap.scrollWidth > wrap.clientWidth + 0.5) table.setAttribute("data-tight", "");
}

/** {@link fitHeadings} on the table `ref` holds after every render (before it is painted) and when the window is resized. */
function useTightHeadings(ref: { current: HTMLTableElement | null }): void {
  useLayoutEffect(() => fitHeadings(ref.current));
  useEffect(() => {
    // the window, not a ResizeObserver on the box: the box's width follows the window's, and a
    // ResizeObserver whose callback changes the box's height reports a loop error
    const onResize = () => fitHeadings(ref.current);
    addEventListener("resize", onResize);
    return () => removeEventListener("resize", onResize);
  }, []);
}

/**
 * How wide the group column must stay, as a CSS length (its cells' `--group-width`: their min-width, but
 * on a phone): its longest whole part (a name, or the part of a served `provider/model` name before or
 * after its slash, the slash kept with the first) in `ch` of its monospace font, from 7 to 17
 * (`claude-sonnet-4-5`), plus the cell's padding and 2 px for the rounding to whole pixels. A longer part
 * breaks inside only when the table has no room for it. By account, names of 15 characters leave the
 * figures 15 px more than a model name's 17 need (try18 D11: the by-account table ran past a 1280 px window).
 */
export function groupColumnWidth(rows: readonly Pick<UsageRow, "group">[]): string {
  let longest = 0;
  for (const r of rows) {
    const parts = (r.group ?? "").split("/");
    parts.forEach((p, i) => (longest = Math.max(longest, p.length + (i < parts.length - 1 ? 1 : 0))));
  }
  return `calc(${Math.min(17, Math.max(7, longest))}ch + 10px)`;
}

/** True when a group used nothing that could cost: no tokens of any kind, no cost and no unpriced request (its Cost reads "–", as in Calls, not "$0"). */
function nothingBilled(r: UsageRow): boolean {
  return !r.costUsd && !r.unpriced && r.inputTokens + r.outputTokens + r.cacheReadTokens + r.cacheWriteTokens === 0;
}

/** The range and grouping as the address keeps them (`/dashboard/usage?range=7d&by=account`); the defaults (1 day, by model) are left out. */
function readUrl(): { range: (typeof RANGES)[number]; by: (typeof GROUPS)[number] } {
  const p = new URLSearchParams(location.search);
  const range = RANGES.find((r) => r.id === p.get("range")) ?? RANGES[1];
  const by = GROUPS.find((g) => g === p.get("by")) ?? "model";
  return { range, by };
}

function writeUrl(range: (typeof RANGES)[number], by: (typeof GROUPS)[number]): void {
  const p = new URLSearchParams();
  if (range.id !== RANGES[1].id) p.set("range", range.id);
  if (by !== "model") p.set("by", by);
  const q = p.toString();
  const url = `${location.pathname}${q ? `?${q}` : ""}`;
  if (url !== location.pathname + location.search) history.replaceState(null, "", url);
}

export function UsagePage() {
  // The choices live in the address, so a reload, a bookmark or a shared link shows the same table (newuser12b H8).
  const [range, setRange] = useState<(typeof RANGES)[number]>(() => readUrl().range);
  const [by, setBy] = useState<(typeof GROUPS)[number]>(() => readUrl().by);
  useEffect(() => writeUrl(range, by), [range.id, by]);
  const usage = useData(() => api<UsageAnswer>(`/usage${qs({ since: range.id, by, bucket: range.bucket, tz_offset: tzOffsetMinutes() })}`), [range.id, by]);
  const refresh = useDebounced(usage.reload, 2000);
  useLive((e) => {
    if (e.type === "request_finished" || e.type === "hello") refresh();
  });
  const rows = [...(usage.data?.rows ?? [])].sort((a, b) => b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens));
  const buckets = usage.data?.series?.buckets ?? [];
  // each time starts a bucket of this width: the charts draw every value across its bucket (newuser12a G13)
  const bucketMs = usage.data?.series?.bucketMs;
  const hasCost = rows.some((r) => r.costUsd !== undefined);
  // The cost chart only when something had a price (unpriced requests count $0 in the buckets).
  const costChart = buckets.some((b) => (b.costUsd ?? 0) > 0);
  // Subscriptions' use at API prices is not money spent: its own column and bars (newuser12b's tryout: Cost added both).
  const subscriptions = rows.some((r) => (r.subscriptionUsd ?? 0) > 0);
  const saved = total(rows, (r) => r.savedTokens);
  // One number of decimals down the Cost column (it mixed "$1.25" and "$0.0012").
  const costCell = usdColumn(rows.filter((r) => !nothingBilled(r)).map((r) => spentUsd(r)));
  const subscriptionCell = usdColumn(rows.map((r) => r.subscriptionUsd));
  // By account: the attempts each account answered with 429, when any did (the account that served counts the request).
  const limited = by === "account" && rows.some((r) => (r.rateLimited ?? 0) > 0);
  const table = useRef<HTMLTableElement>(null);
  const nameWidth = groupColumnWidth(rows);
  useTightHeadings(table);
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <h1>Usage</h1>
          <p class="muted">
            Tokens as the providers reported them{estimatedNote(rows)}
            {costNote(rows)}.
          </p>
        </div>
        <div class="form-row">
          <div class="seg">
            {GROUPS.map((g) => (
              <button key={g} type="button" class={g === by ? "on" : ""} onClick={() => setBy(g)}>
                by {g}
              </button>
            ))}
          </div>
          <div class="seg">
            {RANGES.map((r) => (
              <button key={r.id} type="button" class={r.id === range.id ? "on" : ""} onClick={() => setRange(r)}>
                {r.label}
              </button>
            ))}
          </div>
        </div>
      </header>
      <ErrorLine error={usage.error} />
      {usage.data && rows.length === 0 && (
        <Card>
          <Empty title="No usage in this period">
            <p>Requests show up here with their tokens once they finish. The Setup page has the snippets to point an agent at this gateway.</p>
          </Empty>
        </Card>
      )}
      {buckets.length > 0 && rows.length > 0 && (
        <div class="grid-2">
          <Card title={`Tokens over time, ${perBucket(range.bucket)}`}>
            {/* every series a line of steps: input was bars beside lines that sloped between an empty bucket and a busy one (G13) */}
            <TimeChart
              times={buckets.map((b) => b.t)}
              bucketMs={bucketMs}
              series={[
                { label: "input (uncached)", values: buckets.map((b) => b.inputTokens), color: "#0891b2" },
                { label: "output", values: buckets.map((b) => b.outputTokens), color: "#7c3aed" },
                { label: "cache read", values: buckets.map((b) => b.cacheReadTokens), color: "#16a34a" },
                { label: "cache write", values: buckets.map((b) => b.cacheWriteTokens), color: "#d97706" },
              ]}
            />
          </Card>
          <Card title={`${costChart ? "Cost over time (USD)" : "Requests over time"}, ${perBucket(range.bucket)}`}>
            {costChart ? (
              <TimeChart times={buckets.map((b) => b.t)} bucketMs={bucketMs} series={costSeries(buckets)} />
            ) : (
              <TimeChart times={buckets.map((b) => b.t)} bucketMs={bucketMs} series={[{ label: "requests", values: buckets.map((b) => b.requests), color: "#3b6ef5", bars: true }]} />
            )}
          </Card>
        </div>
      )}
      {rows.length > 0 && (
        <Card title={`By ${by}`}>
          <div class="usage-download">
            <span class="muted small">Download by {by}, the last {range.label.replace(/^1 /, "")}:</span>
            <button type="button" class="btn btn-small" data-download="csv" onClick={() => downloadText(usageFileName(range.id, by, Date.now(), "csv"), "text/csv;charset=utf-8", usageCsv(rows, by))}>
              CSV
            </button>
            <button type="button" class="btn btn-small" data-download="json" title="The rows, the charts' time series and the cost split" onClick={() => usage.data && downloadText(usageFileName(range.id, by, Date.now(), "json"), "application/json", usageJson(usage.data, rows))}>
              JSON
            </button>
          </div>
          <div class="table-wrap">
            <table class="usage" ref={table}>
              <thead>
                <tr>
                  <th>{by[0]!.toUpperCase() + by.slice(1)}</th>
                  <th class="num">{soft("Re-quests")}</th>
                  <th class="num" title="Requests that failed (upstream or in the gateway)">Errors</th>
                  <th class="num" title="Requests the gateway refused itself: key limits (429), a disabled key (403), no or a wrong key (401), a body it refused">Refused</th>
                  <th class="num">{soft("Fall-backs")}</th>
                  {limited && <th class="num">Rate limited</th>}
                  <th class="num" title="Input tokens not read from or written to the provider's prompt cache: those are Cache read and Cache write">
                    {soft("Input (un-cached)")}
                  </th>
                  <th class="num">Output</th>
                  <th class="num">Cache read</th>
                  <th class="num">Cache write</th>
                  <th class="num">{soft("Reason-ing")}</th>
                  {hasCost && <th class="num">Cost</th>}
                  {subscriptions && <th class="num">{soft("Sub-scrip-tions at API prices")}</th>}
                  {saved !== undefined && <th class="num">Saved</th>}
                  <th class="num">Avg first byte</th>
                  <th class="num">Avg total</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.group ?? "(none)"} data-group={r.group ?? ""}>
                    <td class="mono usage-group" style={{ "--group-width": nameWidth }}>{r.group !== null ? <Breakable name={r.group} /> : <span class="muted no-group">{noGroupLabel(by)}</span>}</td>
                    <td class="num" data-label="Requests">{count(r.requests)}</td>
                    <td class="num" data-label="Errors">{count(r.errors)}</td>
                    <td class="num" data-label="Refused">{count(r.refused ?? 0)}</td>
                    <td class="num" data-label="Fallbacks">{count(r.fallbacks)}</td>
                    {limited && (
                      <td class="num" data-label="Rate limited">
                        {count(r.rateLimited ?? 0)}
                      </td>
                    )}
                    <td class="num" data-label="Input (uncached)">{count(r.inputTokens)}</td>
                    <td class="num" data-label="Output">{count(r.outputTokens)}</td>
                    <td class="num" data-label="Cache read">{count(r.cacheReadTokens)}</td>
                    <td class="num" data-label="Cache write">{count(r.cacheWriteTokens)}</td>
                    <td class="num" data-label="Reasoning">{count(r.reasoningTokens)}</td>
                    {hasCost && (
                      <td class="num" data-label="Cost" title={r.unpriced ? (r.unpriced === 1 ? "1 request used a model without a price: what that model used is not counted" : `${count(r.unpriced)} requests used models without a price: what those models used is not counted`) : undefined}>
                        {nothingBilled(r) ? (
                          <span class="muted">–</span>
                        ) : r.unpriced && !((r.costUsd ?? 0) > 0) ? (
                          <span class="muted">unpriced</span>
                        ) : (
                          <>
                            {costCell(spentUsd(r))}
                            {r.unpriced ? <span class="muted">*</span> : null}
                          </>
                        )}
                      </td>
                    )}
                    {subscriptions && (
                      <td class="num" data-label="Subscriptions at API prices">
                        {(r.subscriptionUsd ?? 0) > 0 ? subscriptionCell(r.subscriptionUsd) : <span class="muted">–</span>}
                      </td>
                    )}
                    {saved !== undefined && (
                      <td class="num" data-label="Saved">
                        {count(r.savedTokens)}
                      </td>
                    )}
                    <td class="num" data-label="Avg first byte">
                      {ms(r.avgTtfbMs)}
                    </td>
                    <td class="num" data-label="Avg total">
                      {ms(r.avgTotalMs)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {rows.some((r) => r.unpriced && (r.costUsd ?? 0) > 0) && <p class="muted small">* some requests used models without a price (the one that served them, or a failed attempt's): what those models used is not counted, only the part that had a price.</p>}
          {subscriptions && (
            <p class="muted small">
              Cost is money spent at API prices (API keys, other providers). Subscriptions at API prices is what the requests served by subscription logins would have cost at
              API prices: the subscription is paid by the month, not per request.
            </p>
          )}
          {rows.some((r) => r.unpriced && !((r.costUsd ?? 0) > 0)) && (
            <p class="muted small">
              unpriced: a model without a known price, so its cost is not counted (not zero); give it one under <code>settings.pricing</code> in the config file (USD per million tokens).
            </p>
          )}
          {limited && (
            <p class="muted small">
              Rate limited: attempts the account answered with 429; the request then went to another account (which counts it under Requests) or
              failed.
            </p>
          )}
          <p class="muted small">
            Input counts the uncached input tokens only: those read from or written to the provider's prompt cache are under Cache read and Cache
            write (a request whose client saw 5,100 prompt tokens, 5,000 of them cached, reads Input 100).
          </p>
          <p class="muted small">
            Avg first byte averages the requests an upstream answered; Avg total averages every request of the group, refused and failed
            ones included, so it can be the smaller.
          </p>
          <p class="muted small">
            {saved
              ? `Token savers saved about ${count(saved)} input tokens in this period.`
              : "No token-saver savings recorded in this period."}
          </p>
        </Card>
      )}
    </div>
  );
}
