/**
 * The account registry (SPEC A-1, 6.3): every account of every provider with its live state —
 * cooldowns per model, whole-account locks, removed account/model pairings, backoff levels, provider
 * circuits — held in memory, written through to the store before the next pick, and re-read from the
 * store every 10 s. Implements the pipeline's AccountPool and AccountHealth ports.
 */
import {
  QUOTA_LOCK_REASON,
  RATE_LIMIT_REASONS,
  type AccountCandidate,
  type AccountHealth,
  type AccountPool,
  type CacheState,
  type Classification,
  type Exclusion,
  type PickHints,
} from "../../pipeline/index.ts";
import type { Account, Clock, ProviderInfo } from "../../pipeline/ports.ts";
import type { AccountStateEvent } from "../events/bus.ts";
import { ALL_MODELS, type AccountState, type Binding, type QuotaWindow, type Store } from "../store/types.ts";
import { SHARED_ANSWER_MS } from "../store/shared.ts";
import { bindingKey, Bindings } from "./bindings.ts";
import { circuitRow, type ClosedCircuit, ProviderCircuits } from "./circuits.ts";
import { EndTimer } from "./end-timer.ts";
import { Cooldowns } from "./hold-cooldowns.ts";
import { UnservedCounts, type UnservedRequests } from "./count-unserved-requests.ts";
import { ProviderAccounts } from "./provider-accounts.ts";
import { Quarantines } from "./quarantines.ts";
import { clearedElsewhere, LiftsHere, type HeldCooldown, type HeldLock } from "./cleared-elsewhere.ts";
import { AccountLocks } from "./hold-locks.ts";
import { RetryWrites } from "./retry-writes.ts";
import { rejectedStateWriteLine, SharedStateWrites, writeTryingAgain } from "./shared-state-writes.ts";
import { quarantineAdvice, type HeldLockState } from "./lock-advice.ts";
import { QUOTA_EXCLUDE_FRACTION, QuotaBook } from "./quota.ts";
import { QuotaGenerations } from "./quota-generations.ts";
import { RemovedPairings } from "./removed-pairings.ts";
import { RequestRanking } from "./rank-for-request.ts";
import type { RegistryOptions } from "./registry-options.ts";
import { SLOT_WAIT_MS, Slots } from "./slots.ts";
import { takeSlot } from "./take-slot.ts";
import { AccountStats, RATE_LIMIT_ROWS } from "./stats.ts";

export type { RegistryOptions } from "./registry-options.ts";
export { BACKOFF_BASE_MS, BACKOFF_MAX_MS } from "./hold-cooldowns.ts";
export { SHARED_SLOT_POLL_MS } from "./shared-slot.ts";
export { CIRCUIT_OPEN_MS, CIRCUIT_THRESHOLD } from "./circuits.ts";
export { bindingKey } from "./bindings.ts";
export type { UnservedRequests } from "./count-unserved-requests.ts";

/** Live state of all accounts, keyed by account id. */
export class AccountRegistry implements AccountPool, AccountHealth {
  /** Who serves what: the accounts, the provider table, each provider's accounts (provider-accounts.ts). */
  private readonly index = new ProviderAccounts();
  /**
   * Lock, cooldown, removed-pairing and circuit writes the embedded store refused (a full disk), written
   * again later (retry-writes.ts); on a shared store those the database rejects, tried again when
   * transient, else said and counted (shared-state-writes.ts).
   */
  private readonly unwritten: RetryWrites | SharedStateWrites;
  /** State writes rejected outside the registry and counted here ({@link countLostStateWrite}). */
  private lostElsewhere = 0;
  /** Cooldowns per account and model (SPEC 6.3), see hold-cooldowns.ts. */
  private readonly cooldowns = new Cooldowns({
    now: () => this.clock.now(),
    persist: (write, key, apply) => this.persistRow(write, key, apply),
    arm: (until) => this.armExpiry(until),
    publish: (account, provider, change, extra) => this.publish(account, provider, change, extra),
    providerOf: (accountId) => this.providerOf(accountId),
    listening: () => this.opts.bus?.active === true,
  });
  /** Whole-account locks (SPEC 6.3), see hold-locks.ts. */
  private readonly locks = new AccountLocks({
    now: () => this.clock.now(),
    persist: (write, key, apply) => this.persistRow(write, key, apply),
    arm: (until) => this.armExpiry(until),
    publish: (account, provider, change, extra) => this.publish(account, provider, change, extra),
    providerOf: (accountId) => this.providerOf(accountId),
    accounts: () => this.index.accounts,
    fingerprint: (a) => this.quarantines.fingerprint(a),
    episodeEnded: (accountId) => this.opts.episodeEnded?.(accountId),
  });
  /** Cooldowns and locks being cleared through this instance's admin API, see cleared-elsewhere.ts. */
  private readonly lifts = new LiftsHere();
  /** Removed account/model pairings (SPEC 6.3), see removed-pairings.ts. */
  private readonly removed = new RemovedPairings();
  /** Provider circuits (SPEC 6.3), see circuits.ts. */
  private readonly circuits = new ProviderCircuits({
    now: () => this.clock.now(),
    persist: (write, key) => this.persistRow(write, key),
    arm: (until) => this.armExpiry(until),
    publish: (providerId, change, extra) => this.publishProvider(providerId, change, extra),
    listening: () => this.opts.bus?.active === true,
  });

  /** Routing state (SPEC A-2…A-4, P-5): quota windows, bindings, health stats, slots. */
  readonly quota = new QuotaBook();
  /** Which credential each listed account object carried, for the replies of calls sent before a re-key (quota-generations.ts). */
  private readonly quotaGenerations = new QuotaGenerations();
  readonly bindings = new Bindings();
  readonly stats = new AccountStats();
  readonly slots = new Slots();
  /** Quarantined credentials (SPEC 6.3), see quarantines.ts. */
  private readonly quarantines = new Quarantines();
  /** What lifts an account's quarantine through this instance while {@link lift} runs, by account id. */
  private readonly liftingHere = new Map<string, string>();
  /** Requests answered for want of any account, per provider id, since start ({@link noAccount}). */
  private readonly unserved = new UnservedCounts();
  /** Each request's order of a provider's accounts, see rank-for-request.ts. */
  private readonly ranking: RequestRanking;
  /** The timer that publishes state ends (cooldown_end, unlock, model_restored, circuit_half_open), see end-timer.ts. */
  private readonly ends: EndTimer;

  constructor(
    private readonly store: Store | undefined,
    private readonly clock: Clock,
    private readonly opts: RegistryOptions = {},
  ) {
    const log = opts.log ?? ((line: string) => console.error(line));
    this.unwritten = store?.shared ? new SharedStateWrites((r) => log(rejectedStateWriteLine(r, clock.now()))) : new RetryWrites();
    this.ends = new EndTimer(() => clock.now(), (from, now) => this.expire(from, now), opts.bus !== undefined);
    this.ranking = new RequestRanking({ clock, opts, stats: this.stats, quota: this.quota, bindings: this.bindings });
  }

  /** Replaces the account list (config accounts + stored accounts) and the provider table. */
  setAccounts(accounts: Account[], providers: Map<string, ProviderInfo>): void {
    // A provider whose upstream changed (a configuration re-read) starts with a closed circuit (circuits.ts)
    // and with its accounts' removed pairings and cooldowns lifted (a wrong base_url's 404s set them: try19 D7).
    const changed = this.index.providers !== providers ? this.circuits.providersChanged(this.index.providers, providers) : undefined;
    // The per-minute token limits of an account removed are not its (quota.ts); an account given another
    // API key loses every quota window too, in the store as well: a new key is a new quota.
    const keyOf = (id: string) => {
      const a = this.index.find(id)?.account;
      return a === undefined ? undefined : a.credential.type === "api_key" ? this.quarantines.fingerprint(a) : "";
    };
    const before = new Map(this.index.accounts.map((a) => [a.id, keyOf(a.id)] as const));
    const limited = new Map<string, string | undefined>();
    for (const id of this.quota.limitedAccounts()) limited.set(id, before.has(id) ? before.get(id) : keyOf(id));
    this.index.set(accounts, providers);
    for (const [id, key] of before) if (key !== undefined && keyOf(id) !== undefined && keyOf(id) !== key) this.forgetQuotas(id);
    this.quotaGenerations.tag(accounts); // after the re-keys: these objects carry the new credentials
    if (limited.size > 0) this.quota.forgetLimits((id) => !limited.has(id) || (keyOf(id) !== undefined && keyOf(id) === limited.get(id)));
    this.locks.dropReplaced();
    if (changed?.size) this.liftForNewUpstream(changed);
  }

  /**
   * Lifts the removed pairings and every cooldown (not the locks: the key's) of the accounts of `providerIds`
   * (base_url or kind changed: what the old upstream answered, e.g. a wrong URL's 404s, says nothing of the new
   * one; a rate limit that still holds costs one 429, which sets it again), in the store too, publishing `model_restored` and `cooldown_end`.
   */
  private liftForNewUpstream(providerIds: ReadonlySet<string>): void {
    const ids = new Set<string>();
    for (const a of [...this.index.accounts, ...this.index.implicitAccounts()]) if (providerIds.has(a.providerId)) ids.add(a.id);
    const now = this.clock.now();
    const lifted = this.removed.lift(ids, now);
    for (const id of new Set(lifted.map((r) => r.accountId))) this.persistRow((st) => st.restoreModel(id), removedRow(id));
    for (const r of lifted) this.publish(r.accountId, this.providerOf(r.accountId), "model_restored", { model: r.model, reason: `removal (${r.reason}) lifted: the provider's base_url or kind changed` });
    this.cooldowns.lift(ids, now);
  }

  /** Every account known, in priority order. */
  list(): Account[] {
    return this.index.accounts;
  }

  /**
   * The implicit accounts: for each `*-compatible` provider without any account (disabled ones count),
   * the `<provider>-keyless` account without a credential that its requests are sent with (see
   * {@link candidates}), in provider-table order. The same objects the requests use, so their state
   * (cooldowns, health, slots) reads under their ids. O(providers).
   */
  implicitAccounts(): Account[] {
    return this.index.implicitAccounts();
  }

  /** The account with this id among {@link list} and {@link implicitAccounts}, or undefined. */
  find(id: string): { account: Account; implicit: boolean } | undefined {
    return this.index.find(id);
  }

  /** Loads persisted state (at start and on each periodic re-read), first publishing the ends that passed on the clock. */
  loadState(state: AccountState): void {
    // Ends that passed on this registry's clock are published before the re-read replaces the state (the
    // store pruned them): the end timer waits real time, which a clock that jumps (a test's, a stepped
    // system clock) outruns, and once dropped here an end was never published at all.
    if (this.opts.bus && this.clock.now() > this.ends.upTo) this.ends.fire();
    const held = this.opts.bus?.active ? { cooldowns: new Map(this.cooldowns.all), locks: new Map(this.locks.all) } : undefined;
    this.cooldowns.load(state.cooldowns);
    this.locks.load(state.locks);
    this.quota.load(state.quotas, (w) => w.keyHash === undefined || this.ownWindow(w)); // another key's windows are not its quota
    // Locks, cooldowns and quota clears the store refused hold in memory until written (retry-writes.ts).
    if (this.unwritten.size > 0) this.unwritten.reapply();
    // A removed pairing or a circuit whose write waits is kept as memory holds it (retry-writes.ts).
    const waitingPair = this.unwritten.size > 0 ? (pair: string) => this.unwritten.has("removed\u0000" + pair) : undefined;
    if (!this.opts.bus?.active) this.removed.load(state.removedModels, waitingPair);
    else for (const r of this.removed.loadGone(state.removedModels, this.clock.now(), waitingPair)) this.publish(r.accountId, this.providerOf(r.accountId), "model_restored", { model: r.model, reason: "restored elsewhere" });
    for (const c of held ? clearedElsewhere(held, { cooldowns: this.cooldowns.all, locks: this.locks.all }, this.clock.now()) : []) {
      if (!this.lifts.keep(c)) this.publish(c.accountId, this.providerOf(c.accountId), c.change, { model: c.model, reason: c.reason });
    }
    this.locks.afterRead(held?.locks);
    this.circuits.load(state.circuits, this.unwritten.size > 0 ? (id) => this.unwritten.has(circuitRow(id)) : undefined);
    this.bindings.load(state.bindings, this.clock.now());
    // Quarantines are written by the credential manager (or another instance) and arrive here.
    for (const q of this.quarantines.load(state.quarantined, this.index.accounts, this.opts.bus?.active === true, (id) => this.liftingHere.get(id))) {
      this.publish(q.account.id, q.account.providerId, q.change, { reason: q.reason, ...(q.change === "quarantine" ? { advice: quarantineAdvice(q.account.id, this.index.providers.get(q.account.providerId)?.kind) } : {}) });
    }
    if (this.opts.bus) {
      for (const c of this.cooldowns.all.values()) this.armExpiry(c.until);
      for (const l of this.locks.all.values()) if (l.until !== null) this.armExpiry(l.until);
      for (const until of this.removed.ends()) this.armExpiry(until);
      for (const until of this.circuits.ends()) this.armExpiry(until);
    }
  }

  /** Publishes an account state change (SPEC 9.4) when somebody listens. */
  private publish(account: string, provider: string | undefined, change: string, extra: Omit<Partial<AccountStateEvent>, "type" | "account" | "change"> = {}): void {
    const bus = this.opts.bus;
    if (!bus?.active) return;
    const event: AccountStateEvent = { type: "account_state", at: this.clock.now(), account, change, ...extra };
    if (provider !== undefined) event.provider = provider;
    if (event.model === ALL_MODELS) delete event.model;
    bus.publish(event);
  }

  /** Publishes a provider-wide change once per account of the provider. */
  private publishProvider(providerId: string, change: string, extra: Omit<Partial<AccountStateEvent>, "type" | "account" | "change"> = {}): void {
    if (!this.opts.bus?.active) return;
    for (const a of this.index.of(providerId)) this.publish(a.id, providerId, change, extra);
  }

  private providerOf(accountId: string): string | undefined {
    return this.index.providerOf(accountId);
  }

  /** Arms the end timer for a state that ends at `until` (ms since the epoch), when it is the earliest. */
  private armExpiry(until: number): void {
    this.ends.arm(until);
  }

  /** The end timer's scan: publishes every state that ended in (from, now] and arms for the next end. */
  private expire(from: number, now: number): void {
    this.cooldowns.expire(from, now);
    this.locks.expire(from, now);
    this.removed.expire(
      from,
      now,
      (accountId, model, reason) => this.publish(accountId, this.providerOf(accountId), "model_restored", { model, reason: `removal (${reason}) ended` }),
      (until) => this.armExpiry(until),
    );
    this.circuits.expire(from, now);
  }

  /** Stops the end timer (shutdown). */
  close(): void {
    this.ends.close();
  }

  /** Why an account may not serve `model` now, with when that ends; undefined when eligible. */
  exclusion(account: Account, model: string): Exclusion | undefined {
    const now = this.clock.now();
    if (account.disabled) return { cause: "disabled", reason: "disabled" };
    const quarantined = this.quarantines.reasonOf(account);
    if (quarantined !== undefined) return { cause: "quarantined", reason: `credential quarantined (${quarantined}) until replaced` };
    const lock = this.locks.get(account.id);
    if (lock && (lock.until === null || lock.until > now)) {
      // A model cooldown that outlasts the lock keeps the account out after the lock: `until` is the later
      // of the two (a Retry-After read from it would otherwise name the lock's end, too early).
      const cooling = lock.until !== null && this.cooldowns.size > 0 ? this.cooldowns.active(account.id, model, now) : undefined;
      const until = lock.until === null ? undefined : Math.max(lock.until, cooling?.until ?? 0);
      return { cause: lock.reason === QUOTA_LOCK_REASON ? "quota" : "lock", reason: `locked: ${lock.reason}`, until };
    }
    // The maps are empty while nothing failed: no key strings built for them then.
    const rm = this.removed.active(account.id, model, now);
    if (rm) return { cause: "removed", reason: `model removed for this account: ${rm.reason}` };
    // SPEC P-6: a model some account of the pool advertised never goes to one that did not; a model
    // no account advertised (a new model, an alias) is left to the upstream to accept or refuse.
    if (account.models && !account.models.includes(model) && this.index.advertised(account.providerId).has(model)) {
      return { cause: "not_advertised", reason: "model not advertised by this account" };
    }
    const c = this.cooldowns.size > 0 ? this.cooldowns.active(account.id, model, now) : undefined;
    if (c) return { cause: RATE_LIMIT_REASONS.has(c.reason) ? "rate_limit" : "cooldown", reason: `cooling down (${c.reason})`, until: c.until };
    const q = this.quota.exhausted(account.id, model, now);
    return q && { cause: "quota", ...q };
  }

  // ---- AccountPool --------------------------------------------------------------------------

  /**
   * The provider's accounts for this request, best first (SPEC A-1…A-4): conversation affinity (the
   * bound account first, unless the strategy is round-robin or the combo turned affinity off), then
   * the account strategy (selection.ts), decided once per request (memoised on `hints`); eligibility is
   * re-checked on every call, and accounts whose slots are all taken go after those with a free slot.
   * `hints.dryRun` leaves round-robin counters alone. O(accounts of the provider).
   */
  candidates(providerId: string, model: string, hints: PickHints): AccountCandidate[] {
    const ranked = this.ranking.of(this.index.serving(providerId), providerId, model, hints);
    const out: AccountCandidate[] = [];
    // Made by the first account whose slots are all taken (none on most requests: no second array each).
    let busy: AccountCandidate[] | undefined;
    for (const { account, note } of ranked) {
      const ex = this.exclusion(account, model);
      if (ex) {
        out.push({ account, eligible: false, cause: ex.cause, reason: ex.reason, until: ex.until });
        continue;
      }
      const limit = this.slotLimit(account);
      if (this.slots.full(account.id, limit)) (busy ??= []).push({ account, eligible: true, note: `all ${limit} slots in use, tried after accounts with a free slot; ${note}` });
      else out.push({ account, eligible: true, note });
    }
    return busy ? [...out, ...busy] : out;
  }

  /** How many of the provider's accounts (only `accountId` when given) may serve `model` now (AccountPool.servable). O(accounts of the provider). */
  servable(providerId: string, model: string, accountId?: string): number {
    let n = 0;
    for (const account of this.index.serving(providerId)) {
      if (accountId !== undefined && account.id !== accountId) continue;
      if (!this.exclusion(account, model)) n++;
    }
    return n;
  }

  /**
   * SPEC R-2's guess: ids of the providers that have accounts and advertise exactly `model` (an
   * account's discovered models, P-6, or the provider's configured `models`), in provider-table order.
   * Memoised per model until the next setAccounts.
   */
  advertising(model: string): string[] {
    return this.index.advertising(model);
  }

  /** Whether the provider has any account (disabled ones count; a `*-compatible` provider has its keyless one). O(1). */
  hasAccounts(providerId: string): boolean {
    return this.index.hasAccounts(providerId);
  }

  /** Counts a request answered for want of any account of `providerId` (AccountPool.noAccount): 503, or 404 for a guessed name. */
  noAccount(providerId: string, status: number): void {
    this.unserved.count(providerId, status, this.clock.now());
  }

  /** The requests this instance answered for want of an account of `providerId` since it started, or undefined when none. */
  unservedRequests(providerId: string): UnservedRequests | undefined {
    return this.unserved.of(providerId);
  }

  /** Concurrency slots of an account (SPEC A-4): its max_concurrency, else its provider kind's default; undefined = unlimited. */
  slotLimit(account: Account): number | undefined {
    return account.maxConcurrency ?? this.index.providers.get(account.providerId)?.defaultMaxConcurrency;
  }

  /**
   * Stores a quota window read from a response (SPEC P-5): memory now, the store at its next flush. `from`: the account object the
   * call was sent with; one sent before the key or login changed ({@link forgetQuotas}) records nothing (quota-generations.ts).
   */
  setQuota(q: QuotaWindow, from?: Account): void {
    if (from !== undefined && this.quotaGenerations.stale(from)) return;
    const key = this.windowKey(from ?? this.index.find(q.accountId)?.account);
    if (key !== undefined) q.keyHash = key; // which API key it speaks of, for a start with another key (loadState)
    this.quota.set(q);
    this.persist((st) => st.setQuota(q));
  }

  /** The short hash of an API-key account's key its windows are stored with (QuotaWindow.keyHash): 16 hex characters of its fingerprint; undefined for other accounts. */
  private windowKey(a: Account | undefined): string | undefined {
    return a?.credential.type === "api_key" ? this.quarantines.fingerprint(a)?.slice(0, 16) : undefined;
  }

  /** Whether a stored window read with an API key (`keyHash`) speaks of the account's current key (an account not listed keeps its windows). */
  private ownWindow(w: QuotaWindow): boolean {
    const a = this.index.find(w.accountId)?.account;
    return a === undefined || this.windowKey(a) === w.keyHash;
  }

  /**
   * Forgets the account's quota windows and token limits (a new API key or login is a new quota): memory now,
   * the store through {@link persistRow} (a refused delete written or tried again as a lock's; until then a
   * re-read keeps them out of memory). Replies to calls sent with the old credential record nothing after it.
   */
  forgetQuotas(accountId: string): void {
    const at = this.clock.now();
    this.quotaGenerations.bump(accountId);
    this.quota.forgetAccount(accountId);
    this.persistRow((st) => st.clearQuotas(accountId), "quotas\u0000" + accountId, () => this.quota.forgetAccount(accountId, at));
  }

  /**
   * The best per-model remaining quota (0–1) reported by the accounts that may serve (provider,
   * model) — only `accountId` when the target pins one — or undefined when none reports a window for
   * this very model (SPEC R-3 quota sort).
   */
  modelQuota(providerId: string, model: string, accountId?: string): number | undefined {
    const now = this.clock.now();
    let best: number | undefined;
    for (const a of this.index.of(providerId)) {
      if ((accountId && a.id !== accountId) || a.disabled) continue;
      const r = this.quota.tightest(a.id, model, now, true);
      if (r && (best === undefined || r.fraction > best)) best = r.fraction;
    }
    return best;
  }

  /** SPEC 6.3: whether the account's cached quota for `model` looks healthy (> 2 % left); undefined when unknown. */
  quotaHealthy(account: Account, model: string): boolean | undefined {
    const r = this.quota.tightest(account.id, model, this.clock.now());
    return r ? r.fraction > QUOTA_EXCLUDE_FRACTION : undefined;
  }

  /** The account's per-minute token limit for `model` as its headers last reported it (QuotaBook.tokenLimit); undefined when unknown. */
  tokenWindowLimit(account: Account, model: string): number | undefined {
    return this.quota.tokenLimit(account.id, model);
  }

  /** A provider circuit's state without consuming the half-open probe (dry run, status). */
  circuitState(providerId: string): { state: "closed" | "open" | "half-open"; openUntil?: number; consecutive5xx: number } {
    return this.circuits.state(providerId);
  }

  /** Raw live state for `accounts status` (copies; never credentials). */
  snapshot() {
    const now = this.clock.now();
    return {
      now,
      accounts: this.index.accounts,
      providers: this.index.providers,
      cooldowns: this.cooldowns.live(now),
      locks: this.locks.live(now),
      removed: this.removed.live(now),
      /** The quarantine's reason when the account's credential is quarantined, else undefined. */
      quarantined: (a: Account) => this.quarantines.reasonOf(a),
    };
  }

  /**
   * Restores the account's removed pairings (SPEC 6.3) now — `model`'s, else all — in the store (awaited: the
   * next re-read must not bring them back) and in memory, publishing `model_restored` once for each that
   * memory held (also when a re-read dropped it meanwhile, removed-pairings.ts `restoreAround`): the models
   * that held when asked, sorted (empty when none). A transient rejection of a shared database is tried again
   * (shared-state-writes.ts `writeTryingAgain`). @throws StoreError (the database's last rejection as `rejected`, memory unchanged).
   */
  async restorePairings(accountId: string, model?: string, reason = "restored by hand"): Promise<string[]> {
    const store = this.store;
    this.unwritten.forget("removed", accountId, model); // a refused removal written again after the restore would bring it back
    const hand = { change: `the restore of account ${accountId}'s removed ${model === undefined ? "pairings" : `pairing of model ${model}`}`, stays: "the pairing stays removed" };
    const done = await this.removed.restoreAround(accountId, model, () => this.clock.now(), async () => void (store && (await writeTryingAgain(() => store.restoreModel(accountId, model), undefined, hand))));
    for (const m of done.announce) this.publish(accountId, this.providerOf(accountId), "model_restored", { model: m, reason });
    return done.restored;
  }

  /**
   * Clears the account's cooldowns and lock through this instance (a new login or import, an account
   * removed, SPEC 9.3): `work` writes the store and re-reads it; then `cooldown_end` / `unlock` is
   * published once for each that held when asked (or that a re-read dropped meanwhile), as
   * "cooldown (REASON) WHAT" / "lock (REASON) WHAT" (e.g. WHAT = "cleared by a new login"), not as cleared
   * elsewhere; a quarantine the re-read in `work` finds lifted, as `unquarantine` "quarantine (REASON) WHAT".
   * @throws what `work` throws (nothing is published then).
   */
  async lift(accountId: string, what: string, work: () => Promise<void>): Promise<void> {
    const provider = this.providerOf(accountId);
    const mine = <T>(m: ReadonlyMap<string, T>, own: (k: string) => boolean) => new Map([...m].filter(([k]) => own(k)));
    const asked = clearedElsewhere(
      { cooldowns: mine<HeldCooldown>(this.cooldowns.all, (k) => k.startsWith(accountId + "\u0000")), locks: mine<HeldLock>(this.locks.all, (k) => k === accountId) },
      { cooldowns: new Map(), locks: new Map() },
      this.clock.now(),
    );
    // Its alerts' claims end first: another instance that learns of the lift may lock the account again at once.
    await this.opts.episodeEnded?.(accountId);
    this.unwritten.forgetAccount(accountId); // a refused lock written again after the lift would bring it back
    const removals = this.unwritten.waitsFor("removed", accountId);
    // A quarantine the work lifts (a new login or import) is announced as what happened here too (quarantines.ts).
    this.liftingHere.set(accountId, what);
    let done: Awaited<ReturnType<LiftsHere["around"]>>;
    try {
      done = await this.lifts.around(accountId, asked, work, (c) => (c.change === "unlock" ? this.locks.has(accountId) : this.cooldowns.has(accountId, c.model!)));
    } finally {
      this.liftingHere.delete(accountId);
    }
    // The work removed the account (its rows went with it): a refused removal of its pairings is not written
    // again, and one the work's re-read wrote after the delete is deleted (in the waiting order, retry-writes.ts).
    if (removals && !this.index.find(accountId)) {
      this.unwritten.forget("removed", accountId);
      this.persistRow((st) => st.restoreModel(accountId), removedRow(accountId));
    }
    for (const c of done) this.publish(accountId, provider ?? this.providerOf(accountId), c.change, { model: c.model, reason: `${c.change === "unlock" ? "lock" : "cooldown"} (${c.held}) ${what}` });
  }

  /** Forgets consecutive-error counts and in-memory circuits (tests, admin "reset"). */
  resetCounters(): void {
    this.circuits.reset();
    this.stats.clear(); // routing memory too: health stats, in-memory bindings, round-robin turns
    this.bindings.clear();
    this.ranking.clearTurns();
  }

  /**
   * Takes a concurrency slot (SPEC A-4), waiting up to the slot timeout (15 s) for one to free. With a
   * shared store (SPEC D-2) a limited account's slot is also a lease in the database, so the limit
   * holds across every instance; while the database cannot be reached the local slot alone counts.
   */
  acquire(account: Account, signal: AbortSignal): Promise<(() => void) | undefined> {
    return takeSlot(this.slots, this.store, this.clock, account.id, this.slotLimit(account), signal, this.opts.slotWaitMs ?? SLOT_WAIT_MS, this.opts.sharedAnswerMs ?? SHARED_ANSWER_MS);
  }

  /**
   * {@link acquire} for an account without a concurrency limit, at once (nothing to wait for, no lease):
   * the release; undefined for a limited account. Call the release exactly once: it is one function
   * shared by every take of the account, not guarded against a second call (slots.ts `Release`).
   */
  acquireNow(account: Account): (() => void) | undefined {
    return this.slotLimit(account) === undefined ? this.slots.takeUnlimited(account.id) : undefined;
  }

  /**
   * Binds a conversation to the account that just answered it (SPEC A-2), per provider, for 15 min:
   * memory at once, the store at its next flush. Nothing is bound under the round-robin strategy.
   */
  bind(hints: PickHints, account: Account, now = this.clock.now()): void {
    if ((this.opts.strategy?.() ?? "scored") === "round-robin" || hints.affinity === false) return;
    // A provider with one account has nothing to steer, but the binding still says whether the next
    // request finds that account's prompt cache warm (X-Switchyard-Cache, SPEC 2.4).
    const affinityKey = hints.affinityKey;
    if (!affinityKey) return;
    const b = this.bindings.set(hints.keyAt?.(account.providerId, bindingKey) ?? bindingKey(account.providerId, affinityKey), account.id, now);
    this.persist(persistBinding, b); // a module function: no closure per request
  }

  /** SPEC 2.4 `X-Switchyard-Cache` (see AccountPool.cacheState). */
  cacheState(hints: PickHints, providerId: string, account?: Account, now?: number): CacheState {
    if ((this.opts.strategy?.() ?? "scored") === "round-robin" || hints.affinity === false) return "bypass";
    const affinityKey = hints.affinityKey;
    if (!affinityKey) return "bypass";
    if (!account) return "miss";
    return this.bindings.get(hints.keyAt?.(providerId, bindingKey) ?? bindingKey(providerId, affinityKey), now ?? this.clock.now())?.accountId === account.id ? "hit" : "miss";
  }

  // ---- AccountHealth ------------------------------------------------------------------------

  failure(account: Account, provider: ProviderInfo, model: string, c: Classification, opts: { retrying?: boolean } = {}): void {
    const now = this.clock.now();
    const effect = c.account;
    if (c.row === "server_error" || c.row === "transport") this.circuits.serverError(provider.id, now);
    // A removed pairing (404 model not found, a model-scoped 403) says the account lacks one model, not
    // that it fails: its score for the models it serves stays (newuser13's tryout, J1). A rate limit, overload,
    // quota lock or 402 is its cooldown's or lock's business: a failed attempt shown, not scored (RATE_LIMIT_ROWS).
    if (RATE_LIMIT_ROWS.has(c.row)) this.stats.rateLimited(account.id, now);
    else if ((effect.type !== "none" && effect.type !== "remove_pairing") || c.row === "server_error" || c.row === "transport") this.stats.failure(account.id, now);
    if (opts.retrying) return;
    switch (effect.type) {
      case "none":
        return;
      case "cooldown_until":
        this.cooldowns.set(account.id, effect.scope === "model" ? model : ALL_MODELS, effect.until, effect.reason, 0);
        return;
      case "cooldown_for":
        this.cooldowns.set(account.id, effect.scope === "model" ? model : ALL_MODELS, now + effect.ms, effect.reason, 0);
        return;
      case "backoff":
        this.cooldowns.backoff(account.id, model, effect.reason, now, effect.until);
        return;
      case "lock":
      case "credential":
        // Without a refresh path (API keys), a rejected credential disables the account until changed.
        this.locks.set(account, effect.type === "lock" ? (effect.until ?? null) : null, effect.reason, now);
        return;
      case "remove_pairing": {
        const until = this.removed.remove(account.id, model, effect.reason, now);
        this.persistRow((st) => st.removeModel({ accountId: account.id, model, reason: effect.reason, until, since: now }), removedRow(account.id, model));
        this.armExpiry(until);
        this.publish(account.id, account.providerId, "model_removed", { model, reason: effect.reason, until });
        return;
      }
    }
  }

  success(account: Account, provider: ProviderInfo, model: string, latencyMs: number, now = this.clock.now()): void {
    this.stats.success(account.id, latencyMs, now);
    this.circuits.success(provider.id);
    if (this.cooldowns.size === 0) return;
    this.cooldowns.succeeded(account.id, account.providerId, model, now);
  }

  circuitOpen(providerId: string): boolean {
    return this.circuits.isOpen(providerId);
  }

  /** When an open circuit lets requests through again (the attempt loop's port; ms since the epoch). */
  circuitOpenUntil(providerId: string): number | undefined {
    return this.circuits.state(providerId).openUntil;
  }

  /**
   * Writes state through to the store. A store failure (locked past its busy timeout, closed) must not
   * fail the request: memory already holds the state; the next periodic re-read reconciles. `arg` is
   * handed to `write` (for a write made on every request without a closure).
   */
  private persist<A>(write: (store: Store, arg: A) => unknown, arg?: A): void {
    if (!this.store) return;
    try {
      const r = write(this.store, arg as A);
      if (r && typeof (r as Promise<unknown>).catch === "function") (r as Promise<unknown>).catch(() => {});
    } catch {
      // see above
    }
  }

  /**
   * {@link persist} of one lock, cooldown, removed-pairing or circuit row (`key`; `apply`: what the write
   * did to memory): on a store of this instance alone a write it refuses (a full disk) is kept and written
   * again later (retry-writes.ts); on a shared store one the database rejects is tried again when the
   * rejection is transient, else logged and counted (shared-state-writes.ts).
   */
  private persistRow(write: (store: Store) => unknown, key?: string, apply?: () => void): void {
    if (!this.store || key === undefined) return this.persist(write);
    this.unwritten.persist(this.store, key, write, apply);
  }

  /**
   * Writes again the lock, cooldown, removed-pairing and circuit writes the store refused (retry-writes.ts):
   * before each re-read of the state and at a stop. Returns how many are unwritten: those that still wait
   * and those dropped for the cap on waiting writes (lost if the process ends now). On a shared store the
   * writes go by themselves (shared-state-writes.ts): those on their way and those the database rejected. Never throws.
   */
  retryWrites(): number {
    return (this.store && this.unwritten.size > 0 ? this.unwritten.retry(this.store) : 0) + this.lostStateWrites;
  }

  /**
   * The state writes lost or unwritten, by what happened, for a stop's line (read after the store's
   * close): `rejected`, those the store rejected earlier, each said in an `error` line then (on a shared
   * database shared-state-writes.ts's, and the credential quarantines); `droppedAtCap`, those the embedded
   * store refused and dropped earlier for the cap on waiting writes (retry-writes.ts); `atStop`, those
   * still on their way or waiting at the stop, and on a shared store those it refused once closed.
   * Their sum is {@link retryWrites}'s count (after the close: with the refused ones). Never throws.
   */
  unwrittenStateWrites(): { rejected: number; droppedAtCap: number; atStop: number } {
    const u = this.unwritten;
    if (u instanceof SharedStateWrites) return { rejected: u.rejectedCount + this.lostElsewhere, droppedAtCap: 0, atStop: u.size + u.refusedAtClose };
    return { rejected: this.lostElsewhere, droppedAtCap: u.dropped, atStop: u.size };
  }

  /** Counts one state write the store rejected outside the registry (a credential quarantine, credentials.ts): lost. */
  countLostStateWrite(): void {
    this.lostElsewhere++;
  }

  /**
   * At a stop, before {@link retryWrites}: on a shared store, waits until the state writes on their way
   * (a transient rejection's tries) are done, or `until()` (ms since the epoch), 2 s at most
   * (shared-state-writes.ts `SETTLE_AT_STOP_MS`); those still on their way then count as unwritten. At once otherwise.
   */
  async stateWritesSettled(until: () => number): Promise<void> {
    if (this.unwritten instanceof SharedStateWrites) await this.unwritten.settled(until);
  }

  /**
   * State writes lost so far (not counting those still waiting): on a shared store those the database
   * rejected and those the store refused once closed, on the embedded one those dropped for the cap on
   * waiting writes; and the credential quarantines the store rejected. For `switchyard_store_dropped_total`.
   */
  get lostStateWrites(): number {
    return this.unwritten.dropped + this.lostElsewhere;
  }

  /**
   * Clears the account's whole-account lock now (`switchyard accounts unlock ID`, SPEC 9.3): in the store
   * (awaited: the next re-read must not bring it back) and in memory, publishing `unlock` "lock (REASON)
   * cleared by hand" once when one held. The lock that held, or undefined when none did. A transient
   * rejection of a shared database is tried again (shared-state-writes.ts `writeTryingAgain`). @throws StoreError (the last rejection: `rejected`, lock kept).
   */
  async unlock(accountId: string): Promise<HeldLockState | undefined> {
    const held = this.locks.get(accountId);
    const live = held && (held.until === null || held.until > this.clock.now()) ? held : undefined;
    await this.lift(accountId, "cleared by hand", async () => {
      const store = this.store;
      if (store) await writeTryingAgain(() => store.clearLock(accountId), undefined, { change: `the unlock of account ${accountId}`, stays: "the account stays locked" });
      this.locks.delete(accountId);
    });
    return live;
  }

  /** Closes the provider's circuit in the store (awaited: other instances drop it within about a second; a transient rejection tried again, shared-state-writes.ts `writeTryingAgain`), then in memory (ProviderCircuits.closeAround; until session 44 memory first, so a refused write left it closed here only). @throws StoreError (the database's last rejection as `rejected`: the circuit stays open, here too) */
  async closeCircuit(providerId: string): Promise<ClosedCircuit | undefined> {
    this.unwritten.forget("circuit", providerId); // a refused opening written again after the close would bring it back
    const store = this.store;
    const hand = { change: `the close of provider ${providerId}'s circuit`, stays: "the circuit stays open" };
    return this.circuits.closeAround(providerId, async () => void (store && (await writeTryingAgain(() => store.clearCircuit(providerId), undefined, hand))));
  }
}

/** The row key of an account's removed pairing of `model`, or of all its removals, for the writes kept to be written again (retry-writes.ts). */
function removedRow(accountId: string, model?: string): string {
  return model === undefined ? "removed\u0000" + accountId : "removed\u0000" + accountId + "\u0000" + model;
}

/** Hands a conversation binding to the store's buffer (the registry's write-through of {@link AccountRegistry.bind}). */
function persistBinding(store: Store, b: Binding): unknown {
  return store.bind(b);
}
