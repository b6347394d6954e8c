/**
 * The account registry (SPEC A-1, 6.3): every account of every provider with its live state —
 * cooldowns per model, whole-account locks, removed account/model pairings, backoff levels, provider
 * circuits — held in memory, written through to the store before the next pick, and re-read from the
 * store every 10 s. Implements the pipeline's AccountPool and AccountHealth ports.
 */
import type { Classification } from "../../pipeline/classify.ts";
import type { AccountHealth } from "../../pipeline/attempt-loop.ts";
import type { AccountCandidate, AccountPool, PickHints } from "../../pipeline/pick.ts";
import type { Account, Clock, ProviderInfo } from "../../pipeline/ports.ts";
import { ALL_MODELS, type AccountState, type Store } from "../store/types.ts";

/** Backoff for "other 429 / overloaded / 529" (SPEC 6.3): 2 s doubling, ceiling 5 min. */
export const BACKOFF_BASE_MS = 2000;
export const BACKOFF_MAX_MS = 5 * 60_000;
/** SPEC 6.3: consecutive 5xx from one provider that open its circuit, and for how long. */
export const CIRCUIT_THRESHOLD = 10;
export const CIRCUIT_OPEN_MS = 5 * 60_000;

interface Cool {
  until: number;
  reason: string;
  level: number;
}

/** Live state of all accounts, keyed by account id. */
export class AccountRegistry implements AccountPool, AccountHealth {
  private accounts: Account[] = [];
  private providers = new Map<string, ProviderInfo>();
  /** `${accountId}\u0000${model}` → cooldown; model "*" = whole account. */
  private readonly cooldowns = new Map<string, Cool>();
  private readonly locks = new Map<string, { until: number | null; reason: string }>();
  private readonly removed = new Map<string, { until: number | null; reason: string }>();
  private readonly circuits = new Map<string, { openUntil: number; probing: boolean }>();
  private readonly serverErrors = new Map<string, number>();
  private readonly implicit = new Map<string, Account>();

  constructor(
    private readonly store: Store | undefined,
    private readonly clock: Clock,
  ) {}

  /** Replaces the account list (config accounts + stored accounts) and the provider table. */
  setAccounts(accounts: Account[], providers: Map<string, ProviderInfo>): void {
    this.accounts = [...accounts].sort((a, b) => a.priority - b.priority);
    this.providers = providers;
    this.implicit.clear();
  }

  /** Every account known, in priority order. */
  list(): Account[] {
    return this.accounts;
  }

  /** Loads persisted state (at start and on each periodic re-read). */
  loadState(state: AccountState): void {
    this.cooldowns.clear();
    for (const c of state.cooldowns) this.cooldowns.set(key(c.accountId, c.model), { until: c.until, reason: c.reason, level: c.level });
    this.locks.clear();
    for (const l of state.locks) this.locks.set(l.accountId, { until: l.until, reason: l.reason });
    this.removed.clear();
    for (const r of state.removedModels) this.removed.set(key(r.accountId, r.model), { until: r.until, reason: r.reason });
    this.circuits.clear();
    for (const c of state.circuits) this.circuits.set(c.providerId, { openUntil: c.openUntil, probing: false });
  }

  /** Why an account may not serve `model` now, with when that ends; undefined when eligible. */
  exclusion(account: Account, model: string): { reason: string; until?: number } | undefined {
    const now = this.clock.now();
    if (account.disabled) return { reason: "disabled" };
    const lock = this.locks.get(account.id);
    if (lock && (lock.until === null || lock.until > now)) {
      return { reason: `locked: ${lock.reason}`, until: lock.until ?? undefined };
    }
    const rm = this.removed.get(key(account.id, model));
    if (rm && (rm.until === null || rm.until > now)) return { reason: `model removed for this account: ${rm.reason}` };
    if (account.models && !account.models.includes(model)) return { reason: "model not advertised by this account" };
    for (const m of [model, ALL_MODELS]) {
      const c = this.cooldowns.get(key(account.id, m));
      if (c && c.until > now) {
        return { reason: `cooling down (${c.reason}) until ${new Date(c.until).toISOString()}`, until: c.until };
      }
    }
    return undefined;
  }

  // ---- AccountPool --------------------------------------------------------------------------

  candidates(providerId: string, model: string, _hints: PickHints): AccountCandidate[] {
    let accounts = this.accounts.filter((a) => a.providerId === providerId);
    if (accounts.length === 0) {
      const p = this.providers.get(providerId);
      if (p && (p.kind === "openai-compatible" || p.kind === "anthropic-compatible")) accounts = [this.keyless(p)];
    }
    return accounts.map((account) => {
      const ex = this.exclusion(account, model);
      return ex ? { account, eligible: false, reason: ex.reason, until: ex.until } : { account, eligible: true };
    });
  }

  /** Forgets consecutive-error counts and in-memory circuits (tests, admin "reset"). */
  resetCounters(): void {
    this.serverErrors.clear();
    this.circuits.clear();
  }

  /** Slots are not limited yet: every acquire succeeds at once. */
  async acquire(_account: Account, _signal: AbortSignal): Promise<(() => void) | undefined> {
    return () => {};
  }

  /** Conversation affinity is not implemented yet. */
  bind(_affinityKey: string, _account: Account): void {}

  /** A `*-compatible` provider without accounts (a local Ollama, LM Studio…) is called without a key. */
  private keyless(p: ProviderInfo): Account {
    let a = this.implicit.get(p.id);
    if (!a) {
      a = { id: `${p.id}-keyless`, providerId: p.id, priority: 0, credential: { type: "none" }, disabled: false, source: "config" };
      this.implicit.set(p.id, a);
    }
    return a;
  }

  // ---- AccountHealth ------------------------------------------------------------------------

  failure(account: Account, provider: ProviderInfo, model: string, c: Classification, opts: { retrying?: boolean } = {}): void {
    const now = this.clock.now();
    const effect = c.account;
    if (c.row === "server_error" || c.row === "transport") this.countServerError(provider.id, now);
    if (opts.retrying) return;
    switch (effect.type) {
      case "none":
        return;
      case "cooldown_until":
        this.setCooldown(account.id, effect.scope === "model" ? model : ALL_MODELS, effect.until, effect.reason, 0);
        return;
      case "cooldown_for":
        this.setCooldown(account.id, effect.scope === "model" ? model : ALL_MODELS, now + effect.ms, effect.reason, 0);
        return;
      case "backoff": {
        const prev = this.cooldowns.get(key(account.id, model));
        const level = prev ? Math.min(prev.level + 1, 20) : 0;
        const ms = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** level);
        this.setCooldown(account.id, model, now + ms, effect.reason, level);
        return;
      }
      case "lock":
        this.locks.set(account.id, { until: effect.until ?? null, reason: effect.reason });
        this.persist((st) => st.setLock({ accountId: account.id, until: effect.until ?? null, reason: effect.reason, since: now }));
        return;
      case "credential":
        // Without a refresh path (API keys), a rejected credential disables the account until changed.
        this.locks.set(account.id, { until: null, reason: effect.reason });
        this.persist((st) => st.setLock({ accountId: account.id, until: null, reason: effect.reason, since: now }));
        return;
      case "remove_pairing":
        this.removed.set(key(account.id, model), { until: null, reason: effect.reason });
        this.persist((st) => st.removeModel({ accountId: account.id, model, reason: effect.reason, until: null, since: now }));
        return;
    }
  }

  success(account: Account, provider: ProviderInfo, model: string, _latencyMs: number): void {
    this.serverErrors.set(provider.id, 0);
    const circuit = this.circuits.get(provider.id);
    if (circuit) {
      this.circuits.delete(provider.id);
      this.persist((st) => st.clearCircuit(provider.id));
    }
    for (const m of [model, ALL_MODELS]) {
      const k = key(account.id, m);
      if (this.cooldowns.has(k)) {
        this.cooldowns.delete(k);
        this.persist((st) => st.clearCooldown(account.id, m));
      }
    }
  }

  circuitOpen(providerId: string): boolean {
    const c = this.circuits.get(providerId);
    if (!c) return false;
    if (c.openUntil > this.clock.now()) return true;
    // Half-open: let exactly one probe through.
    if (c.probing) return true;
    c.probing = true;
    return false;
  }

  private countServerError(providerId: string, now: number): void {
    const n = (this.serverErrors.get(providerId) ?? 0) + 1;
    this.serverErrors.set(providerId, n);
    const c = this.circuits.get(providerId);
    if (n >= CIRCUIT_THRESHOLD || (c && c.probing)) {
      const openUntil = now + CIRCUIT_OPEN_MS;
      this.circuits.set(providerId, { openUntil, probing: false });
      this.serverErrors.set(providerId, 0);
      this.persist((st) => st.setCircuit({ providerId, openUntil, reason: `${CIRCUIT_THRESHOLD} consecutive 5xx`, since: now }));
    }
  }

  /**
   * Writes state through to the store. A store failure (locked past its busy timeout, closed) must not
   * fail the request: memory already holds the state; the next periodic re-read reconciles.
   */
  private persist(write: (store: Store) => unknown): void {
    if (!this.store) return;
    try {
      const r = write(this.store);
      if (r && typeof (r as Promise<unknown>).catch === "function") (r as Promise<unknown>).catch(() => {});
    } catch {
      // see above
    }
  }

  private setCooldown(accountId: string, model: string, until: number, reason: string, level: number): void {
    this.cooldowns.set(key(accountId, model), { until, reason, level });
    this.persist((st) => st.setCooldown({ accountId, model, until, reason, level, since: this.clock.now() }));
  }
}

function key(accountId: string, model: string): string {
  return accountId + "\u0000" + model;
}
