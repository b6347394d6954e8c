/**
 * `switchyard keys create|list|set|revoke|rotate|disable|enable` (SPEC 2.2, 9.6): client keys through the running instance's admin
 * API. Loaded by that command only.
 */
import type { BudgetUse, MinuteUse } from "../../pipeline/ports.ts";
import type { KeyStateInput } from "../limits/key-state.ts";
import { admin } from "./instance.ts";
import { table } from "./table.ts";
import { fail, out, visible } from "./terminal.ts";
import { unknownSubcommand } from "./unknown-subcommand.ts";

/** `switchyard keys set`'s usage line (its flags are create's; `none` clears a limit, or the scopes). */
const SET_USAGE = "switchyard keys set NAME [--scope admin|none] [--tag TAG] [--rpm N|none] [--tpm N|none] [--concurrency N|none] [--budget WINDOW:tokens|usd:AMOUNT|none]... [--models LIST|none]...";

/** Runs `switchyard keys SUB [NAME]` with the parsed options `values`; exits with one line on an error. */
export async function keysCommand(sub: string | undefined, name: string | undefined, values: Record<string, unknown>, dataDir: string): Promise<void> {
  switch (sub) {
    case "create": {
      if (!name) fail("usage: switchyard keys create NAME [--scope admin] [--tag TAG] [--rpm N] [--tpm N] [--concurrency N] [--budget WINDOW:tokens|usd:AMOUNT]... [--models LIST]...", 2);
      const scopes = (values.scope as string[] | undefined) ?? [];
      let limits: Record<string, unknown> | undefined;
      const { limitsFromFlags } = await import("./key-limits.ts");
      try {
        limits = limitsFromFlags(values as never);
      } catch (e) {
        fail(e instanceof Error ? e.message : String(e), 2);
      }
      const r = (await admin(values, dataDir, "POST", "/keys", { name, scopes, ...(values.tag ? { tag: values.tag } : {}), ...(limits ? { limits } : {}) })) as { secret: string; key: { name: string } };
      out(`created key ${r.key.name}${scopes.length ? ` (scopes: ${scopes.join(", ")})` : ""}; the secret is shown once:`);
      out(r.secret);
      return;
    }
    case "list": {
      const r = (await admin(values, dataDir, "GET", "/keys")) as { keys: Array<Record<string, unknown>> };
      if (values.json) return out(JSON.stringify(r, null, 2));
      const { describeBudgetUse, describeMinuteUse, dollars } = await import("./key-limits.ts");
      const describeLimits = (k: Record<string, unknown>) => limitsCell(k, describeBudgetUse, dollars);
      if (r.keys.length === 0) return out("no client keys yet: switchyard keys create NAME makes one (callers on this machine need none unless server.require_api_key is set)");
      const iso = (t: unknown) => new Date(Number(t)).toISOString();
      // try18 D16: when the key was last rotated (a rotation whose secret was lost shows here), and while its
      // old secret still works until when; to the second, so that both fit the table's cell
      const sec = (t: unknown) => iso(t).replace(/\.\d{3}Z$/, "Z");
      // as the Keys page's State (src/limits/key-state.ts): a key whose budget is used up is refused until
      // its window resets; until 2026-12-07 its row said "active" (tryout5)
      const { keyState } = await import("../limits/key-state.ts");
      const now = Date.now();
      const state = (k: Record<string, unknown>) => {
        const s = keyState(k as KeyStateInput, now);
        if (s.kind === "revoked" || s.kind === "disabled") return `${s.kind} ${iso(s.at)}`;
        return s.kind === "budget_used_up" ? `budget used up (${s.windows.join(", ")}) until ${sec(s.until)}` : "active";
      };
      const rotation = (k: Record<string, unknown>) => (k.rotatedAt ? `${sec(k.rotatedAt)}${!k.revokedAt && k.previousUntil ? `, old secret until ${sec(k.previousUntil)}` : ""}` : "-");
      // the secret's first characters (a pasted secret starts with them); "-" for a key stored before they were kept
      const rows = r.keys.map((k) => [k.name, k.prefix ? `${k.prefix}…` : "-", k.source, ((k.scopes as string[]) ?? []).join(","), k.createdAt ? iso(k.createdAt) : "-", state(k), rotation(k), describeMinuteUse((k.use as { minute?: MinuteUse } | undefined)?.minute), describeLimits(k)]);
      out(table(["name", "prefix", "source", "scopes", "created", "state", "rotated", "this minute", "limits"], rows));
      return;
    }
    case "revoke": {
      if (!name) fail("usage: switchyard keys revoke NAME", 2);
      const r = (await admin(values, dataDir, "DELETE", `/keys/${encodeURIComponent(name)}`)) as { note?: string };
      out(`revoked key ${name}`);
      if (r?.note) out(`note: ${visible(r.note)}`);
      return;
    }
    case "rotate": {
      if (!name) fail("usage: switchyard keys rotate NAME [--grace DURATION]", 2);
      const grace = values.grace === undefined ? undefined : String(values.grace);
      if (grace !== undefined && !/^(0|[1-9]\d*(s|m|h|d))$/.test(grace)) fail("--grace must be 0 or look like 30s, 10m, 24h or 7d", 2);
      const r = (await admin(values, dataDir, "POST", `/keys/${encodeURIComponent(name)}/rotate`, grace ? { grace } : {})) as { secret: string; previousUntil?: number; note?: string };
      const old = r.previousUntil ? `the old secret is accepted until ${new Date(r.previousUntil).toISOString()}` : "the old secret is refused from now on";
      if (r.note) out(`note: ${visible(r.note)}`);
      out(`rotated key ${name}: its limits and their use are kept, ${old}; the new secret is shown once:`);
      out(r.secret);
      return;
    }
    case "set": {
      if (!name) fail(`usage: ${SET_USAGE}`, 2);
      const { limitsChangeFromFlags, describeBudgetUse, dollars } = await import("./key-limits.ts");
      let change: Record<string, unknown> | undefined;
      try {
        change = limitsChangeFromFlags(values as never);
      } catch (e) {
        fail(e instanceof Error ? e.message : String(e), 2);
      }
      if (!change) fail(`keys set changes nothing without a limit, --tag or --scope (none clears a limit): ${SET_USAGE}`, 2);
      // --budget replaces the key's budgets as a whole list (try22 P11: lowering the 5h budget took the 1d
      // USD cap away without a word): the budgets before, to name each one the change removes
      const newBudgets = (change.limits as { budgets?: BudgetUse["budget"][] | null } | undefined)?.budgets;
      const before = newBudgets === undefined ? undefined : await budgetsOf(values, dataDir, name);
      const r = (await admin(values, dataDir, "PATCH", `/keys/${encodeURIComponent(name)}`, change, { what: "changing a key" })) as { key: Record<string, unknown>; note?: string };
      if (r.note) out(`note: ${visible(r.note)}`);
      out(`changed key ${name}: its secret and the use of its limits so far are kept; the next request is checked against them`);
      out(changedLimitsLine(r.key, "scopes" in change, describeBudgetUse, dollars));
      // last, where it is read
      if (before && newBudgets !== undefined) for (const line of removedBudgetLines(name, before, newBudgets ?? [], dollars)) out(line);
      return;
    }
    case "disable":
    case "enable": {
      if (!name) fail(`usage: switchyard keys ${sub} NAME`, 2);
      const r = (await admin(values, dataDir, "POST", `/keys/${encodeURIComponent(name)}/${sub}`)) as { note?: string };
      out(sub === "disable" ? `disabled key ${name}: its requests are refused (403 key_disabled) until switchyard keys enable ${name}; its limits and their use are kept` : `enabled key ${name}: its requests are served again`);
      if (r?.note) out(`note: ${visible(r.note)}`);
      return;
    }
    default:
      fail([
        ...(sub === undefined ? [] : [unknownSubcommand("keys", sub)]),
        "usage: switchyard keys create NAME [options] | keys list [--json] | keys set NAME [options] | keys revoke NAME | keys rotate NAME [--grace DURATION] | keys disable NAME | keys enable NAME",
      ], 2);
  }
}

/** The budgets of the active stored key `name` as `GET /admin/api/keys` lists them (none when it has none or no such key). */
async function budgetsOf(values: Record<string, unknown>, dataDir: string, name: string): Promise<BudgetUse["budget"][]> {
  const r = (await admin(values, dataDir, "GET", "/keys")) as { keys?: Array<Record<string, unknown>> };
  const key = r.keys?.find((k) => k.name === name && k.source === "db" && (k.revokedAt === undefined || k.revokedAt === null));
  const budgets = (key?.limits as { budgets?: unknown } | undefined)?.budgets;
  return Array.isArray(budgets) ? (budgets as BudgetUse["budget"][]) : [];
}

/**
 * `keys set NAME --budget`'s lines for the budgets it removed: one "removed the key's 1d $5.00 budget" per
 * budget of `before` whose window and unit no budget of `after` has, then the command that keeps them all
 * (after's and the removed ones' --budget flags), unless the change cleared every budget (`--budget none`).
 */
/**
 * `keys set`'s "limits: …" line: the changed key's limits, its tag, and its scopes when it has some or
 * the change set them (`scopesChanged`; "scopes none": no admin API any more). One line: what the store
 * holds (a tag with a line break, a model name) is escaped ({@link visible}).
 */
export function changedLimitsLine(key: Record<string, unknown>, scopesChanged: boolean, describeBudgetUse: (use: BudgetUse[]) => string, dollars: (usd: number) => string): string {
  const scopes = (key.scopes as string[] | undefined) ?? [];
  const scopesPart = scopes.length > 0 || scopesChanged ? `; scopes ${scopes.length ? scopes.join(",") : "none"}` : "";
  return visible(`limits: ${limitsCell(key, describeBudgetUse, dollars)}${key.tag !== undefined ? `; tag ${String(key.tag)}` : ""}${scopesPart}`);
}

function removedBudgetLines(name: string, before: readonly BudgetUse["budget"][], after: readonly BudgetUse["budget"][], dollars: (usd: number) => string): string[] {
  const unit = (b: BudgetUse["budget"]) => (b.usd !== undefined ? "usd" : "tokens");
  const removed = before.filter((b) => !after.some((a) => a.window === b.window && unit(a) === unit(b)));
  if (removed.length === 0) return [];
  const amount = (b: BudgetUse["budget"]) => (b.usd !== undefined ? dollars(b.usd) : `${(b.tokens ?? 0).toLocaleString("en-US")} tokens`);
  const lines = removed.map((b) => `removed the key's ${b.window} ${amount(b)} budget`);
  if (after.length > 0) {
    const flags = [...after, ...removed].map((b) => `--budget ${b.window}:${unit(b)}:${b.usd ?? b.tokens ?? 0}`).join(" ");
    lines.push(`(--budget replaces the key's budgets with those given; to keep every one: switchyard keys set ${name} ${flags})`);
  }
  return lines;
}

/**
 * A key's limits for `keys list`: "rpm 60, tpm 400,000, concurrency 4, models coding|glm/*, 1d $3.20 / $25.00 (13 %)…".
 * A revoked key has no use (the admin API leaves it out): its budgets read as limits alone ("1d budget
 * $25.00"), not as a window never started at 0 %. `describeBudgetUse` and `dollars` are
 * src/cli/key-limits.ts's (passed in: that module is loaded by the command).
 */
function limitsCell(k: Record<string, unknown>, describeBudgetUse: (use: BudgetUse[]) => string, dollars: (usd: number) => string): string {
  const l = k.limits as Record<string, unknown> | undefined;
  if (!l) return "-";
  const parts: string[] = [];
  for (const n of ["rpm", "tpm", "concurrency"]) if (typeof l[n] === "number") parts.push(`${n} ${(l[n] as number).toLocaleString("en-US")}`);
  if (Array.isArray(l.models)) parts.push(`models ${(l.models as string[]).join("|")}`);
  const use = k.use as { budgets?: BudgetUse[] } | undefined;
  const budgets = Array.isArray(l.budgets) ? (l.budgets as BudgetUse["budget"][]) : [];
  if (use?.budgets?.length) parts.push(describeBudgetUse(use.budgets));
  else if (k.revokedAt !== undefined && k.revokedAt !== null) {
    for (const b of budgets) parts.push(`${b.window} budget ${b.usd !== undefined ? dollars(b.usd) : `${(b.tokens ?? 0).toLocaleString("en-US")} tokens`}`);
  } else if (budgets.length) parts.push(describeBudgetUse(budgets.map((budget) => ({ budget, used: 0 }))));
  return parts.join(", ");
}
