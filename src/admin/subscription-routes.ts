/**
 * Subscription routes of the admin API (SPEC 9.3, P-6, P-9), mounted through AdminDeps.extend so
 * the admin guard applies:
 *
 * - `GET /admin/api/oauth/{kind}`: the OAuth client of the subscription providers of a kind
 *   (`claude-code`, `codex`) — endpoints, public client id, scopes, redirect URI — so
 *   `switchyard login` runs the flow the running instance is configured for. No secrets.
 * - `POST /admin/api/accounts`: stores a subscription account's tokens from `switchyard login` or
 *   `switchyard import` (valibot-validated; durable, DB file mode 0600). A login of one vendor is
 *   refused (400 `wrong_provider_kind`) for a provider of the other kind — its tokens would be sent
 *   to the other vendor's API and token endpoint — whether the body's `kind` or the access token's
 *   evident shape ({@link tokenVendor}) says so; so is a credential already expired without a
 *   refresh token (400 `credential_expired`). Replacing an account's
 *   credential lifts the quarantine of the new credential and the account's lock and cooldowns
 *   (published as `unlock` / `cooldown_end` "… cleared by a new login|import", registry `lift`), and
 *   starts a model discovery for it; it also enables a disabled account (`reenabled` says so) and
 *   names the other accounts that hold the same login (`sameLogin`: one refresh token, which the first
 *   refresh rotates away from the other). The answer never echoes a token.
 * - `DELETE /admin/api/accounts/{id}`: removes a stored account (from `switchyard login` or `import`) with
 *   its state (cooldowns, locks, models, bindings); 409 for an account of the config file (remove it
 *   there), 404 when no stored account has the id. Requests already running on it finish.
 * - `POST /admin/api/discovery` `{provider?, account?}`: runs model discovery now and answers each
 *   account's result; 404 for a provider or account id the gateway does not know.
 * - `GET /admin/api/quota`: the live quota windows per account (SPEC P-5), for `switchyard usage`.
 *
 * Body of `POST /admin/api/accounts`:
 * ```json
 * { "provider": "cx",                 // provider id, or a kind: claude-code | codex
 *   "kind": "codex",                  // optional: whose login the credential is; must be the provider's kind
 *   "id": "cx-me",                    // optional; default <provider>-<e-mail name> or <provider>-<origin>
 *   "credential": { "type": "oauth", "access_token": "…", "refresh_token": "…",
 *                   "expires_at": 1767225600000, "account_id": "…" },   // expires_at: ms since the epoch
 *   "priority": 0, "max_concurrency": 3, "email": "me@example.com", "plan": "max", "origin": "login" }
 *   // email and plan are kept with the credential for the Accounts card (not secrets)
 * ```
 */
import type { Elysia } from "elysia";
import * as v from "valibot";
import type { Account, Clock } from "../../pipeline/ports.ts";
import type { CredentialManager } from "../accounts/credentials.ts";
import { shownQuotaWindow } from "../accounts/quota.ts";
import type { AccountRegistry } from "../accounts/registry.ts";
import type { ConfiguredProvider } from "../config/types.ts";
import type { Discovery } from "../providers/discovery.ts";
import { credentialFingerprint } from "../store/secrets.ts";
import { StoreError, type Store } from "../store/types.ts";
import { codexIdentity, isSubscription, tokenVendor } from "../oauth/protocol.ts";
import { sameLogin as isSameLogin } from "../oauth/login-identity.ts";
import { formatElapsed } from "../../formats/wait-words.ts";
import { accountQueue, ConfigWriter } from "./config-writer.ts";
import { adminError, implicitAccountError, readBody, storeErrorStatus, strictBody } from "./replies.ts";

/** What the subscription routes read and change. */
export interface SubscriptionAdminDeps {
  /** `server.body_timeout_ms` in force: how long a request body may take to arrive (src/admin/replies.ts `readJson`); default 120 s. */
  bodyTimeoutMs?: () => number;
  store: Store;
  providers: () => Map<string, ConfiguredProvider>;
  /** Ids of the accounts declared in the config file (read-only through the API). */
  configAccountIds: () => Set<string>;
  registry: Pick<AccountRegistry, "list" | "implicitAccounts" | "quota" | "find" | "lift" | "forgetQuotas">;
  credentials: Pick<CredentialManager, "forget" | "current">;
  discovery: Pick<Discovery, "run">;
  /** Re-reads accounts and their state into the live registry. */
  reload: () => Promise<void>;
  clock: Clock;
  /** Runs a login or import and a removal one at a time with the other logins, imports and removals (the `accounts` queue of src/admin/config-writer.ts) and with the account's own disable and enable (its own queue); a writer of their own when not given. */
  writer?: ConfigWriter;
}

/** The bounds of an account's `priority`, as the config file's `accounts[].priority` has them. */
export const PRIORITY_MIN = -1_000_000;
export const PRIORITY_MAX = 1_000_000;

/**
 * The CLI's `--priority N` of `login` and `import`: the account's place in its provider's list, lower
 * first (the config file's `accounts[].priority`); a whole number from {@link PRIORITY_MIN} to
 * {@link PRIORITY_MAX}. Undefined when absent; a sentence saying what is wrong otherwise.
 */
export function parsePriority(text: string | undefined): { value?: number; problem?: string } {
  if (text === undefined) return {};
  const n = /^-?\d{1,7}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isInteger(n) || n < PRIORITY_MIN || n > PRIORITY_MAX) {
    return { problem: `--priority ${JSON.stringify(text)}: a priority is a whole number from ${PRIORITY_MIN} to ${PRIORITY_MAX} (lower comes first, as accounts[].priority in the config file)` };
  }
  return { value: n };
}

/** An account name (`id`, the CLI's `--account`). */
export const ACCOUNT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** What {@link ACCOUNT_ID} allows, in words (the 400's message adds the field's name). */
export const ACCOUNT_ID_RULE = "1–64 letters, digits, dot, dash or underscore, starting with a letter or digit";

/** The body of `POST /admin/api/accounts`. */
export const AccountCreate = strictBody({
  provider: v.pipe(v.string("provider must be a provider id or kind"), v.minLength(1, "provider must not be empty")),
  kind: v.optional(v.picklist(["claude-code", "codex"], "kind is claude-code or codex (whose login the credential is)")),
  id: v.optional(v.pipe(v.string(), v.regex(ACCOUNT_ID, ACCOUNT_ID_RULE))),
  credential: strictBody({
    type: v.literal("oauth", 'credential.type must be "oauth"'),
    access_token: v.pipe(v.string("credential.access_token must be a string"), v.minLength(1, "credential.access_token must not be empty")),
    refresh_token: v.optional(v.pipe(v.string(), v.minLength(1))),
    expires_at: v.optional(v.pipe(v.number("credential.expires_at must be ms since the epoch"), v.integer(), v.minValue(0))),
    account_id: v.optional(v.pipe(v.string(), v.minLength(1))),
  }, "the credential"),
  priority: v.optional(v.pipe(v.number("priority must be a whole number"), v.integer("priority must be a whole number"), v.minValue(PRIORITY_MIN, `priority must be at least ${PRIORITY_MIN}`), v.maxValue(PRIORITY_MAX, `priority must be at most ${PRIORITY_MAX}`))),
  max_concurrency: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  email: v.optional(v.string()),
  /** The login's plan (Claude's subscriptionType, the ChatGPT plan type), shown on the Accounts card. */
  plan: v.optional(v.pipe(v.string(), v.maxLength(64))),
  origin: v.optional(v.picklist(["login", "import"], "origin is login or import")),
}, "an account");

/** The body of `POST /admin/api/discovery`. */
export const DiscoveryRequest = strictBody({
  provider: v.optional(v.string()),
  account: v.optional(v.string()),
}, "a discovery request");

/** The subscription provider a request names (its id, or the first of a kind, built-in ids first). */
export function subscriptionProvider(providers: Map<string, ConfiguredProvider>, name: string): ConfiguredProvider | undefined {
  const byId = providers.get(name);
  if (byId) return isSubscription(byId.kind) ? byId : undefined;
  if (!isSubscription(name)) return undefined;
  const all = [...providers.values()].filter((p) => p.kind === name);
  return all.find((p) => p.source === "builtin") ?? all[0];
}

/**
 * The 400 for a login of `vendor` sent to a provider of the other kind, naming the providers it can
 * go to (or saying that none is configured).
 */
function wrongKind(providers: Map<string, ConfiguredProvider>, provider: ConfiguredProvider, vendor: string): Response {
  const fit = [...providers.values()].filter((p) => p.kind === vendor).map((p) => p.id);
  const where = fit.length ? `it goes to a ${vendor} provider: ${fit.join(", ")} (--provider ${fit[0]})` : `no ${vendor} provider is configured`;
  return adminError(
    400,
    `Provider ${provider.id} is a ${provider.kind} provider; a ${vendor} login cannot be used there (its tokens would be sent to the other vendor): ${where}.`,
    "provider",
    "wrong_provider_kind",
  );
}

/**
 * The 400 for a credential whose access token has expired and that holds no refresh token to renew it
 * with: stored, it could only be refused by the provider and quarantined (newuser12b H11).
 */
function expiredLogin(provider: ConfiguredProvider, expiredForMs: number): Response {
  const cli = provider.kind === "claude-code" ? "Claude Code (`claude`, then /login)" : "Codex (`codex login`)";
  return adminError(
    400,
    `This login expired ${formatElapsed(expiredForMs)} ago and holds no refresh token, so it can neither be used nor renewed: log in again with ${cli} and import it again, or run \`switchyard login ${provider.kind}\`.`,
    "credential.expires_at",
    "credential_expired",
  );
}

/** A default account id: `<provider>-<local part of the e-mail>`, else `<provider>-<origin>`. */
export function defaultAccountId(providerId: string, email: string | undefined, origin: string | undefined): string {
  const local = email?.split("@")[0]?.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[^a-z0-9]+/, "").slice(0, 40);
  return `${providerId}-${local || origin || "login"}`;
}

/** Adds the subscription routes (use inside AdminDeps.extend). */
export function subscriptionAdmin(deps: SubscriptionAdminDeps): (app: Elysia<"/admin/api">) => Elysia<"/admin/api"> {
  const writer = deps.writer ?? new ConfigWriter();
  return (app) =>
    app
      .get("/oauth/:kind", ({ params }) => {
        const providers = [...deps.providers().values()].filter((p) => p.kind === params.kind || p.id === params.kind);
        const subs = providers.filter((p) => isSubscription(p.kind) && p.oauth);
        if (subs.length === 0) return adminError(404, `No subscription provider of kind or id ${params.kind}.`);
        subs.sort((a, b) => (a.source === "builtin" ? -1 : 0) - (b.source === "builtin" ? -1 : 0));
        return { providers: subs.map((p) => ({ id: p.id, kind: p.kind, oauth: p.oauth })) };
      })
      .post("/accounts", async ({ request, set }) => {
        const parsed = await readBody(request, AccountCreate, deps.bodyTimeoutMs?.());
        if (!parsed.ok) return parsed.response;
        const input = parsed.value;
        const provider = subscriptionProvider(deps.providers(), input.provider);
        if (!provider) return adminError(404, `No subscription provider (claude-code or codex) named ${input.provider}.`);
        // Both are checked: a body's `kind` naming this provider's kind does not make the other vendor's token fit.
        const vendor = [input.kind, tokenVendor(input.credential.access_token)].find((k) => k !== undefined && k !== provider.kind);
        if (vendor) return wrongKind(deps.providers(), provider, vendor);
        const expiredFor = deps.clock.now() - (input.credential.expires_at ?? Infinity);
        if (expiredFor >= 0 && !input.credential.refresh_token) return expiredLogin(provider, expiredFor);
        const id = input.id ?? defaultAccountId(provider.id, input.email, input.origin);
        // After the account changes before it, and the changes of this account (its disable, enable: config-writer.ts).
        return writer.run(["accounts", accountQueue(id)], async () => {
          if (deps.configAccountIds().has(id)) return adminError(409, `Account ${id} is declared in the config file and is read-only here; choose another --account name.`);
          const existing = await deps.store.getAccount(id);
          if (existing && existing.providerId !== provider.id) return adminError(409, `Account ${id} belongs to provider ${existing.providerId}, not ${provider.id}.`);
          let unquarantined = false;
          const c = input.credential;
          const credential: Extract<Account["credential"], { type: "oauth" }> = { type: "oauth", accessToken: c.access_token };
          if (c.refresh_token) credential.refreshToken = c.refresh_token;
          if (c.expires_at !== undefined) credential.expiresAt = c.expires_at;
          // Codex: the ChatGPT account id is also a claim of the access token (codex-rs token_data.rs).
          const accountId = c.account_id ?? (provider.kind === "codex" ? codexIdentity(undefined, c.access_token).accountId : undefined);
          if (accountId) credential.accountId = accountId;
          // Shown on the Accounts card (never a token): the e-mail and plan the login or import read.
          const email = input.email ?? (provider.kind === "codex" ? codexIdentity(undefined, c.access_token).email : undefined);
          if (email) credential.email = email.slice(0, 254);
          if (input.plan) credential.plan = input.plan;
          // The same login under another name: one rotating refresh token for two accounts (newuser12b H2).
          const fingerprint = credentialFingerprint(credential);
          const sameLogin = deps.registry
            .list()
            .filter((a) => a.id !== id && a.credential.type === "oauth" && credentialFingerprint(a.credential) === fingerprint)
            .map((a) => a.id);
          try {
            await deps.store.upsertAccount({
              id,
              providerId: provider.id,
              priority: input.priority ?? existing?.priority ?? 0,
              maxConcurrency: input.max_concurrency ?? existing?.maxConcurrency,
              proxy: existing?.proxy,
              credential,
              disabled: false,
            });
            // A new login or import replaces the credential: whatever held the account back goes.
            const fp = credentialFingerprint(credential);
            if (fp) {
              const state = await deps.store.loadAccountState();
              unquarantined = state.quarantined.some((q) => q.fingerprint === fp);
              await deps.store.unquarantine(fp);
            }
            // Announced as what happened here (a new login or import), not as cleared elsewhere by the re-read.
            // Another login may be another subscription: its quota windows are not the old one's. The same login
            // is told by its identity (account id, e-mail, subject: login-identity.ts), so one re-imported from an
            // older file (a refresh token since rotated) keeps them; without one, by the stored credential or the
            // current one (the store may have refused a rotated one, which then lives in memory: credentials.current).
            const relogged = existing !== undefined && !isSameLogin(existing.credential, credential) && !isSameLogin(deps.credentials.current(existing), credential);
            await deps.registry.lift(id, `cleared by a new ${input.origin ?? "credential"}`, async () => {
              await deps.store.clearLock(id);
              await deps.store.clearCooldown(id);
              // Memory at once, the store's rows through the registry's state writes (a refusal written or tried again).
              if (relogged) deps.registry.forgetQuotas(id);
              deps.credentials.forget(id);
              await deps.reload();
            });
          } catch (e) {
            if (e instanceof StoreError) return adminError(storeErrorStatus(e.code), e.message);
            throw e;
          }
          void deps.discovery.run({ accountId: id }).catch(() => {});
          set.status = existing ? 200 : 201;
          return { id, provider: provider.id, kind: provider.kind, created: !existing, unquarantined, reenabled: existing?.disabled === true, sameLogin, expiresAt: credential.expiresAt ?? null };
        });
      }, { parse: "none" })
      .delete("/accounts/:id", ({ params }) =>
        writer.run(["accounts", accountQueue(params.id)], async () => {
          const id = params.id;
          if (deps.configAccountIds().has(id)) return adminError(409, `Account ${id} is declared in the config file and is read-only here; remove it from the file.`, null, "read_only");
          const implicit = deps.registry.find(id);
          if (implicit?.implicit) return implicitAccountError(implicit.account);
          let removed = false;
          // Its cooldowns and lock go with it: announced as removed here, not as cleared elsewhere by the re-read.
          await deps.registry.lift(id, "cleared: the account was removed", async () => {
            if (!(removed = await deps.store.deleteAccount(id))) return;
            deps.credentials.forget(id);
            await deps.reload();
          });
          if (!removed) return adminError(404, `No stored account ${id}.`);
          return { removed: id };
        }),
      )
      .post("/discovery", async ({ request }) => {
        const parsed = await readBody(request, DiscoveryRequest, deps.bodyTimeoutMs?.(), {});
        if (!parsed.ok) return parsed.response;
        // An id the gateway does not know is a 404, as for every admin route naming an object (a typo
        // answered 200 {"results": []} read as nothing to discover).
        const { provider, account } = parsed.value;
        if (provider !== undefined && !deps.providers().has(provider)) return adminError(404, `No provider ${provider}.`, "provider");
        if (account !== undefined && !deps.registry.find(account)) return adminError(404, `No account ${account}.`, "account");
        const results = await deps.discovery.run({ providerId: provider, accountId: account });
        return { results };
      }, { parse: "none" })
      .get("/quota", () => {
        const now = deps.clock.now();
        return {
          now,
          accounts: [...deps.registry.list(), ...deps.registry.implicitAccounts()].map((a) => ({
            id: a.id,
            providerId: a.providerId,
            windows: deps.registry.quota.windows(a.id, now).map(shownQuotaWindow), // never the store's keyHash
          })),
        };
      }) as never;
}
