/**
 * OAuth credential lifecycle of subscription accounts (SPEC A-5, 6.2, 6.3, P-7):
 *
 * - Proactive refresh (A-5): an access token within 5 minutes of its expiry is refreshed before the
 *   call that would use it ({@link CredentialManager.ensureFresh}, called by the executor).
 * - Reactive refresh (6.2, P-7): after a 401 or a credential-classified 403 the attempt loop calls
 *   {@link CredentialManager.refresh} once and retries once. However many requests saw the 401, an
 *   account gets ONE refresh call: requests arriving while it runs join it (one shared promise), and a
 *   401 on a request that was sent with a token since replaced (by that refresh or a later one) reuses
 *   the current token instead of refreshing again. A 401 on a request sent with the CURRENT token
 *   refreshes, however recent the last refresh: the token may have been revoked right after it was
 *   issued (a login elsewhere, a server-side rotation). Only a caller that cannot say which token it
 *   sent falls back to a grace window ({@link REFRESH_GRACE_MS}) after a successful refresh.
 * - Each refresh round is an Effect program (Effect loaded by the first round: src/memory/lazy-effect.ts):
 *   one token call with a timeout ({@link REFRESH_TIMEOUT_MS}),
 *   temporary failures (5xx, 429, transport, timeout) retried on an exponential schedule within the
 *   round, then backed off across rounds (5 s doubling to 5 min) so a sick token endpoint is not
 *   hammered; meanwhile the account cools down and other accounts serve.
 * - Rotated refresh tokens are persisted (`store.updateCredential`, durable: fsync) BEFORE the new
 *   access token is handed to any call. Accounts from the config file cannot be written to the store;
 *   their refreshed credential lives in memory (see the report of issue 6).
 * - A refresh token the provider rejects (`invalid_grant` and friends), or a credential still
 *   rejected after a successful refresh, is quarantined by fingerprint (store, across restarts) until
 *   a new login or import replaces it.
 *
 * {@link SubscriptionHealth} wraps the account registry's AccountHealth with these rules and the
 * quota-window reader (SPEC P-5). Nothing here logs a token.
 */
import { loadEffect } from "../memory/lazy-effect.ts";
import type { AccountHealth, Classification, RefreshReport } from "../../pipeline/index.ts";
import type { Account, Clock, Credential, ProviderInfo } from "../../pipeline/ports.ts";
import type { OAuthSettings } from "../config/types.ts";
import { loadTokenClient, OAuthError, refreshTokens, toCredential, type SubscriptionKind, type TokenSet } from "../oauth/protocol.ts";
import { quotaFamilies, readQuotaWindows } from "../providers/quota-headers.ts";
import { credentialFingerprint, sha256Hex } from "../store/secrets.ts";
import { StoreError, type QuotaWindow, type Store } from "../store/types.ts";

/** SPEC A-5: refresh when the access token expires within this many ms. */
export const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;
/** One token-endpoint call may take this long, ms. */
export const REFRESH_TIMEOUT_MS = 15_000;
/** Temporary failures retried within one round, first after this many ms, doubling. */
export const REFRESH_RETRY_BASE_MS = 500;
/** Retries within one round (so at most 3 token calls per round). */
export const REFRESH_RETRIES = 2;
/**
 * A credential failure this soon after a successful refresh reuses it instead of refreshing again, ms —
 * only for callers that do not say which token the failed request carried.
 */
export const REFRESH_GRACE_MS = 30_000;
/** Backoff between failed rounds: 5 s doubling to 5 min. */
export const REFRESH_BACKOFF_BASE_MS = 5_000;
/** The ceiling of the backoff between failed refresh rounds: 5 min, ms. */
export const REFRESH_BACKOFF_MAX_MS = 5 * 60_000;

type OAuthCredential = Extract<Credential, { type: "oauth" }>;

/** One token-endpoint call of a refresh round: its start (ms since the epoch), duration (ms), and HTTP status or failure when it failed. */
export type TokenCall = RefreshReport["calls"][number];

/**
 * The last refresh round of an account. Times are ms since the epoch; `fp` is the credential
 * fingerprint it was about; `calls` the round's token-endpoint calls (none when another instance's
 * refreshed credential was adopted: `adopted`).
 */
export type RefreshOutcome =
  | { kind: "ok"; at: number; fp?: string; calls?: TokenCall[]; adopted?: boolean }
  | { kind: "temporary"; at: number; fp?: string; retryAt: number; reason: string; calls?: TokenCall[] }
  | { kind: "rejected"; at: number; fp?: string; reason: string; calls?: TokenCall[] }
  | { kind: "no_refresh_token"; at: number; fp?: string };

/**
 * What the Accounts card and `accounts status` show of a subscription login (never a token): its
 * e-mail and plan when the login or import said, when the access token in use expires (ms since the
 * epoch), whether a refresh token is held, and its refreshes: `never` (none yet by this instance),
 * `refreshing`, `ok` (at), `failed_temporarily` (at, retryAt, reason), `rejected` (at, reason) or
 * `no_refresh_token` (at: a 401 found none to refresh with).
 */
export interface LoginFacts {
  email?: string;
  plan?: string;
  expiresAt?: number;
  refreshable: boolean;
  refresh: { state: "never" | "refreshing" | "ok" | "failed_temporarily" | "rejected" | "no_refresh_token"; at?: number; retryAt?: number; reason?: string };
}

/** Tunables (tests shorten them). All ms. */
export interface CredentialTimings {
  refreshTimeoutMs: number;
  retryBaseMs: number;
  retries: number;
  graceMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/** What the credential manager needs. */
export interface CredentialDeps {
  store: Pick<Store, "updateCredential" | "quarantine"> &
    Partial<Pick<Store, "setCredentialOverride" | "withRefreshLock" | "getAccount" | "listCredentialOverrides">>;
  clock: Clock;
  /** The OAuth client of a provider; undefined for providers that are not subscription kinds. */
  oauthOf(providerId: string): { kind: SubscriptionKind; settings: OAuthSettings } | undefined;
  /** Re-reads accounts and account state into the live registry (after a refresh or a quarantine). */
  reload(): void | Promise<void>;
  fetchImpl?: typeof fetch;
  /** One JSON line per event (never a token). */
  log?: (line: string) => void;
  /** Called once per quarantine write the store rejected (the registry counts it: `lostStateWrites`). */
  onLostWrite?: () => void;
  timings?: Partial<CredentialTimings>;
}

/** A refresh failure worth retrying (connection error, timeout, 5xx), tagged for Effect's `catchTags`. */
class Temporary {
  readonly _tag = "Temporary";
  constructor(readonly reason: string) {}
}
/** The token endpoint refused the refresh token for good. */
class Rejected {
  readonly _tag = "Rejected";
  constructor(readonly reason: string) {}
}

/** Refreshes, persists and quarantines OAuth credentials; one instance per process. */
export class CredentialManager {
  private readonly t: CredentialTimings;
  /**
   * accountId → the refreshed credential and the fingerprint (hex SHA-256) of the account credential's
   * access token it replaces. For config-file accounts it is also persisted (store overrides).
   */
  private readonly overrides = new Map<string, { baseFp: string; credential: OAuthCredential }>();
  /** accountId → the running refresh round; requests that need a refresh meanwhile join it. */
  private readonly inflight = new Map<string, Promise<RefreshOutcome>>();
  private readonly outcomes = new Map<string, RefreshOutcome>();
  private readonly failures = new Map<string, number>();
  private warnedMemoryOnly = new Set<string>();
  private overridesVersion = 0;
  /** Token-endpoint calls made, by account (diagnostics and tests). */
  readonly calls = new Map<string, number>();

  constructor(private readonly deps: CredentialDeps) {
    this.t = {
      refreshTimeoutMs: REFRESH_TIMEOUT_MS,
      retryBaseMs: REFRESH_RETRY_BASE_MS,
      retries: REFRESH_RETRIES,
      graceMs: REFRESH_GRACE_MS,
      backoffBaseMs: REFRESH_BACKOFF_BASE_MS,
      backoffMaxMs: REFRESH_BACKOFF_MAX_MS,
      ...deps.timings,
    };
  }

  /** Whether the account's provider is a subscription kind with an OAuth client. */
  manages(account: Account): boolean {
    return account.credential.type === "oauth" && this.deps.oauthOf(account.providerId) !== undefined;
  }

  /** The credential a call should use now: a refreshed one when it replaced the account's, else the account's. */
  current(account: Account): Credential {
    const o = this.overrides.get(account.id);
    if (o && account.credential.type === "oauth" && sha256Hex(account.credential.accessToken) === o.baseFp) return o.credential;
    return account.credential;
  }

  /**
   * Changes whenever a refreshed credential is adopted or forgotten, i.e. whenever {@link current} may
   * answer differently for some account (caches of the live secrets compare it).
   */
  get version(): number {
    return this.overridesVersion;
  }

  /**
   * Adopts the persisted refreshed credentials of config-file accounts (at start), so a restart does not
   * fall back to the file's possibly spent token. Each applies only while the file holds its base.
   */
  loadOverrides(list: Array<{ accountId: string; baseFingerprint: string; credential: Credential }>): void {
    for (const o of list) {
      if (o.credential.type === "oauth") this.overrides.set(o.accountId, { baseFp: o.baseFingerprint, credential: o.credential });
    }
    this.overridesVersion++;
  }

  /** The last refresh round's outcome for an account, if any. */
  lastOutcome(accountId: string): RefreshOutcome | undefined {
    return this.outcomes.get(accountId);
  }

  /** The account's login as the Accounts card shows it ({@link LoginFacts}); undefined for a credential that is not a managed OAuth one. */
  loginFacts(account: Account): LoginFacts | undefined {
    if (!this.manages(account)) return undefined;
    const cur = this.current(account);
    if (cur.type !== "oauth") return undefined;
    const facts: LoginFacts = { refreshable: Boolean(cur.refreshToken), refresh: { state: "never" } };
    const own = account.credential.type === "oauth" ? account.credential : undefined;
    const email = cur.email ?? own?.email;
    const plan = cur.plan ?? own?.plan;
    if (email) facts.email = email;
    if (plan) facts.plan = plan;
    if (cur.expiresAt !== undefined) facts.expiresAt = cur.expiresAt;
    const o = this.outcomes.get(account.id);
    if (this.inflight.has(account.id)) facts.refresh = { state: "refreshing" };
    else if (o?.kind === "ok") facts.refresh = { state: "ok", at: o.at };
    else if (o?.kind === "temporary") facts.refresh = { state: "failed_temporarily", at: o.at, retryAt: o.retryAt, reason: o.reason };
    else if (o?.kind === "rejected") facts.refresh = { state: "rejected", at: o.at, reason: o.reason };
    else if (o?.kind === "no_refresh_token") facts.refresh = { state: "no_refresh_token", at: o.at };
    return facts;
  }

  /**
   * Whether `credential` is an OAuth access token past its expiry on this manager's clock (providers/
   * index.ts CredentialSource.expired): what {@link ensureFresh} returns when the refresh failed.
   */
  expired(credential: Credential): boolean {
    return credential.type === "oauth" && credential.expiresAt !== undefined && credential.expiresAt <= this.deps.clock.now();
  }

  /** Whether a refresh of the account is running. */
  refreshing(accountId: string): boolean {
    return this.inflight.has(accountId);
  }

  /**
   * SPEC A-5: the credential to send now. Joins a running refresh of the account; refreshes first when
   * the access token expires within 5 minutes (unless the last round failed and is backing off).
   * Never throws: on any refresh failure the current credential is returned (an expired token then
   * earns a 401 and the attempt loop's credential handling).
   */
  async ensureFresh(account: Account, signal?: AbortSignal): Promise<Credential> {
    const cur = this.current(account);
    if (cur.type !== "oauth" || !this.deps.oauthOf(account.providerId)) return cur;
    const running = this.inflight.get(account.id);
    if (running) {
      await raceAbort(running, signal);
      return this.current(account);
    }
    const now = this.deps.clock.now();
    if (cur.expiresAt === undefined || !cur.refreshToken || cur.expiresAt - now > REFRESH_BEFORE_EXPIRY_MS) return cur;
    const last = this.outcomes.get(account.id);
    const fp = credentialFingerprint(cur);
    if (last?.kind === "temporary" && last.retryAt > now) return cur;
    if (last?.kind === "rejected" && last.fp === fp) return cur;
    await raceAbort(this.start(account, "proactive"), signal);
    return this.current(account);
  }

  /**
   * SPEC 6.2/P-7: refresh after a credential failure; resolves true when a new token is in place.
   * One token call per account however many requests ask (see the module comment). `sentWith` is the
   * credential the failed request carried: when it is no longer the current one, a newer token is
   * already in place and no refresh starts; when it is the current one, a refresh starts (or is
   * joined) even right after another. Without `sentWith`, a refresh that succeeded within the grace
   * window is reused.
   */
  async refresh(account: Account, sentWith?: Credential): Promise<boolean> {
    return (await this.refreshReport(account, sentWith)).ok;
  }

  /**
   * {@link refresh}, saying what happened for the request's route trace: a refresh made or joined
   * (with its token calls), a newer token already in place, or why none could be had.
   */
  async refreshReport(account: Account, sentWith?: Credential): Promise<RefreshReport> {
    const cur = this.current(account);
    if (cur.type !== "oauth" || !this.deps.oauthOf(account.providerId)) return { ok: false, note: "not a subscription credential: nothing to refresh", calls: [] };
    const running = this.inflight.get(account.id);
    if (running) return report(await running, "joined the refresh already running: ");
    const now = this.deps.clock.now();
    const fp = credentialFingerprint(cur);
    const last = this.outcomes.get(account.id);
    if (sentWith !== undefined) {
      // Sent with a token that has been replaced since: retry with the current one.
      if (sentWith.type === "oauth" && sentWith.accessToken !== cur.accessToken) return { ok: true, note: "a newer token was already in place (no token call)", calls: [] };
    } else if (last?.kind === "ok" && now - last.at < this.t.graceMs) {
      return { ok: true, note: `the token refreshed ${Math.round((now - last.at) / 1000)} s ago is used (no token call)`, calls: [] };
    }
    if (last?.kind === "rejected" && last.fp === fp) return { ok: false, note: `its refresh token was already rejected (${last.reason}); no token call`, calls: [] };
    if (last?.kind === "temporary" && last.retryAt > now) {
      return { ok: false, note: `the last refresh failed temporarily (${last.reason}); no token call until ${new Date(last.retryAt).toISOString()}`, calls: [] };
    }
    if (!cur.refreshToken) {
      this.outcomes.set(account.id, { kind: "no_refresh_token", at: now, fp });
      return { ok: false, note: "no refresh token to refresh with", calls: [] };
    }
    return report(await this.start(account, "credential failure"));
  }

  /**
   * Quarantines the account's credential by fingerprint (SPEC 6.3: rejected after refresh, or no way
   * to refresh): written through to the store, then the live registry is reloaded. Both the credential
   * in use and the account's own one (when a refreshed one replaced it in memory) are quarantined. A
   * write the store rejects is not tried again: one `error` line per quarantine however many of its
   * fingerprints' writes were rejected (account, reason, the store's first message without the
   * fingerprints; until session 44 a refreshed credential held in memory while the store rejected
   * writes gave two lines) and one {@link CredentialDeps.onLostWrite}; the `warn` "quarantined" line only
   * when a write was kept.
   */
  async quarantine(account: Account, reason: string): Promise<void> {
    const fps = [...new Set([credentialFingerprint(this.current(account)), credentialFingerprint(account.credential)])].filter((f): f is string => !!f);
    let written = false;
    let rejection: unknown;
    const rejected: string[] = [];
    for (const fingerprint of fps) {
      try {
        await this.deps.store.quarantine({ fingerprint, accountId: account.id, reason, since: this.deps.clock.now() });
        written = true;
      } catch (e) {
        if (rejected.length === 0) rejection = e;
        rejected.push(fingerprint);
      }
    }
    if (rejected.length > 0) {
      // Lost: the store keeps no quarantine row (of that credential), and the re-read of the state below does not hold it either.
      this.deps.onLostWrite?.();
      let error = rejection instanceof Error ? rejection.message : String(rejection);
      for (const fingerprint of fps) error = error.split(fingerprint).join("…");
      const which = rejected[0] === fps[0] ? "the refreshed credential in use" : "the account's own credential";
      const msg = written
        ? `the store rejected the quarantine of ${which} (the other one's was written): it is lost (the store keeps no row of it, so neither this instance, which re-reads the state next, nor another holds it; counted in switchyard_store_dropped_total)`
        : "the store rejected a credential quarantine: it is lost (the store keeps no row of it, so neither this instance, which re-reads the state next, nor another holds the quarantine; counted in switchyard_store_dropped_total)";
      this.log("error", msg, { account: account.id, reason, error });
    }
    if (written) this.log("warn", "credential quarantined until a new login or import", { account: account.id, reason });
    await this.reloadQuietly();
  }

  /** Forgets everything about an account's refreshes (a new login or import replaced its credential). */
  forget(accountId: string): void {
    if (this.overrides.delete(accountId)) this.overridesVersion++;
    this.outcomes.delete(accountId);
    this.failures.delete(accountId);
    this.warnedMemoryOnly.delete(accountId);
  }

  /** Starts (or joins) the account's refresh round. */
  private start(account: Account, why: string): Promise<RefreshOutcome> {
    let round = this.inflight.get(account.id);
    if (!round) {
      round = this.lockedRound(account, why).finally(() => this.inflight.delete(account.id));
      this.inflight.set(account.id, round);
    }
    return round;
  }

  /**
   * SPEC D-2: one refresh across every instance on a shared store. The round runs under the store's
   * per-account refresh lock; once it holds the lock it first looks at the stored credential: when
   * another instance has rotated it meanwhile, that credential is adopted and no token call is made.
   */
  private lockedRound(account: Account, why: string): Promise<RefreshOutcome> {
    const store = this.deps.store;
    if (!store.withRefreshLock) return this.round(account, why);
    return store.withRefreshLock(account.id, async () => (await this.adoptStored(account)) ?? this.round(account, why));
  }

  /**
   * The credential another instance stored for this account since ours was issued, adopted: for a
   * stored account its row, for a config-file account the override of the file's current token.
   * Undefined when the store holds nothing newer (or cannot be read).
   */
  private async adoptStored(account: Account): Promise<RefreshOutcome | undefined> {
    const cur = this.current(account);
    if (cur.type !== "oauth") return undefined;
    const baseFp = sha256Hex(account.credential.type === "oauth" ? account.credential.accessToken : "");
    let stored: Credential | undefined;
    try {
      if (account.source === "db") stored = (await this.deps.store.getAccount?.(account.id))?.credential;
      else stored = (await this.deps.store.listCredentialOverrides?.())?.find((o) => o.accountId === account.id && o.baseFingerprint === baseFp)?.credential;
    } catch {
      return undefined;
    }
    if (stored?.type !== "oauth" || stored.accessToken === cur.accessToken) return undefined;
    if (stored.expiresAt !== undefined && cur.expiresAt !== undefined && stored.expiresAt < cur.expiresAt) return undefined;
    this.overrides.set(account.id, { baseFp, credential: stored });
    this.overridesVersion++;
    const outcome: RefreshOutcome = { kind: "ok", at: this.deps.clock.now(), fp: credentialFingerprint(stored), adopted: true };
    this.outcomes.set(account.id, outcome);
    this.failures.delete(account.id);
    this.log("info", "credential adopted: another instance refreshed it", { account: account.id, expiresAt: stored.expiresAt });
    return outcome;
  }

  /**
   * One refresh round, an Effect program: token call (timeout, retried while temporary), then adopt,
   * quarantine or back off. Effect and the token client are loaded first (first refresh only), outside
   * the timed call.
   */
  private async round(account: Account, why: string): Promise<RefreshOutcome> {
    const [{ Duration, Effect, Schedule }] = await Promise.all([loadEffect(), loadTokenClient()]);
    const oauth = this.deps.oauthOf(account.providerId)!;
    const cred = this.current(account) as OAuthCredential;
    const fp = credentialFingerprint(cred);
    /** This round's token calls, for the traces of the requests waiting on it. */
    const calls: TokenCall[] = [];
    const call = Effect.tryPromise({
      try: async (signal) => {
        this.calls.set(account.id, (this.calls.get(account.id) ?? 0) + 1);
        const at = this.deps.clock.now();
        const entry: TokenCall = { at, durationMs: -1 };
        calls.push(entry);
        try {
          return await refreshTokens(oauth.kind, oauth.settings, cred.refreshToken!, { fetchImpl: this.deps.fetchImpl, signal, now: at });
        } catch (e) {
          if (e instanceof OAuthError && e.status !== undefined) entry.status = e.status;
          entry.error = e instanceof Error ? e.message : "refresh failed";
          throw e;
        } finally {
          if (entry.durationMs < 0) entry.durationMs = this.deps.clock.now() - at;
        }
      },
      catch: (e) =>
        e instanceof OAuthError && e.permanent ? new Rejected(e.message) : new Temporary(e instanceof Error ? e.message : "refresh failed"),
    }).pipe(Effect.timeoutFail({ duration: Duration.millis(this.t.refreshTimeoutMs), onTimeout: () => new Temporary("the token endpoint did not answer in time") }));
    const retried = call.pipe(
      Effect.retry({
        schedule: Schedule.exponential(Duration.millis(this.t.retryBaseMs)).pipe(Schedule.intersect(Schedule.recurs(this.t.retries))),
        while: (e) => e._tag === "Temporary",
      }),
    );
    const outcome = await Effect.runPromise(
      retried.pipe(
        Effect.flatMap((tokens) => Effect.promise(() => this.adopt(account, cred, tokens, why))),
        Effect.catchTags({
          Rejected: (e) => Effect.promise(() => this.rejected(account, fp, e.reason)),
          Temporary: (e) => Effect.sync(() => this.temporary(account, fp, e.reason)),
        }),
      ),
    );
    // A call cut off by the round's timeout has not settled yet: it took the timeout.
    for (const c of calls) {
      if (c.durationMs < 0) {
        c.durationMs = this.deps.clock.now() - c.at;
        c.error ??= `no answer within ${this.t.refreshTimeoutMs} ms`;
      }
    }
    return outcome.kind === "no_refresh_token" ? outcome : { ...outcome, calls };
  }

  /** Persists the new credential (durably, for stored accounts) and only then makes it current. */
  private async adopt(account: Account, old: OAuthCredential, tokens: TokenSet, why: string): Promise<RefreshOutcome> {
    const fresh = toCredential(tokens, old);
    if (account.source === "db") {
      try {
        await this.deps.store.updateCredential(account.id, fresh);
      } catch (e) {
        // The new token is still the only live one (the old refresh token may be spent): use it, loudly.
        this.log("error", "could not persist a refreshed credential; it lives in memory until the next login", {
          account: account.id,
          error: e instanceof StoreError ? e.code : "store failure",
        });
      }
    }
    const baseFp = sha256Hex(account.credential.type === "oauth" ? account.credential.accessToken : "");
    if (account.source !== "db") {
      // A config-file account: the file keeps its old token, so the refreshed one is stored beside it
      // (durably, before use) and wins while the file still holds the token it replaced.
      try {
        await this.deps.store.setCredentialOverride?.(account.id, baseFp, fresh);
      } catch (e) {
        if (!this.warnedMemoryOnly.has(account.id)) {
          this.warnedMemoryOnly.add(account.id);
          this.log("error", "could not persist a refreshed config-file credential; it lives in memory until restart", {
            account: account.id,
            error: e instanceof StoreError ? e.code : "store failure",
          });
        }
      }
    }
    this.overrides.set(account.id, { baseFp, credential: fresh });
    this.overridesVersion++;
    const now = this.deps.clock.now();
    const outcome: RefreshOutcome = { kind: "ok", at: now, fp: credentialFingerprint(fresh) };
    this.outcomes.set(account.id, outcome);
    this.failures.delete(account.id);
    this.log("info", "credential refreshed", { account: account.id, reason: why, rotated: Boolean(tokens.refreshToken && tokens.refreshToken !== old.refreshToken), expiresAt: fresh.expiresAt });
    if (account.source === "db") await this.reloadQuietly();
    return outcome;
  }

  private async rejected(account: Account, fp: string | undefined, reason: string): Promise<RefreshOutcome> {
    const outcome: RefreshOutcome = { kind: "rejected", at: this.deps.clock.now(), fp, reason };
    this.outcomes.set(account.id, outcome);
    await this.quarantine(account, `refresh token rejected by the provider: ${reason}`);
    return outcome;
  }

  private temporary(account: Account, fp: string | undefined, reason: string): RefreshOutcome {
    const n = (this.failures.get(account.id) ?? 0) + 1;
    this.failures.set(account.id, n);
    const now = this.deps.clock.now();
    const retryAt = now + Math.min(this.t.backoffMaxMs, this.t.backoffBaseMs * 2 ** (n - 1));
    const outcome: RefreshOutcome = { kind: "temporary", at: now, fp, retryAt, reason };
    this.outcomes.set(account.id, outcome);
    this.log("warn", "credential refresh failed; backing off", { account: account.id, reason, retryAt });
    return outcome;
  }

  private async reloadQuietly(): Promise<void> {
    try {
      await this.deps.reload();
    } catch {
      // the periodic re-read reconciles
    }
  }

  private log(level: string, msg: string, fields: Record<string, unknown>): void {
    this.deps.log?.(JSON.stringify({ level, time: this.deps.clock.now(), msg, ...fields }));
  }
}

/** A refresh round's outcome as a request's {@link RefreshReport}, its note led by `lead`. */
function report(o: RefreshOutcome, lead = ""): RefreshReport {
  const calls = o.kind === "no_refresh_token" ? [] : (o.calls ?? []);
  const n = calls.length === 1 ? "1 token call" : `${calls.length} token calls`;
  switch (o.kind) {
    case "ok":
      return { ok: true, note: `${lead}${o.adopted ? "another instance's refreshed token adopted (no token call)" : `token refreshed (${n})`}`, calls };
    case "temporary":
      return { ok: false, note: `${lead}refresh failed temporarily (${o.reason}; ${n}); no token call until ${new Date(o.retryAt).toISOString()}`, calls };
    case "rejected":
      return { ok: false, note: `${lead}refresh token rejected (${o.reason}; ${n}); credential quarantined`, calls };
    case "no_refresh_token":
      return { ok: false, note: `${lead}no refresh token to refresh with`, calls };
  }
}

async function raceAbort<T>(p: Promise<T>, signal?: AbortSignal): Promise<T | undefined> {
  if (!signal) return p;
  if (signal.aborted) return undefined;
  let onAbort!: () => void;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([p, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** What {@link SubscriptionHealth} delegates to (the account registry). */
export interface HealthBase extends AccountHealth {
  /** Records a quota window read from a reply to a call sent with `from` (the registry's `setQuota`). */
  setQuota(q: QuotaWindow, from?: Account): void;
}

/**
 * The AccountHealth the attempt loop uses: the registry's, plus OAuth refresh (P-7), credential
 * quarantine (6.3) and quota windows read from every reply's headers (P-5).
 */
export class SubscriptionHealth implements AccountHealth {
  constructor(
    private readonly base: HealthBase,
    private readonly credentials: CredentialManager,
    private readonly clock: Clock,
  ) {}

  /**
   * The registry's failure handling, except for a credential rejection of an OAuth account: a
   * refresh that failed temporarily cools the account down until its next refresh attempt; otherwise
   * (rejected after refresh, refresh token rejected, nothing to refresh with) the credential is
   * quarantined by fingerprint instead of locking the account (SPEC 6.3).
   */
  failure(account: Account, provider: ProviderInfo, model: string, c: Classification, opts: { retrying?: boolean } = {}): void {
    if (c.account.type !== "credential" || opts.retrying || !this.credentials.manages(account)) {
      this.base.failure(account, provider, model, c, opts);
      return;
    }
    const o = this.credentials.lastOutcome(account.id);
    if (o?.kind === "temporary" && o.retryAt > this.clock.now()) {
      this.base.failure(account, provider, model, {
        ...c,
        account: { type: "cooldown_until", scope: "account", until: o.retryAt, reason: `credential refresh failed temporarily (${o.reason})` },
      });
      return;
    }
    this.base.failure(account, provider, model, c, { retrying: true });
    const reason =
      o?.kind === "rejected"
        ? `refresh token rejected: ${o.reason}`
        : o?.kind === "no_refresh_token"
          ? `${c.account.reason}; no refresh token to recover with`
          : `${c.account.reason} after a refresh`;
    void this.credentials.quarantine(account, reason);
  }

  success(account: Account, provider: ProviderInfo, model: string, latencyMs: number, now?: number): void {
    this.base.success(account, provider, model, latencyMs, now);
  }

  quotaHealthy(account: Account, model: string): boolean | undefined {
    return this.base.quotaHealthy?.(account, model);
  }

  tokenWindowLimit(account: Account, model: string): number | undefined {
    return this.base.tokenWindowLimit?.(account, model);
  }

  circuitOpen(providerId: string): boolean {
    return this.base.circuitOpen(providerId);
  }

  circuitOpenUntil(providerId: string): number | undefined {
    return this.base.circuitOpenUntil?.(providerId);
  }

  refresh(account: Account, sentWith?: Credential): Promise<RefreshReport> {
    return this.credentials.refreshReport(account, sentWith);
  }

  /** The account's refresh back-off after a temporary failure (AccountHealth.refreshBackoff). */
  refreshBackoff(account: Account): { until: number; reason: string } | undefined {
    const o = this.credentials.lastOutcome(account.id);
    return o?.kind === "temporary" && o.retryAt > this.clock.now() ? { until: o.retryAt, reason: `the token refresh failed temporarily (${o.reason})` } : undefined;
  }

  /**
   * SPEC P-5: quota windows from every reply's headers, stored per account (not those of a call sent
   * before the account's key or login changed: registry.ts `setQuota`). A reply without any quota
   * header (Gemini's, an OpenAI-compatible server's) costs one pass over its header names: no context,
   * list or clock read (docs/performance.md item 229).
   */
  observe(account: Account, _provider: ProviderInfo, model: string, _status: number, headers: Headers): void {
    const families = quotaFamilies(headers);
    if (families === 0) return;
    for (const w of readQuotaWindows(headers, { accountId: account.id, model, now: this.clock.now() }, families)) this.base.setQuota(w, account);
  }
}
