/**
 * Admin routes for watching and steering the running gateway (SPEC 9.3, 9.4), mounted through
 * AdminDeps.extend so the admin guard applies:
 *
 * - `GET /admin/api/events`: live events as Server-Sent Events (events-stream.ts).
 * - `GET /admin/api/providers`: ids, kinds, formats, base URLs, configured and discovered models,
 *   account ids and circuit state per provider; never credentials.
 * - `POST /admin/api/accounts/{id}/test`: one minimal upstream call (account-test.ts).
 * - `POST /admin/api/accounts/{id}/restore`: restores the account's removed account/model pairings now.
 * - `GET /admin/api/alerts`: the alerts this instance raised lately (src/alerts/recent-alerts.ts).
 * - `POST /admin/api/accounts/{id}/unlock`: clears the account's whole-account lock now (SPEC 6.3).
 * - `POST /admin/api/providers/{id}/close-circuit`: closes the provider's circuit now (SPEC 6.3).
 *
 * The JSON shapes are in the OpenAPI document (openapi.ts, served at `/admin/api/openapi.json`),
 * the contract the dashboard codes against.
 */
import { hostname } from "node:os";
import type { Elysia } from "elysia";
import * as v from "valibot";
import { scrubText, type ExecutorFor } from "../../pipeline/index.ts";
import type { Clock, RouteTrace } from "../../pipeline/ports.ts";
import { SHARED_CONFIG_MAX_AGE_MS } from "../shared-config.ts";
import type { AccountRegistry } from "../accounts/registry.ts";
import type { RuntimeConfig } from "../config/types.ts";
import type { EventBus } from "../events/bus.ts";
import type { Store } from "../store/types.ts";
import type { Discovery } from "../providers/discovery.ts";
import { chooseTestModel, lastServedModel, testAccount, type AccountTestResult } from "./account-test.ts";
import type { FlightRecorder } from "./flight-recorder.ts";
import type { RecentAlert } from "../alerts/recent-alerts.ts";
import { eventStream, EventsQuery } from "./events-stream.ts";
import { adminError, parseInput, readBody, strictBody } from "./replies.ts";
import { shownBaseUrl } from "../show-url.ts";

/** What the control routes read. */
export interface ControlDeps {
  /** `server.body_timeout_ms` in force: how long a request body may take to arrive (src/admin/replies.ts `readJson`); default 120 s. */
  bodyTimeoutMs?: () => number;
  bus: EventBus;
  registry: AccountRegistry;
  /** The configuration in force: its providers, and the combos and aliases an account test's model may come from. */
  config: () => Pick<RuntimeConfig, "providers" | "combos" | "aliases">;
  /**
   * Models discovered per provider (SPEC P-6, `publishedAll`), and the models an account's upstream
   * lists now (`advertised`: the account test's offer when nothing else names a model; nothing stored).
   */
  discovery: Pick<Discovery, "publishedAll" | "advertised">;
  executorFor: ExecutorFor;
  clock: Clock;
  secrets: () => Iterable<string>;
  recorder: FlightRecorder;
  /**
   * The usage store: whether it holds a route trace of a route or request id (the recording's 404 says
   * which case it is), and the model an account last served (its test's default when none is configured).
   */
  store: Pick<Store, "getTrace" | "recentCalls" | "otherInstanceConfigs">;
  /** This process's instance id (RouteTrace.instanceId): a call another instance served names that one. */
  instanceId?: string;
  /** The alerts this instance raised lately, newest first (SPEC 9.7). */
  recentAlerts?: () => RecentAlert[];
  /** Whether a request (with its peer address) may still use the admin API: open event streams re-ask. */
  allowed?: (request: Request, peer: string | undefined) => boolean;
  /** Aborts when the gateway begins to stop: open event streams then end (see EventStreamOptions.stopping). */
  stopping?: AbortSignal;
}

/**
 * The instance that served a call, when it is another one on the shared store: the trace's name and id,
 * and the URL it published in `instance_configs` (src/shared-config.ts) within
 * {@link SHARED_CONFIG_MAX_AGE_MS}; undefined when this instance served it (or the trace names none).
 */
async function otherServer(deps: ControlDeps, trace: RouteTrace): Promise<{ name?: string; id: string; url?: string } | undefined> {
  if (!trace.instanceId || !deps.instanceId || trace.instanceId === deps.instanceId) return undefined;
  const others = await Promise.resolve(deps.store.otherInstanceConfigs?.(SHARED_CONFIG_MAX_AGE_MS)).catch(() => undefined);
  const label = others?.find((o) => o.instanceId === trace.instanceId)?.label;
  const url = label && reachableUrl(label, trace.instance);
  return { id: trace.instanceId, ...(trace.instance ? { name: trace.instance } : {}), ...(url ? { url } : {}) };
}

/** Host names that reach only the machine they are used on (a bind-all address is no address to call). */
const LOCAL_HOSTS = new Set(["0.0.0.0", "[::]", "127.0.0.1", "[::1]", "localhost"]);

/**
 * The URL to ask an instance at, from the URL it published (its bind address: `http://0.0.0.0:P` when it
 * listens on every interface, `http://127.0.0.1:P` behind a proxy) and its name (`HOST:PORT`, the
 * trace's `instance`): a bind-all or loopback address on another host becomes that host's name with the
 * same port and scheme (review20 R2: it sent the operator to their own machine); on this host, or with
 * no name, the published URL as it is.
 */
export function reachableUrl(published: string, name: string | undefined): string {
  let u: URL;
  try {
    u = new URL(published);
  } catch {
    return published;
  }
  const host = name?.slice(0, name.lastIndexOf(":"));
  if (!LOCAL_HOSTS.has(u.hostname) || !host || host === hostname()) return published;
  u.hostname = host;
  return u.origin;
}

/** At most this many of the models an account's upstream lists are offered in a test's 400 (`models`). */
export const MAX_OFFERED_MODELS = 200;

/** Body of `POST /accounts/{id}/test` (the body itself is optional). */
export const AccountTestBody = strictBody({
  model: v.optional(v.pipe(v.string("model must be a string"), v.minLength(1, "model must not be empty"), v.description("Upstream model id (default: the provider's first configured or discovered model, else one a combo or alias routes to it, else the one the account last served)."))),
}, "an account test");

/** Body of `POST /accounts/{id}/restore` (the body itself is optional). */
export const AccountRestoreBody = strictBody({
  model: v.optional(v.pipe(v.string("model must be a string"), v.minLength(1, "model must not be empty"), v.description("The upstream model whose pairing to restore (default: every removed pairing of the account)."))),
}, "an account restore");

/** The answer of `POST /accounts/{id}/restore`. */
export const AccountRestoreReply = v.object({
  id: v.string(),
  restored: v.pipe(v.array(v.string()), v.description("The models whose removed pairing was restored, sorted; empty when none was removed.")),
});

/** One provider as `GET /providers` lists it. */
export const ProviderView = v.object({
  id: v.string(),
  kind: v.string(),
  format: v.string(),
  baseUrl: v.string(),
  source: v.picklist(["builtin", "config", "db"]),
  models: v.record(v.string(), v.record(v.string(), v.unknown())),
  discoveredModels: v.array(v.string()),
  accounts: v.array(v.string()),
  circuit: v.object({ state: v.picklist(["closed", "open", "half-open"]), openUntil: v.optional(v.number()), consecutive5xx: v.number() }),
});

/** The answer of `GET /providers`. */
export const ProvidersReply = v.object({ providers: v.array(ProviderView) });

/** The answer of `POST /accounts/{id}/test`. */
export const AccountTestReply = v.object({
  ok: v.boolean(),
  status: v.pipe(v.number(), v.description("HTTP status of the upstream reply; 0 when none came (connection refused, timeout).")),
  latency_ms: v.number(),
  model: v.string(),
  model_from: v.pipe(
    v.string(),
    v.description('Where `model` came from: "the request", "the provider\'s models", "the account\'s discovered models", "the provider\'s discovered models", "combo NAME", "alias NAME" or "its last served request".'),
  ),
  error: v.optional(v.string()),
  lock: v.optional(
    v.pipe(
      v.object({ reason: v.string(), until: v.nullable(v.number()), note: v.string() }),
      v.description("The account's whole-account lock, which a test does not lift (a passing test included): its reason, end (null: until changed) and what to do (unlock, or replace the key)."),
    ),
  ),
});

/** The answer of `POST /providers/{id}/close-circuit`. */
const CircuitCloseReply = v.object({
  provider: v.string(),
  closed: v.pipe(
    v.nullable(v.object({ state: v.picklist(["open", "half-open"]), reason: v.string(), openUntil: v.pipe(v.number(), v.description("When its open period ended or would have (ms since the epoch).")) })),
    v.description("The circuit as it was when closed; null: none was open (nothing changed)."),
  ),
});

/** The answer of `POST /accounts/{id}/unlock`. */
export const AccountUnlockReply = v.object({
  id: v.string(),
  unlocked: v.pipe(
    v.nullable(v.object({ reason: v.string(), until: v.nullable(v.number()) })),
    v.description("The lock that was cleared (its reason, and its end: null for one until changed); null when the account was not locked."),
  ),
});

const RecordedBodySchema = v.object({
  body: v.pipe(v.string(), v.description("The body as text, secrets scrubbed, cut at max_body_bytes.")),
  bytes: v.pipe(v.number(), v.description("Bytes of the whole body.")),
  truncated: v.boolean(),
  events: v.optional(v.array(v.object({ event: v.string(), data: v.string() }))),
});

/** The answer of `GET /calls/{id}/recording`. */
export const RecordingReply = v.object({
  requestId: v.string(),
  routeId: v.string(),
  at: v.number(),
  endpoint: v.string(),
  clientFormat: v.string(),
  requestedModel: v.string(),
  transport: v.pipe(
    v.picklist(["http", "websocket"]),
    v.description("How the request came: http, or websocket (a frame on Codex's Responses WebSocket): then a committed reply is the JSON frames the socket sent, one a line in response.body and listed in response.frames (not SSE), and a refusal before the first event is the HTTP answer the socket sent as one error frame."),
  ),
  client: RecordedBodySchema,
  attempts: v.array(
    v.object({
      n: v.number(),
      target: v.string(),
      accountId: v.string(),
      upstreamFormat: v.string(),
      status: v.optional(v.number()),
      request: RecordedBodySchema,
      reply: RecordedBodySchema,
    }),
  ),
  response: v.object({
    ...RecordedBodySchema.entries,
    status: v.number(),
    frames: v.optional(v.pipe(v.array(v.string()), v.description("A Responses WebSocket reply's frames as sent, in order, each a JSON text (one per event); absent over HTTP."))),
  }),
});

/** Adds the control routes to the admin app (use inside AdminDeps.extend). */
export function controlRoutes(deps: ControlDeps): (app: Elysia<"/admin/api">) => Elysia<"/admin/api"> {
  return (app) =>
    app
      .get("/events", ({ request, query, server }) => {
        const q = parseInput(EventsQuery, query, "query");
        if (!q.ok) return q.response;
        const types = q.value.types ? new Set(q.value.types.split(",")) : undefined;
        const peer = (server as { requestIP(r: Request): { address: string } | null } | null)?.requestIP(request)?.address;
        const allowed = deps.allowed;
        return eventStream(deps.bus, { types, signal: request.signal, now: () => deps.clock.now(), allowed: allowed && (() => allowed(request, peer)), stopping: deps.stopping });
      })
      .get("/alerts", () => ({ alerts: deps.recentAlerts?.() ?? [] }))
      .get("/providers", () => {
        const discovered = deps.discovery.publishedAll();
        const accounts = [...deps.registry.list(), ...deps.registry.implicitAccounts()];
        return {
          providers: [...deps.config().providers.values()].map((p) => ({
            id: p.id,
            kind: p.kind,
            format: p.format,
            baseUrl: shownBaseUrl(p.baseUrl), // user info and query values masked: they can be credentials
            source: p.source,
            models: p.models,
            discoveredModels: discovered.get(p.id) ?? [],
            accounts: accounts.filter((a) => a.providerId === p.id).map((a) => a.id),
            circuit: deps.registry.circuitState(p.id),
          })),
        };
      })
      .get("/calls/:id/recording", async ({ params }) => {
        // Elysia hands path parameters over percent-decoded.
        const id = params.id;
        const rec = deps.recorder.get(id);
        if (rec) return rec;
        const trace = await Promise.resolve(deps.store.getTrace(id)).catch(() => undefined);
        return adminError(404, deps.recorder.missing(id, trace !== undefined, trace && (await otherServer(deps, trace))), "id");
      })
      .post(
        "/accounts/:id/test",
        async ({ params, request }) => {
          // Elysia hands path parameters over percent-decoded (decoding again would fail on a "%").
          const id = params.id;
          // an implicit keyless account too: the call goes out without a key, as its requests do
          const account = deps.registry.find(id)?.account;
          if (!account) return adminError(404, `No account ${id}.`, "id");
          const body = await readBody(request, AccountTestBody, deps.bodyTimeoutMs?.(), {});
          if (!body.ok) return body.response;
          const config = deps.config();
          const provider = config.providers.get(account.providerId);
          if (!provider) return adminError(409, `Account ${id} names provider ${account.providerId}, which is not configured.`);
          const choice = body.value.model
            ? { model: body.value.model, from: "the request" }
            : (chooseTestModel(provider, account, { discovered: deps.discovery.publishedAll().get(provider.id) ?? [], combos: config.combos.values(), aliases: config.aliases }) ??
              (await lastServedModel(deps.store, account, provider, deps.clock.now())));
          if (!choice) {
            // Nothing names a model: ask the upstream which ones the account may use, and offer them.
            const listed = await deps.discovery.advertised(account, provider);
            if (listed.error) listed.error = scrubText(listed.error, deps.secrets());
            const known = `No model is known for provider ${provider.id}: its config entry lists no models, none were discovered, no combo or alias routes to it, and account ${id} served none in the last 30 days`;
            const offer = listed.models?.slice(0, MAX_OFFERED_MODELS) ?? [];
            return adminError(
              400,
              offer.length > 0
                ? `${known}. Its upstream lists ${listed.models!.length === 1 ? "one model" : `${listed.models!.length} models`} (${offer.slice(0, 5).join(", ")}${listed.models!.length > 5 ? ", …" : ""}): name the one to test with, as {"model": "…"}.`
                : `${known}, and its upstream's model list could not be read (${listed.error ?? "no answer"}). Name the upstream model to test with, as {"model": "…"}.`,
              "model",
              "model_required",
              offer.length > 0 ? { models: offer } : { models: [], models_error: listed.error ?? "no answer" },
            );
          }
          return withLockNote(await testAccount(deps, provider, account, choice), deps.registry.snapshot().locks.find((l) => l.accountId === id), id);
        },
        { parse: "none" },
      )
      .post(
        "/accounts/:id/restore",
        async ({ params, request }) => {
          const id = params.id; // percent-decoded by Elysia
          if (!deps.registry.find(id)) return adminError(404, `No account ${id}.`, "id");
          const body = await readBody(request, AccountRestoreBody, deps.bodyTimeoutMs?.(), {});
          if (!body.ok) return body.response;
          return { id, restored: await deps.registry.restorePairings(id, body.value.model, "restored through the admin API") };
        },
        { parse: "none" },
      )
      .post("/accounts/:id/unlock", async ({ params }) => {
        const id = params.id; // percent-decoded by Elysia
        if (!deps.registry.find(id)) return adminError(404, `No account ${id}.`, "id");
        const held = await deps.registry.unlock(id);
        return { id, unlocked: held ? { reason: held.reason, until: held.until } : null };
      })
      .post("/providers/:id/close-circuit", async ({ params }) => {
        const id = params.id; // percent-decoded by Elysia
        if (!deps.config().providers.has(id)) return adminError(404, `No provider ${id}.`, "id");
        const held = await deps.registry.closeCircuit(id);
        return { provider: id, closed: held ?? null };
      }) as never;
}

/**
 * An account test's answer with the account's lock, which the test does not lift (SPEC 9.3: it changes
 * no routing state): a passing test on a locked account read as if the account were back, while every
 * request still went around it (newuser11 F2). `lock`: the registry's live lock of the account, if any.
 */
function withLockNote(r: AccountTestResult, lock: { reason: string; until: number | null } | undefined, id: string): AccountTestResult & { lock?: { reason: string; until: number | null; note: string } } {
  if (!lock) return r;
  const unlock = `switchyard accounts unlock ${id} (the Unlock button)`;
  const note = r.ok
    ? `The test passed, but the account stays locked (${lock.reason}): requests do not use it until it is unlocked: ${unlock}.`
    : `The account is locked (${lock.reason}); once the test passes, unlock it: ${unlock}, or replace its key and reload.`;
  return { ...r, lock: { reason: lock.reason, until: lock.until, note } };
}

/** Names added, removed and changed in one section (the `routing_changed` and `config_reloaded` events). */
const NamesChanged = v.object({ added: v.array(v.string()), removed: v.array(v.string()), changed: v.array(v.string()) });
/** A config file path and a sentence about it (`config_reloaded`). */
const PathMessage = v.object({ path: v.string(), message: v.string() });

/** OpenAPI documentation of the control routes (merged into openapi.ts ADMIN_ROUTE_DOCS). */
export const CONTROL_ROUTE_DOCS = {
  "GET /admin/api/events": {
    summary:
      "Live events as Server-Sent Events: first `event: hello` ({at, heartbeatMs}), then request_finished, account_state, alert, keys_changed, routing_changed, config_reloaded (data = the JSON below, its `type` the event's name); `: ping` every 15 s; a stream ends with `event: dropped` ({reason, at}) for a reader too far behind, or `event: signed_out` ({at}) when its caller may no longer read it.",
    query: EventsQuery,
    stream: true,
    response: v.union([
      v.object({
        type: v.literal("request_finished"),
        at: v.number(),
        routeId: v.string(),
        requestId: v.optional(v.string()),
        model: v.string(),
        served: v.optional(v.string()),
        provider: v.optional(v.string()),
        account: v.optional(v.string()),
        key: v.optional(v.string()),
        outcome: v.string(),
        status: v.number(),
        latencyMs: v.number(),
        ttfbMs: v.optional(v.number()),
        attempts: v.optional(v.number()),
        fallback: v.optional(v.boolean()),
        inputTokens: v.optional(v.number()),
        outputTokens: v.optional(v.number()),
        costUsd: v.optional(v.number()),
      }),
      v.object({
        type: v.literal("account_state"),
        at: v.number(),
        account: v.string(),
        provider: v.optional(v.string()),
        model: v.optional(v.string()),
        change: v.picklist(["cooldown_start", "cooldown_end", "lock", "unlock", "quarantine", "unquarantine", "model_removed", "model_restored", "circuit_open", "circuit_half_open", "circuit_closed", "disabled", "enabled"]),
        reason: v.optional(v.string()),
        until: v.optional(v.number()),
        advice: v.optional(v.pipe(v.string(), v.description("A lock's way back: replace the key and reload, log in again, or switchyard accounts unlock ID."))),
      }),
      v.object({ type: v.literal("alert"), event: v.string(), at: v.number(), subject: v.string(), detail: v.record(v.string(), v.unknown()), periodEnd: v.optional(v.number()), subjectId: v.optional(v.string()) }),
      v.object({ type: v.literal("keys_changed"), at: v.number(), change: v.picklist(["created", "revoked", "changed"]), name: v.optional(v.string()) }),
      v.object({
        type: v.literal("routing_changed"),
        at: v.number(),
        source: v.picklist(["file", "stored"]),
        combos: v.optional(NamesChanged),
        aliases: v.optional(NamesChanged),
        providers: v.optional(NamesChanged),
        settings: v.optional(v.array(v.string())),
      }),
      v.object({
        type: v.literal("config_reloaded"),
        at: v.number(),
        file: v.string(),
        changed: v.object({
          providers: v.optional(NamesChanged),
          accounts: v.optional(NamesChanged),
          combos: v.optional(NamesChanged),
          aliases: v.optional(NamesChanged),
          keys: v.optional(NamesChanged),
          settings: v.optional(v.array(v.string())),
          server: v.optional(v.array(v.string())),
        }),
        restartNeeded: v.array(PathMessage),
        warnings: v.array(PathMessage),
        error: v.optional(v.string()),
      }),
      // The stream's own frames, without a `type` member (src/admin/events-stream.ts).
      v.pipe(v.object({ at: v.number(), heartbeatMs: v.number() }), v.description("event: hello, the first frame: the time and the interval of the `: ping` comments, ms.")),
      v.pipe(v.object({ reason: v.string(), at: v.number() }), v.description("event: dropped, the last frame for a reader more than 1 MiB behind.")),
      v.pipe(v.object({ at: v.number() }), v.description("event: signed_out, the last frame once the caller may no longer read the stream (session ended, key revoked).")),
    ]),
  },
  "GET /admin/api/alerts": {
    summary:
      "The alerts this instance raised lately, newest first, at most 100, as the webhook POSTs them: `{event, at, subject, detail}` with `at` in ms since the epoch. `quota_threshold` is a key budget's or an account quota window's share crossed (`detail.threshold`); a key budget used up is its share 1 with `detail.exhausted: true`, raised once per window whether or not 1 is configured; one step past several shares raises the highest, the lower ones in `detail.passed`. Kept in memory (lost at a restart); with several instances, each one's own. New ones arrive live as `alert` events on GET /admin/api/events.",
    response: v.object({ alerts: v.array(v.object({ event: v.string(), at: v.number(), subject: v.string(), detail: v.record(v.string(), v.unknown()) })) }),
  },
  "GET /admin/api/providers": { summary: "Providers: ids, kinds, formats, base URLs, models, account ids (a *-compatible provider without accounts: its implicit <provider>-keyless one), circuit state; never credentials.", response: ProvidersReply },
  "GET /admin/api/calls/:id/recording": { summary: "The flight recording of one request: client body, upstream bodies and replies per attempt, the reply sent; secrets scrubbed.", response: RecordingReply },
  "POST /admin/api/accounts/:id/test": {
    summary:
      "One minimal upstream call with this account; writes no cooldown. Without `model`, the provider's first configured or discovered model, else one a combo or alias routes to it, else the model the account last served (in the last 30 days; `model_from` says which); a 400 with code `model_required` when none is known, whose error carries `models`, the models the account's upstream lists now (its models endpoint, asked then; up to 200, sorted), or an empty `models` and `models_error`, why that list could not be read.",
    body: AccountTestBody,
    bodyOptional: true as const,
    response: AccountTestReply,
  },
  "POST /admin/api/accounts/:id/restore": {
    summary:
      "Restore the account's removed account/model pairings now (a model-scoped 403 or a 404 model not found removes one for 24 h): `model`'s, or all of them; in memory and in the store; publishes account_state model_restored per pairing. 503 `store_rejected` when a shared database (PostgreSQL) refuses the change (a trigger, a constraint, or a transient refusal still failing at the fifth try): the message names the SQLSTATE and the database's reason, and nothing changed.",
    body: AccountRestoreBody,
    bodyOptional: true as const,
    response: AccountRestoreReply,
  },
  "POST /admin/api/providers/:id/close-circuit": {
    summary:
      "Close the provider's circuit now (10 consecutive 5xx open it for 5 minutes, then one probe passes), in memory and in the store (other instances of a shared store drop it within about a second); its count of consecutive 5xx starts again; publishes account_state circuit_closed \"circuit (REASON) closed by hand\" per account of the provider. `closed` is the circuit as it was, null when none was open. 404 for an unknown provider. 503 `store_rejected` when a shared database (PostgreSQL) refuses the change (a trigger, a constraint, or a transient refusal still failing at the fifth try): the message names the SQLSTATE and the database's reason, and nothing changed.",
    response: CircuitCloseReply,
  },
  "POST /admin/api/accounts/:id/unlock": {
    summary:
      "Clear the account's whole-account lock now (a 401 or credential 403 on an API key, quota exhausted, a ban, a 402), in memory and in the store; publishes account_state unlock \"lock (REASON) cleared by hand\". A lock until changed also ends when the account's API key changes (a reload or restart with another key). 404 for an unknown id. 503 `store_rejected` when a shared database (PostgreSQL) refuses the change (a trigger, a constraint, or a transient refusal still failing at the fifth try): the message names the SQLSTATE and the database's reason, and nothing changed.",
    response: AccountUnlockReply,
  },
};
