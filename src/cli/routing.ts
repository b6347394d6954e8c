/**
 * CLI commands for routing (SPEC 2.2): `switchyard route MODEL [--body FILE] [--format F] [--json]`
 * (the dry run) and `switchyard accounts status [--json]`. Both talk to the running instance through
 * its admin API (`POST /admin/api/dry-run`, `GET /admin/api/accounts`); main.ts supplies the call.
 */
import { readFileSync } from "node:fs";
import type { RoutePlan } from "../../pipeline/index.ts";
import type { AccountsStatus } from "../accounts/status.ts";
import { visible } from "./terminal.ts";
import { unknownSubcommand } from "./unknown-subcommand.ts";

/**
 * Calls the admin API of the running instance and answers its JSON; exits with one line when none runs
 * or it answers an error (main.ts). With `opts.notFound`, a 404 is answered as an {@link AdminNotFound}
 * instead, for commands that explain a missing object themselves.
 */
export type AdminCall = (method: string, path: string, body?: unknown, opts?: { notFound?: boolean }) => Promise<unknown>;

/** A 404 of the admin API, handed back (not exited on) when the call asked for it; `message` is the API's. */
export class AdminNotFound {
  constructor(readonly message: string) {}
}

/** Output helpers from main.ts. */
export interface CliIo {
  out: (line: string) => void;
  fail: (lines: string | readonly string[], code?: number) => never;
}

/** Options of `switchyard route`. */
export interface RouteOptions {
  /** The model name to route (overrides the body's `model`). */
  model?: string;
  /** A JSON file with the client request body; `-` reads stdin. */
  bodyFile?: string;
  /** Client format (openai-chat, openai-responses, anthropic-messages, gemini) or endpoint (chat, responses, messages). */
  format?: string;
  /** `Name: value` session headers, for affinity. */
  headers?: string[];
  json?: boolean;
}

/** `--format` values of `switchyard route`: a client format, or the endpoint that implies one. */
export const ROUTE_FORMATS = ["openai-chat", "openai-responses", "anthropic-messages", "gemini", "chat", "responses", "messages"] as const;

/**
 * The body routed when `--body` is not given: one user message "hi" in the client format (a Gemini
 * client's `contents`; the other formats' `messages` parse alike).
 */
export function defaultRouteRequest(format: string | undefined): Record<string, unknown> {
  return format === "gemini" ? { contents: [{ role: "user", parts: [{ text: "hi" }] }] } : { messages: [{ role: "user", content: "hi" }] };
}

/** `switchyard route MODEL [--body FILE]`: prints the dry run. */
export async function routeCommand(opts: RouteOptions, call: AdminCall, io: CliIo): Promise<void> {
  if (!opts.model && !opts.bodyFile) io.fail('usage: switchyard route MODEL [--body FILE] [--format FORMAT] [--header "Name: value"]... [--json]', 2);
  if (opts.format !== undefined && !(ROUTE_FORMATS as readonly string[]).includes(opts.format)) {
    io.fail(`--format is one of openai-chat, openai-responses, anthropic-messages, gemini (or the endpoint: chat, responses, messages), not ${JSON.stringify(opts.format)}`, 2);
  }
  let request: Record<string, unknown> = defaultRouteRequest(opts.format);
  if (opts.bodyFile) {
    let text: string;
    try {
      text = opts.bodyFile === "-" ? await Bun.stdin.text() : readFileSync(opts.bodyFile, "utf8");
    } catch {
      io.fail(`cannot read ${opts.bodyFile}`);
    }
    try {
      const parsed = JSON.parse(text!) as unknown;
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
      request = parsed as Record<string, unknown>;
    } catch {
      io.fail(`${opts.bodyFile} is not a JSON object`);
    }
  }
  const body: Record<string, unknown> = { request };
  if (opts.model) body.model = opts.model;
  if (opts.format) {
    if (opts.format === "chat" || opts.format === "responses" || opts.format === "messages") body.endpoint = opts.format;
    else body.format = opts.format;
  }
  if (opts.headers?.length) {
    const h: Record<string, string> = {};
    for (const line of opts.headers) {
      const i = line.indexOf(":");
      if (i <= 0) io.fail(`--header must look like "Name: value"`, 2);
      h[line.slice(0, i).trim()] = line.slice(i + 1).trim();
    }
    body.headers = h;
  }
  const plan = (await call("POST", "/dry-run", body)) as RoutePlan & { accountStrategy?: string };
  io.out(opts.json ? JSON.stringify(plan, null, 2) : formatRoutePlan(plan));
  // A request for this model would fail without trying anything: exit 1, as a script checking a route expects.
  if (plan.attempts.length === 0) {
    io.fail(`no target can serve ${plan.requestedModel} (attempt order: none)${plan.nearName ? `; did you mean "${plan.nearName}"?` : ""}`, 1);
  }
}

/** How the dry run understood the name: `combo coding`, `alias fast → combo coding`, `guess (… did you mean "coding"?)`. */
export function routeVia(plan: Pick<RoutePlan, "via" | "alias" | "combo" | "nearName" | "requestedModel">): string {
  if (plan.via === "combo") return `combo ${plan.combo}`;
  if (plan.via === "alias") return `alias ${plan.alias}${plan.combo ? ` → combo ${plan.combo}` : ""}`;
  if (plan.via === "guess" && plan.nearName) return `guess ("${plan.requestedModel}" is not an alias or combo; did you mean "${plan.nearName}"?)`;
  return plan.via;
}

const iso = (ms: number | undefined) => (ms === undefined ? "" : new Date(ms).toISOString());

/** Human-readable dry run, one line each (a client's or upstream's control characters escaped, {@link visible}). */
export function formatRoutePlan(plan: RoutePlan & { accountStrategy?: string }): string {
  const lines: string[] = [];
  const via = routeVia(plan);
  lines.push(`${plan.requestedModel} (${plan.clientFormat}) via ${via}; account strategy ${plan.accountStrategy ?? "?"}; affinity ${plan.affinity}`);
  lines.push(`candidates: ${plan.candidates.join(", ") || "none"}`);
  if (plan.decisions.length > 0) {
    lines.push("", "target decisions:");
    for (const d of plan.decisions) lines.push(`  ${d.verdict.padEnd(5)} ${d.subject}: ${d.reason}`);
  }
  lines.push("", "order:");
  if (plan.targets.length === 0) lines.push("  (no target left)");
  plan.targets.forEach((t, i) => {
    lines.push(`  ${i + 1}. ${t.target}  ${t.verdict}${t.reason ? `: ${t.reason}` : ""}`);
    for (const a of t.accounts) lines.push(`       ${a.verdict.padEnd(3)} ${a.accountId}: ${a.reason}${a.until && !a.reason.includes(iso(a.until)) ? ` (until ${iso(a.until)})` : ""}`);
  });
  lines.push("", `attempt order: ${plan.attempts.filter((a) => !a.notReached).map((a) => `${a.target} @ ${a.accountId}`).join(" → ") || "none"}`);
  const unreached = plan.attempts.filter((a) => a.notReached);
  if (unreached.length > 0) lines.push(`${unreached[0]!.notReached}: ${unreached.map((a) => `${a.target} @ ${a.accountId}`).join(", ")}`);
  const atRisk = plan.attempts.filter((a) => a.notReachedIf);
  if (atRisk.length > 0) lines.push(`${atRisk[0]!.notReachedIf}: ${atRisk.map((a) => `${a.target} @ ${a.accountId}`).join(", ")}`);
  return lines.map(visible).join("\n");
}

/**
 * `switchyard accounts status [--json]`; `switchyard accounts remove ID`: removes an account stored
 * by `login` or `import` (DELETE /admin/api/accounts/{id}; the admin API's error, e.g. for an account of
 * the config file, is what `call` fails with); `switchyard accounts restore ID [MODEL]`: restores the
 * account's removed account/model pairings now (POST /admin/api/accounts/{id}/restore; exit 1 for an
 * unknown account, through `call`). A missing ID is a usage error (exit 2).
 */
export async function accountsCommand(sub: string | undefined, opts: { json?: boolean; id?: string; model?: string }, call: AdminCall, io: CliIo): Promise<void> {
  if (sub === "restore") {
    if (!opts.id) io.fail("usage: switchyard accounts restore ID [MODEL]", 2);
    const r = (await call("POST", `/accounts/${encodeURIComponent(opts.id!)}/restore`, opts.model ? { model: opts.model } : {})) as { restored: string[] };
    if (r.restored.length > 0) return io.out(`restored ${visible(r.restored.join(", "))} on account ${opts.id}: tried again from the next request on`);
    return io.out(`account ${opts.id} had no removed ${opts.model ? `pairing for ${opts.model}` : "model"}; nothing to restore`);
  }
  if (sub === "unlock") {
    if (!opts.id) io.fail("usage: switchyard accounts unlock ID", 2);
    const r = (await call("POST", `/accounts/${encodeURIComponent(opts.id!)}/unlock`)) as { unlocked: { reason: string } | null };
    if (r.unlocked) return io.out(`unlocked account ${opts.id} (it was locked: ${visible(r.unlocked.reason)}): requests use it again from the next one on`);
    return io.out(`account ${opts.id} was not locked; nothing to unlock`);
  }
  if (sub === "close-circuit") {
    if (!opts.id) io.fail("usage: switchyard accounts close-circuit PROVIDER", 2);
    const r = (await call("POST", `/providers/${encodeURIComponent(opts.id!)}/close-circuit`)) as { closed: { state: string; reason: string } | null };
    if (r.closed) return io.out(`closed the circuit of provider ${opts.id} (it was ${visible(r.closed.state)}: ${visible(r.closed.reason)}): requests go to it again from the next one on`);
    return io.out(`the circuit of provider ${opts.id} was not open; nothing to close`);
  }
  if (sub === "remove") {
    if (!opts.id) io.fail("usage: switchyard accounts remove ID", 2);
    await call("DELETE", `/accounts/${encodeURIComponent(opts.id!)}`);
    return io.out(`removed account ${opts.id}`);
  }
  if (sub !== "status") {
    const usage = "usage: switchyard accounts status [--json] | accounts remove ID | accounts restore ID [MODEL] | accounts unlock ID | accounts close-circuit PROVIDER";
    io.fail(sub === undefined ? usage : [unknownSubcommand("accounts", sub), usage], 2);
  }
  const status = (await call("GET", "/accounts")) as AccountsStatus;
  if (opts.json) return io.out(JSON.stringify(status, null, 2));
  io.out(formatAccountsStatus(status));
}

/** The last line of {@link formatAccountsStatus}: what the figures of each account line cover. */
export const ACCOUNTS_STATUS_LEGEND =
  "success and latency are this instance's own requests since it started (success: the share of the attempts that succeeded, recent ones weighing most, an attempt half after 5 min; it does not change while an account is idle); cooldowns, locks, quarantines and circuits are every instance's on a shared store";

/**
 * " (0 of 2 attempts)": the attempts counted in an account's success share (admin API `health`),
 * succeeded of all; empty when they are not numbers (an older running instance's answer has neither).
 */
function successBasis(h: { succeeded?: unknown; failed?: unknown }): string {
  if (typeof h.succeeded !== "number" || typeof h.failed !== "number") return "";
  const n = h.succeeded + h.failed;
  return ` (${h.succeeded} of ${n} attempt${n === 1 ? "" : "s"})`;
}

/**
 * The provider circuit in an account's line: nothing when closed; open "until" its end; half-open
 * "since" that end, when the next request is the probe (a half-open circuit's `openUntil` is past:
 * "until" a past time read as stale state, newuser13's tryout J4).
 */
function circuitWords(c: AccountsStatus["accounts"][number]["circuit"]): string {
  if (c.state === "closed") return "";
  if (c.state === "open") return `; circuit open${c.openUntil ? ` until ${iso(c.openUntil)}` : ""}`;
  return `; circuit half-open${c.openUntil ? ` since ${iso(c.openUntil)}` : ""}: the next request to the provider probes it`;
}

/**
 * Why a built-in provider without an account is listed (`providersWithoutAccounts[].builtin`): the
 * aliases and combos that name it, and the requests this instance refused for want of its account.
 */
export function builtinUse(b: NonNullable<AccountsStatus["providersWithoutAccounts"][number]["builtin"]>): string {
  const parts = [b.routes.length > 0 ? `built-in provider named by ${b.routes.join(", ")}` : "built-in provider"];
  if (b.requests > 0) {
    const last = b.lastAt === undefined ? "" : `, the last at ${iso(b.lastAt)}${b.lastStatus === 404 ? " (404: a bare model name taken for this provider's)" : b.lastStatus ? ` (${b.lastStatus})` : ""}`;
    parts.push(`${b.requests} ${b.requests === 1 ? "request" : "requests"} refused for want of its account since this instance started${last}`);
  }
  return parts.join("; ");
}

/** Human-readable account status, one line each (an upstream's control characters in a reason escaped, {@link visible}). */
export function formatAccountsStatus(s: AccountsStatus): string {
  const lines: string[] = [`account strategy: ${s.strategy}; ${s.accounts.length} account(s)`];
  if (s.accounts.length === 0) {
    lines.push("no accounts yet: add API keys under accounts: in the config file, log in with switchyard login claude-code|codex, or adopt a CLI's login with switchyard import claude-code|codex");
  }
  for (const a of s.accounts) {
    const slots = `slots ${a.slots.inUse}/${a.slots.limit ?? "∞"}${a.slots.waiting ? ` (+${a.slots.waiting} waiting)` : ""}`;
    const circuit = circuitWords(a.circuit);
    lines.push("", `${a.id} (${a.providerId}${a.providerKind ? `, ${a.providerKind}` : ""}; ${a.source === "implicit" ? "implicit: the provider has no account and is called without a key" : a.credential}; priority ${a.priority}): ${a.eligible ? "eligible" : "NOT eligible"}; ${slots}; success ${a.health.seen === false ? "– (no request yet)" : `${Math.round(a.health.successRate * 100)} %${successBasis(a.health)}`}${a.health.latencyMs !== undefined ? `, latency ${a.health.latencyMs} ms` : ""}; bindings ${a.bindings}${circuit}`);
    for (const r of a.reasons) lines.push(`  - ${r}`);
    // A cooldown is for one model (SPEC 6.2 loop 2) unless it is about the whole account ("*").
    for (const c of a.cooldowns) lines.push(`  cooldown ${c.model === "*" ? "(every model)" : c.model}: ${c.reason} until ${iso(c.until)}`);
    for (const r of a.removedModels) lines.push(`  removed ${r.model}: ${r.reason}${r.until ? ` until ${iso(r.until)}` : ""}`);
    for (const q of a.quota) {
      const left = q.remainingPercent !== undefined ? `${q.remainingPercent} % left` : q.remaining !== undefined ? `${q.remaining} left` : "?";
      lines.push(`  quota ${q.window}${q.model === "*" ? "" : ` (${q.model})`}: ${left}${q.resetAt ? `, resets ${iso(q.resetAt)}` : ""}`);
    }
    // A model out for the account's own reason (disabled, its provider's circuit, …) is said once, above.
    const withAccount = a.models.filter((m) => !m.eligible && m.reason !== undefined && a.reasons.includes(m.reason));
    if (withAccount.length > 0) lines.push(`  ${withAccount.length === 1 ? "model" : "models"} ${withAccount.map((m) => m.model).join(", ")}: out for the account's reason above`);
    for (const m of a.models) if (!withAccount.includes(m)) lines.push(`  model ${m.model}: ${m.eligible ? "eligible" : `out: ${m.reason}`}`);
  }
  // A provider configured without an account, of a kind that needs one: each of its requests is a 503 (dash16's tryout).
  for (const p of s.providersWithoutAccounts ?? []) {
    lines.push("", `provider ${p.id} (${p.kind}): no account, so its requests get 503 no_account: ${p.error}`);
    if (p.builtin) lines.push(`  ${builtinUse(p.builtin)}`);
  }
  // Cooldowns, locks and circuits are shared with other instances on one store; success and latency
  // are not (the dashboard's Accounts page says so too; newuser12a's tryout, G9).
  if (s.accounts.length > 0) lines.push("", ACCOUNTS_STATUS_LEGEND);
  return lines.map(visible).join("\n");
}
