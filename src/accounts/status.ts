/**
 * `switchyard accounts status` / `GET /admin/api/accounts` (SPEC 2.2, A-1): live eligibility per
 * account and model with reasons and end times, locks, cooldowns, removed pairings, quota windows,
 * concurrency slots in use, conversation bindings and the provider's circuit. Read-only; never
 * credentials (only the credential type). The implicit keyless account of each `*-compatible`
 * provider without accounts is listed after the others (`source: "implicit"`), since requests go out
 * with it. A provider of any other kind set in the config file (or the database) without an account
 * is listed apart, with the 503 its requests get (`providersWithoutAccounts`); so is a built-in one
 * (`anthropic`, `openai`, `gemini`, `cc`, `cx`, which exist without an entry) once something sends
 * requests to it: an alias or combo names it, or this instance answered a request for it for want of an
 * account (until 2026-12-05 the built-in ones were never listed: a Gemini CLI user without
 * GEMINI_API_KEY on the built-in default had every request refused and no page said why, review17 R5).
 */
import { describeExclusion, noAccountMessage, resolveModel, type RoutingTable } from "../../pipeline/index.ts";
import { ALL_MODELS } from "../store/types.ts";
import type { Account } from "../../pipeline/ports.ts";
import type { LoginFacts } from "./credentials.ts";
import { quarantineAdvice, unlockAdvice } from "./lock-advice.ts";
import { shownQuotaWindow, type ShownQuotaWindow } from "./quota.ts";
import type { AccountRegistry } from "./registry.ts";
import type { AccountStrategy } from "./selection.ts";
import { SUCCESS_HALF_LIFE_MS } from "./stats.ts";

/** Eligibility of one account for one model. Times are ms since the epoch. */
export interface ModelStatus {
  model: string;
  eligible: boolean;
  reason?: string;
  /** When the exclusion ends; for a removed pairing, when the model is tried again (absent: until restored or changed). */
  until?: number;
}

/** One account's live state. Times are ms since the epoch. */
export interface AccountStatus {
  id: string;
  providerId: string;
  providerKind?: string;
  /**
   * Where the account comes from: the config file, the database (`switchyard login` / `import`), or
   * `implicit`: the `<provider>-keyless` account a `*-compatible` provider without accounts is called
   * with (no credential; nothing to disable, remove or edit: give the provider an account instead).
   */
  source: "config" | "db" | "implicit";
  credential: "api_key" | "oauth" | "none";
  priority: number;
  disabled: boolean;
  /** Eligible for at least its account-wide checks (disabled, quarantine, lock, account cooldown, its provider's circuit). */
  eligible: boolean;
  /** Why not, when not. */
  reasons: string[];
  /** The whole-account lock (SPEC 6.3): why, until when (null: until changed) and what an operator does about it (lock-advice.ts). */
  lock?: { reason: string; until: number | null; advice: string };
  /** The credential's quarantine (SPEC 6.3, P-7): why, and the way back (a new login or import, lock-advice.ts). */
  quarantine?: { reason: string; advice: string };
  cooldowns: Array<{ model: string; reason: string; until: number; level: number }>;
  removedModels: Array<{ model: string; reason: string; until: number | null }>;
  /** Live quota windows as shown ({@link shownQuotaWindow}: no key hash). */
  quota: ShownQuotaWindow[];
  slots: { inUse: number; limit: number | null; waiting: number };
  /** Live conversation bindings to this account (SPEC A-2). */
  bindings: number;
  /**
   * Success and latency over this instance's attempts with the account since it started (in memory,
   * stats.ts `shown`): `successRate` (0–1) is the share of them that succeeded, each attempt's weight
   * halving every `halfLifeMs` (recent ones weigh most; idle time does not change it), `succeeded` and
   * `failed` count them unweighted (a failure is an attempt that was the account's fault, not a refused
   * body); the latency EWMA (ms to the first byte) gives the newest reply 30 %. `seen` is false while no
   * attempt was recorded: `successRate` is then 1, not a measure. The scored strategy reads the same
   * weighted counts with one virtual success added (selection.ts), so a fresh account ranks as sound.
   */
  health: { successRate: number; succeeded: number; failed: number; latencyMs?: number; halfLifeMs: number; seen: boolean };
  circuit: { state: "closed" | "open" | "half-open"; openUntil?: number; consecutive5xx: number };
  /** Per-model eligibility: advertised/configured models and every model with state. */
  models: ModelStatus[];
  /** A subscription login's e-mail, plan, token expiry and refresh state (never a token); absent for other credentials. */
  login?: LoginFacts;
}

/**
 * A provider set in the config file or the database that has no account and needs one (every kind but
 * the `*-compatible` ones, which are called keyless): each request routed to it is answered 503
 * `no_account` with `error` as its message. Nothing secret: the provider's id and kind only.
 */
export interface ProviderWithoutAccount {
  id: string;
  kind: string;
  /** The message of the 503 its requests get: "No account is configured for provider P: how to add one." */
  error: string;
  /**
   * Only for a built-in provider (listed only when something sends requests to it; one set in the config
   * file or the database is always listed): what does. `routes`: the aliases and combos that resolve to
   * it (`alias fast`, `combo always-on`; empty when none). `requests`: how many requests this instance
   * answered for want of its account since it started (in memory, this instance's only), the last one's
   * time (`lastAt`, ms since the epoch) and status (`lastStatus`: 503 `no_account` for a `gemini/…` name,
   * an alias or a combo; 404 for a bare model name guessed onto it, e.g. Gemini CLI's `gemini-2.5-pro`).
   */
  builtin?: { routes: string[]; requests: number; lastAt?: number; lastStatus?: number };
}

/** The whole status document. */
export interface AccountsStatus {
  now: number;
  strategy: AccountStrategy;
  accounts: AccountStatus[];
  /**
   * Providers without an account whose requests therefore fail (503 `no_account`), in provider-table
   * order: every one set in the config file or the database, and a built-in one nobody configured only
   * when an alias or combo names it or a request went to it ({@link ProviderWithoutAccount.builtin});
   * one unused is left out (not a mistake).
   */
  providersWithoutAccounts: ProviderWithoutAccount[];
}

/**
 * Builds the status document from the registry's live state. O(accounts × models). `logins` tells a
 * subscription account's login facts (the credential manager's {@link LoginFacts}). `routing`: the
 * routing table in force, whose aliases and combos say which built-in providers without accounts are
 * named (without it, only the requests seen count).
 */
export function accountsStatus(
  registry: AccountRegistry,
  strategy: AccountStrategy,
  logins?: (a: Account) => LoginFacts | undefined,
  routing?: RoutingTable,
): AccountsStatus {
  const snap = registry.snapshot();
  const now = snap.now;
  const bindings = registry.bindings.countByAccount(now);
  const implicit = new Set(registry.implicitAccounts());
  const accounts = [...snap.accounts, ...implicit].map((a): AccountStatus => {
    const provider = snap.providers.get(a.providerId);
    const cooldowns = snap.cooldowns.filter((c) => c.accountId === a.id).map(({ model, reason, until, level }) => ({ model, reason, until, level }));
    const removedModels = snap.removed.filter((r) => r.accountId === a.id).map(({ model, reason, until }) => ({ model, reason, until }));
    const lockRow = snap.locks.find((l) => l.accountId === a.id);
    const quota = registry.quota.windows(a.id, now).map(shownQuotaWindow); // never the store's keyHash
    const reasons: string[] = [];
    if (a.disabled) reasons.push("disabled");
    const quarantinedFor = snap.quarantined(a);
    const quarantine = quarantinedFor === undefined ? undefined : { reason: quarantinedFor, advice: quarantineAdvice(a.id, provider?.kind) };
    if (quarantine) reasons.push(`credential quarantined (${quarantine.reason}) until replaced: ${quarantine.advice}`);
    const advice = lockRow && unlockAdvice(a.id, a.credential.type, lockRow.until);
    if (lockRow) reasons.push(`locked: ${lockRow.reason}${lockRow.until ? ` until ${new Date(lockRow.until).toISOString()}` : " until changed"}: ${advice}`);
    const whole = cooldowns.find((c) => c.model === ALL_MODELS);
    if (whole) reasons.push(`cooling down (${whole.reason}) until ${new Date(whole.until).toISOString()}`);

    const names = new Set<string>(a.models ?? Object.keys(provider?.models ?? {}));
    for (const c of cooldowns) if (c.model !== ALL_MODELS) names.add(c.model);
    for (const r of removedModels) names.add(r.model);
    for (const q of quota) if (q.model !== ALL_MODELS) names.add(q.model);
    // A provider whose circuit is open is not called (SPEC 6.3): none of its accounts or models is eligible.
    const circuit = registry.circuitState(a.providerId);
    const circuitOpen = circuit.state === "open" ? `provider ${a.providerId} circuit open (consecutive upstream 5xx) until ${new Date(circuit.openUntil!).toISOString()}` : undefined;
    if (circuitOpen) reasons.push(circuitOpen);
    const models = [...names].sort().map((model): ModelStatus => {
      const ex = registry.exclusion(a, model);
      if (!ex) return circuitOpen ? { model, eligible: false, reason: circuitOpen, until: circuit.openUntil } : { model, eligible: true };
      // A removed pairing's exclusion carries no end (routing must not wait for it); its row does, the
      // removal's own: when the model is tried again (null: until restored).
      const until = ex.cause === "removed" ? (removedModels.find((r) => r.model === model)?.until ?? undefined) : ex.until;
      return { model, eligible: false, reason: describeExclusion(ex), until };
    });
    const limit = registry.slotLimit(a);
    const login = implicit.has(a) ? undefined : logins?.(a);
    return {
      id: a.id,
      providerId: a.providerId,
      providerKind: provider?.kind,
      source: implicit.has(a) ? "implicit" : a.source,
      credential: a.credential.type,
      priority: a.priority,
      disabled: a.disabled,
      eligible: reasons.length === 0,
      reasons,
      lock: lockRow ? { reason: lockRow.reason, until: lockRow.until, advice: advice! } : undefined,
      quarantine,
      cooldowns,
      removedModels,
      quota,
      slots: { inUse: registry.slots.inUse(a.id), limit: limit ?? null, waiting: registry.slots.waiting(a.id) },
      bindings: bindings.get(a.id) ?? 0,
      health: healthOf(registry.stats.shown(a.id), registry.stats.latency(a.id)),
      circuit,
      models,
      ...(login ? { login } : {}),
    };
  });
  const named = routing ? routesByProvider(routing) : new Map<string, string[]>();
  const providersWithoutAccounts: ProviderWithoutAccount[] = [];
  for (const p of snap.providers.values()) {
    if (registry.hasAccounts(p.id)) continue;
    const entry: ProviderWithoutAccount = { id: p.id, kind: p.kind, error: noAccountMessage(p) };
    if (p.source === "builtin") {
      const routes = named.get(p.id) ?? [];
      const seen = registry.unservedRequests(p.id);
      if (routes.length === 0 && !seen) continue;
      entry.builtin = seen ? { routes, requests: seen.requests, lastAt: seen.lastAt, lastStatus: seen.lastStatus } : { routes, requests: 0 };
    }
    providersWithoutAccounts.push(entry);
  }
  return { now, strategy, accounts, providersWithoutAccounts };
}

/**
 * Provider id → the aliases and combos of `table` that resolve to one of its models (`alias NAME`,
 * `combo NAME`, in table order; a combo's nested combos and aliases included, as a request to it would
 * try them). A name that does not resolve is left out (check-config reports it). O(aliases + combos × targets).
 */
function routesByProvider(table: RoutingTable): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (label: string, name: string) => {
    const r = resolveModel(name, table);
    if ("kind" in r) return;
    for (const id of new Set(r.targets.map((t) => t.provider.id))) {
      const list = out.get(id);
      if (list) list.push(label);
      else out.set(id, [label]);
    }
  };
  for (const name of table.aliases.keys()) add(`alias ${name}`, name);
  for (const name of table.combos.keys()) add(`combo ${name}`, name);
  return out;
}

const roundOpt = (x: number | undefined) => (x === undefined ? undefined : Math.round(x));

/** An account's {@link AccountStatus.health} from stats.ts's `shown` figures and latency EWMA (ms). */
function healthOf(shown: { rate: number; succeeded: number; failed: number } | undefined, latencyMs: number | undefined): AccountStatus["health"] {
  return {
    successRate: shown ? Math.round(shown.rate * 1000) / 1000 : 1,
    succeeded: shown?.succeeded ?? 0,
    failed: shown?.failed ?? 0,
    latencyMs: roundOpt(latencyMs),
    halfLifeMs: SUCCESS_HALF_LIFE_MS,
    seen: shown !== undefined,
  };
}
