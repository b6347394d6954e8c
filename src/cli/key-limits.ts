/**
 * `switchyard keys create NAME --rpm N --tpm N --concurrency N --budget WINDOW:tokens|usd:AMOUNT
 * --models LIST` (SPEC 9.6): the flags as the admin API's `limits` body (the config file's
 * `keys[].limits` shape; the server validates it), the text `usage --by key` and `keys list` show for
 * budget use, and the text `keys list` shows for this minute's use of rpm / tpm.
 */
import type { BudgetUse, MinuteUse } from "../../pipeline/ports.ts";
import { dollars } from "../limits/dollars.ts";

/** The flags' values as parsed by node:util parseArgs. */
export interface LimitFlags {
  rpm?: string;
  tpm?: string;
  concurrency?: string;
  budget?: string[];
  /** Each `--models` given (repeatable: the lists add up, as `--budget`'s budgets do). */
  models?: string[];
}

/**
 * The `limits` body of `POST /admin/api/keys` from the flags, or undefined when none is given.
 * @throws Error with a one-line message naming the flag when a value cannot be read.
 */
export function limitsFromFlags(f: LimitFlags): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  const whole = (flag: string, v: string | undefined) => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`--${flag} must be a positive whole number, not ${JSON.stringify(v)}`);
    return Number(v);
  };
  for (const k of ["rpm", "tpm", "concurrency"] as const) {
    const n = whole(k, f[k]);
    if (n !== undefined) out[k] = n;
  }
  if (f.budget?.length) {
    out.budgets = f.budget.map((b) => {
      const m = /^(5h|1d|7d|30d):(tokens|usd):(\d+(?:\.\d+)?)$/.exec(b.trim());
      if (!m) throw new Error(`--budget takes WINDOW:tokens:AMOUNT or WINDOW:usd:AMOUNT with WINDOW 5h, 1d, 7d or 30d (e.g. 1d:usd:25), not ${JSON.stringify(b)}`);
      return { window: m[1], [m[2]]: Number(m[3]) };
    });
  }
  if (f.models !== undefined) {
    // Every --models given adds its names (`--models 'fc/*' --models good` kept only `good` until
    // 2026-12-05: parseArgs keeps a single-valued option's last value without a word).
    const list = [...new Set(f.models.flatMap((m) => m.split(",")).map((s) => s.trim()).filter(Boolean))];
    if (list.length === 0) throw new Error("--models takes a comma-separated list of model names, aliases, combos or provider/* patterns");
    out.models = list;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A flag's value that clears its limit in `keys set` (`--rpm none`). */
const CLEAR = "none";

/**
 * The body of `PATCH /admin/api/keys/{name}` from `switchyard keys set NAME`'s flags (the create flags;
 * `none` clears a limit: `--rpm none`, `--budget none`, `--models none`; `--tag ''` removes the tag;
 * `--scope admin` gives the key the admin scope, `--scope none` takes its scopes away), or undefined
 * when none is given. `--budget` replaces the key's budgets with those given, `--models` its
 * allow-list, `--scope` its scopes; a limit not named stays as it is.
 * @throws Error with a one-line message naming the flag when a value cannot be read.
 */
export function limitsChangeFromFlags(f: LimitFlags & { tag?: string; scope?: string[] }): Record<string, unknown> | undefined {
  const cleared = (v: string | undefined) => v?.trim() === CLEAR;
  const limits: Record<string, unknown> = {};
  for (const k of ["rpm", "tpm", "concurrency"] as const) if (cleared(f[k])) limits[k] = null;
  const budgetsCleared = f.budget?.length === 1 && cleared(f.budget[0]);
  if (f.budget && f.budget.length > 1 && f.budget.some(cleared)) throw new Error("--budget none clears the key's budgets: give it alone, not with other --budget values");
  const modelsCleared = f.models?.length === 1 && cleared(f.models[0]);
  if (f.models && f.models.length > 1 && f.models.some(cleared)) throw new Error("--models none allows every model: give it alone, not with other --models lists");
  if (budgetsCleared) limits.budgets = null;
  if (modelsCleared) limits.models = null;
  const given = limitsFromFlags({
    rpm: cleared(f.rpm) ? undefined : f.rpm,
    tpm: cleared(f.tpm) ? undefined : f.tpm,
    concurrency: cleared(f.concurrency) ? undefined : f.concurrency,
    budget: budgetsCleared ? undefined : f.budget,
    models: modelsCleared ? undefined : f.models,
  });
  Object.assign(limits, given);
  const out: Record<string, unknown> = {};
  if (Object.keys(limits).length > 0) out.limits = limits;
  if (f.tag !== undefined) out.tag = f.tag.trim() === "" ? null : f.tag;
  if (f.scope?.length) {
    if (f.scope.length > 1 && f.scope.some(cleared)) throw new Error("--scope none takes the key's scopes away: give it alone, not with --scope admin");
    // the server checks the names (admin is the only scope) and says so
    out.scopes = cleared(f.scope[0]) ? null : [...new Set(f.scope.map((x) => x.trim()))];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** USD as the CLI writes it (src/limits/dollars.ts, shared with the dashboard). */
export { dollars };

/**
 * "1d 3,200 / 10,000 tokens (32 %), resets 2026-12-02T09:13:00Z" per budget, joined by "; "; a USD
 * budget's amounts as {@link dollars} ("1d $0.0031 / $1.00 (0 %)": a spend under a cent is not "$0.00"),
 * with ", 7 requests used models without a price: only their priced part is counted" when the admin
 * API says its window holds requests that used a model without a price (`unpriced`, try18 D17): the one
 * that served them, or a failed attempt's, whose part the budget cannot count, while a partly unpriced
 * request's priced part (a failed attempt at a priced model) is counted. Until 2026-12-08 it read "7
 * requests of unpriced models not counted", wrong for such a request.
 */
export function describeBudgetUse(uses: readonly BudgetUse[]): string {
  return uses
    .map((u) => {
      const usd = u.budget.usd !== undefined;
      const limit = u.budget.usd ?? u.budget.tokens ?? 0;
      const fmt = (n: number) => (usd ? dollars(n) : Math.round(n).toLocaleString("en-US"));
      const share = limit > 0 ? Math.round((u.used / limit) * 100) : 0;
      const resets = u.resetsAt !== undefined ? `, resets ${new Date(u.resetsAt).toISOString().replace(/\.\d{3}Z$/, "Z")}` : ", not started";
      const n = usd && typeof u.unpriced === "number" && u.unpriced > 0 ? u.unpriced : 0;
      const unpriced = n > 0 ? `, ${n === 1 ? "1 request used a model without a price: only its" : `${n.toLocaleString("en-US")} requests used models without a price: only their`} priced part is counted (settings.pricing gives one)` : "";
      return `${u.budget.window} ${fmt(u.used)} / ${fmt(limit)}${usd ? "" : " tokens"} (${share} %)${resets}${unpriced}`;
    })
    .join("; ");
}

/**
 * This minute's use of a key's rpm and tpm limits for `keys list` (`GET /admin/api/keys`'s `use.minute`,
 * what the dashboard's Keys page shows): "2 of 2 requests (limit reached), 36 of 5,000 tokens"; "-"
 * for a key without rpm or tpm (or a revoked one, which has no use).
 */
export function describeMinuteUse(m: MinuteUse | undefined): string {
  const part = (u: { used: number; limit: number } | undefined, unit: string) =>
    u ? `${Math.round(u.used).toLocaleString("en-US")} of ${u.limit.toLocaleString("en-US")} ${unit}${u.used >= u.limit ? " (limit reached)" : ""}` : undefined;
  const parts = [part(m?.requests, "requests"), part(m?.tokens, "tokens")].filter((p): p is string => p !== undefined);
  return parts.length > 0 ? parts.join(", ") : "-";
}
