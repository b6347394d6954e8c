/**
 * The account-state role of the store (SPEC 5.3, 6.3, 7, A-2): cooldowns, locks, removed pairings,
 * quarantines and circuits (written through), quota windows and conversation bindings (buffered).
 * Conventions: see `./types.ts`.
 */
import type { Awaitable } from "./types.ts";

/** Model name used for a cooldown, quota window or pairing that covers every model of the account. */
export const ALL_MODELS = "*";

/** Quota windows not updated for this long are pruned by either backend, ms (30 days). */
export const QUOTA_STALE_MS = 30 * 24 * 3600 * 1000;

/**
 * A quota window read without a reset time (the headers named none) is pruned by either backend when
 * not updated for this long, ms (1 day). Such a window is only a provider's last word on what remains
 * (SPEC P-5: read from each response's rate-limit headers, which restate it), kept to order targets
 * and to show on the Accounts page; after a day without a response naming it, it says nothing current,
 * and an OpenAI-compatible upstream reports one for whatever model name a client sends.
 */
export const QUOTA_NO_RESET_STALE_MS = 24 * 3600 * 1000;

/**
 * The most models (other than `*`) whose quota windows either backend keeps per account: past it, at
 * each read of the account state, the windows of the models least recently updated (their newest
 * `updated_at`; on a tie the model name later in byte order) are deleted ({@link quotaModelsOverCap}). The same bound as memory's
 * (src/accounts/quota.ts MAX_QUOTA_MODELS_PER_ACCOUNT), so every stored window survives a re-read.
 */
export const QUOTA_MODELS_PER_ACCOUNT = 512;

/**
 * Whether some account has windows of more than {@link QUOTA_MODELS_PER_ACCOUNT} models besides `*` in
 * `quotas` (a read of the stored windows): the backends run their delete of the surplus only then (it
 * took ~7 ms on SQLite over 15,000 windows at every 10 s re-read). O(1) for up to that many windows,
 * else O(windows).
 */
export function quotaModelsOverCap(quotas: ReadonlyArray<Pick<QuotaWindow, "accountId" | "model">>): boolean {
  if (quotas.length <= QUOTA_MODELS_PER_ACCOUNT) return false;
  const models = new Map<string, Set<string>>();
  for (const q of quotas) {
    if (q.model === ALL_MODELS) continue;
    let of = models.get(q.accountId);
    if (of === undefined) models.set(q.accountId, (of = new Set()));
    of.add(q.model);
    if (of.size > QUOTA_MODELS_PER_ACCOUNT) return true;
  }
  return false;
}

/** A cooldown of one account for one model, or for all its models (`model: "*"`). */
export interface Cooldown {
  accountId: string;
  /** Upstream model id, or `"*"` (ALL_MODELS) for the whole account. */
  model: string;
  /** ms since the epoch when the account may be picked again. */
  until: number;
  /** Classification row / human-readable reason, no secrets (e.g. "429 rate limit"). */
  reason: string;
  /** Exponential-backoff step (0 = first cooldown), so the next failure can double the wait. */
  level: number;
  /** ms since the epoch when the cooldown was set; filled in by the store when omitted. */
  since?: number;
}

/** A lock of the whole account (quota exhausted, spend cap, ban, 402). */
export interface AccountLock {
  accountId: string;
  /** ms since the epoch when the lock ends, or null = until changed (cleared or credential replaced). */
  until: number | null;
  reason: string;
  /** ms since the epoch; filled in by the store when omitted. */
  since?: number;
  /**
   * `credentialFingerprint()` of the API key the lock was set under (hex SHA-256, never the key): a lock
   * whose account now holds another key no longer holds (SPEC 6.3 "until changed"). null (or omitted): an
   * OAuth account's lock, or one stored before 2026-12-05.
   */
  fingerprint?: string | null;
}

/** An account/model pairing removed after a model-scoped 403 / 404 (SPEC 6.3). */
export interface RemovedModel {
  accountId: string;
  model: string;
  reason: string;
  /** ms since the epoch when the pairing may be tried again, or null = until restored. */
  until: number | null;
  /** ms since the epoch; filled in by the store when omitted. */
  since?: number;
}

/** A credential rejected after refresh, quarantined by fingerprint until replaced (SPEC 6.3, P-7). */
export interface Quarantine {
  /** `credentialFingerprint()`: hex SHA-256 of the refresh token (OAuth) or the API key. */
  fingerprint: string;
  /** The account that held it, for display. */
  accountId?: string;
  reason: string;
  /** ms since the epoch; filled in by the store when omitted. */
  since?: number;
}

/** A provider circuit that is open (SPEC 6.3: 10 consecutive 5xx → open for 5 min, then half-open). */
export interface Circuit {
  providerId: string;
  /** ms since the epoch when the circuit turns half-open. */
  openUntil: number;
  reason?: string;
  /** ms since the epoch; filled in by the store when omitted. */
  since?: number;
}

/** One quota window read from a provider's rate-limit headers (SPEC P-5). */
export interface QuotaWindow {
  accountId: string;
  /** The provider's window name, e.g. "requests", "tokens", "5h", "weekly". */
  window: string;
  /** Upstream model id this window applies to, or `"*"` for every model of the account. */
  model: string;
  /** 0–100, when the provider reports usage as a percentage. */
  usedPercent?: number;
  /** Remaining units (requests or tokens) when the provider reports them. */
  remaining?: number;
  /** The window's size in the same units as `remaining`, when known. */
  limit?: number;
  /** ms since the epoch when the window resets; the row is dropped after that. */
  resetAt?: number;
  /** ms since the epoch of the response it was read from; filled in by the store when omitted. */
  updatedAt?: number;
  /**
   * The API key the window was read with, as 16 hex characters of its SHA-256 (never the key): a start
   * with another key for the account leaves the window out (src/accounts/registry.ts `loadState`). Absent
   * for OAuth and keyless accounts and for rows written before SQLite schema 21 / PostgreSQL schema 23.
   * Stored in the `credential` column of the quota tables. Internal to the store and the registry: it
   * never leaves in a reply, an event or a log line ({@link shownQuotaWindow} in src/accounts/quota.ts).
   */
  keyHash?: string;
}

/** A conversation bound to the account that last answered it successfully (SPEC A-2). */
export interface Binding {
  /** Conversation fingerprint or explicit session id (opaque to the store). */
  key: string;
  accountId: string;
  /** ms since the epoch when the binding lapses (15 min after the success). */
  expiresAt: number;
}

/** Models an account advertised through discovery (SPEC P-6); for config and db accounts alike. */
export interface DiscoveredModels {
  accountId: string;
  models: string[];
  /** ms since the epoch */
  discoveredAt: number;
}

/**
 * Every piece of live account state, as plain objects, without expired rows
 * (cooldowns, locks, pairings, circuits past `until`; quota windows past `resetAt`; bindings past
 * `expiresAt`). All optional fields the store fills in (`since`, `updatedAt`) are present.
 */
export interface AccountState {
  cooldowns: Required<Cooldown>[];
  /** `fingerprint` present only when the lock has one. */
  locks: (Required<Omit<AccountLock, "fingerprint">> & { fingerprint?: string })[];
  removedModels: Required<RemovedModel>[];
  quarantined: (Required<Omit<Quarantine, "accountId">> & { accountId?: string })[];
  circuits: (Required<Omit<Circuit, "reason">> & { reason?: string })[];
  quotas: (QuotaWindow & { updatedAt: number })[];
  bindings: Binding[];
  discoveredModels: DiscoveredModels[];
}

/** Live account state that routing reads from memory and every write goes through. */
export interface AccountStateStore {
  /** Sets (replaces) the cooldown of (accountId, model). */
  setCooldown(cooldown: Cooldown): Awaitable<void>;
  /** Clears the cooldown of (accountId, model), or every cooldown of the account when model is omitted. */
  clearCooldown(accountId: string, model?: string): Awaitable<void>;
  /** Sets (replaces) the whole-account lock. */
  setLock(lock: AccountLock): Awaitable<void>;
  /** Clears the whole-account lock. */
  clearLock(accountId: string): Awaitable<void>;
  /** Removes an account/model pairing. */
  removeModel(removed: RemovedModel): Awaitable<void>;
  /** Restores one pairing, or every removed pairing of the account when model is omitted. */
  restoreModel(accountId: string, model?: string): Awaitable<void>;
  /** Quarantines a credential fingerprint until `unquarantine`. */
  quarantine(q: Quarantine): Awaitable<void>;
  /** Lifts a quarantine (a new login replaced the credential). */
  unquarantine(fingerprint: string): Awaitable<void>;
  /** Opens (or extends) a provider circuit. */
  setCircuit(circuit: Circuit): Awaitable<void>;
  /** Closes a provider circuit. */
  clearCircuit(providerId: string): Awaitable<void>;

  // -- account state, buffered (per-request writes; flushed with usage) -------------------------

  /**
   * Stores a quota window (replacing the one with the same account, window and model). Buffered and
   * coalesced: called on every response, written at the next flush.
   */
  setQuota(q: QuotaWindow): void;
  /**
   * Binds a conversation to an account (SPEC A-2; only after a success). Buffered and coalesced per
   * key: called on every success, written at the next flush. A crash loses at most one flush interval
   * of bindings, which costs only cache warmth.
   */
  bind(binding: Binding): void;
  /** Drops a binding (also a pending one). Written through. */
  unbind(key: string): Awaitable<void>;
  /**
   * Drops every quota window of the account, pending and stored (its API key was replaced: a new key
   * is a new quota, so the old key's rpm/tpm/daily windows and percentages are not its). Written through.
   */
  clearQuotas(accountId: string): Awaitable<void>;

  /**
   * Loads all live account state (expired rows are left out and deleted). Used at start and by the
   * periodic account re-read (SPEC A-1). Pending buffered writes are flushed first.
   */
  loadAccountState(): Awaitable<AccountState>;
}
