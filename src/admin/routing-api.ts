/**
 * Routing routes of the admin API (SPEC 9.3), mounted through AdminDeps.extend so the admin guard
 * applies:
 *
 * - `GET /admin/api/accounts`: live account status (src/accounts/status.ts).
 * - `POST /admin/api/dry-run`: the ordered candidates for a request and why each target and account
 *   is in, out or moved, computed by the functions a real request uses (pipeline/order.ts
 *   `planRouteSeeded`), without calling upstream or advancing any strategy counter; a least-used
 *   combo's plan waits, as its request does, for the lifetime counts read after a restart (at most 1 s).
 *
 * Dry-run body (valibot-validated):
 *
 * ```json
 * { "request": { "model": "coding", "messages": [...] },   // the client request JSON
 *   "format": "anthropic-messages",                        // or endpoint: "messages" | "chat" | "responses" | "gemini"
 *   "model": "coding",                                     // optional: overrides request.model
 *   "headers": { "x-session-id": "abc" },                  // optional: session headers (affinity)
 *   "key": "laptop", "key_tag": "team-a" }                 // optional: the key (or tag) for key_tag
 * ```
 *
 * The key a request would be served for, named by `key` or presented in `headers` as a real request
 * presents it (`authorization: Bearer …` or `x-api-key`), gives its tag (unless `key_tag` is given) and
 * its `models` allow-list (SPEC 9.6): a model the key may not use is answered with the guard's 403
 * (`permission_error`, code `model_not_allowed`), as the request itself would be; a key whose budget is
 * used up, or whose rpm, tpm or concurrency is reached now, with the guard's 429 and its words ("Client
 * key "alice" has used its 1d budget of … the window resets in …", code `key_budget_exceeded` or
 * `key_rate_limit_exceeded`, `retry_after` its seconds; ./dry-run-limits.ts, read-only). A presented secret
 * the gateway does not know is ignored (as from loopback). `switchyard setup --model` asks this way
 * whether the client key it writes may use a model no `GET /v1/models` lists.
 *
 * Without `format` or `endpoint`, the format is guessed from the body: `contents` → gemini; `input` →
 * openai-responses; a top-level `system` or Anthropic content blocks → anthropic-messages; else
 * openai-chat. A Gemini client names its model in the URL (`/v1beta/models/{model}:generateContent`):
 * give it as `model` (a `models/` prefix is dropped, as in the body's own `model`).
 *
 * A body the endpoint refuses before routing (pipeline/guard.ts `checkRequestBody`, the same function:
 * `messages: 5`, an empty `contents`, `stream: "yes"`) gets no plan: the answer is that refusal (its
 * status and message, code `request_refused`, `endpoint_error` the client's body in its format).
 * Every such refusal is answered through ./endpoint-refusal.ts (`refused_status` the endpoint's status;
 * its 401 as 422, since an admin client reads a 401 as its own credentials refused).
 */
import type { Elysia } from "elysia";
import * as v from "valibot";
import type { HubError, WireFormat } from "../../formats/hub.ts";
import { codecFor } from "../../formats/index.ts";
import { authenticate, checkRequestBody, ENDPOINT_FORMAT, hasCountedLimits, keyDisabledMessage, keyId, modelAllowed, modelNotAllowedMessage, planRouteSeeded, refusalError, type RoutingTable, type TargetOrder } from "../../pipeline/index.ts";
import type { AccountRegistry } from "../accounts/registry.ts";
import type { AccountStrategy } from "../accounts/selection.ts";
import { accountsStatus } from "../accounts/status.ts";
import { standingRefusal, type KeyUseNow } from "./dry-run-limits.ts";
import { endpointRefusalReply } from "./endpoint-refusal.ts";
import { adminError, readBody, strictBody } from "./replies.ts";
import type { Store } from "../store/types.ts";
import type { Account, KeyLimits } from "../../pipeline/ports.ts";
import type { LoginFacts } from "../accounts/credentials.ts";

/** What the routing admin routes read. */
export interface RoutingAdminDeps {
  /** `server.body_timeout_ms` in force: how long a request body may take to arrive (src/admin/replies.ts `readJson`); default 120 s. */
  bodyTimeoutMs?: () => number;
  registry: AccountRegistry;
  order: TargetOrder;
  routing: () => RoutingTable;
  strategy: () => AccountStrategy;
  /** For `key` → tag and allow-list lookups (by name, or by the secret presented in `headers`). */
  store: Pick<Store, "listKeys" | "lookup" | "disabled" | "any">;
  /** A subscription account's login facts for GET /accounts (the credential manager's; never a token). */
  logins?: (a: Account) => LoginFacts | undefined;
  /** `server.require_api_key` now (SPEC G-1): a dry run without a key is then refused as the endpoint would. */
  requireApiKey?: () => boolean;
  /**
   * A key's use now, by its id (the counters' read-only reports, as GET /keys shows them): a key over a
   * budget, rpm, tpm or concurrency limit gets the guard's 429 instead of a plan (./dry-run-limits.ts).
   */
  keyUse?: (id: string, limits: KeyLimits) => Promise<KeyUseNow>;
  /** ms since the epoch now (the gateway's clock), for when a refused limit resets; default Date.now. */
  now?: () => number;
  /** `settings.max_attempts` now (SPEC 6.1): the plan marks the attempts beyond it as not reached. */
  maxAttempts?: () => number;
  /** `settings.precommit_deadline_ms` now (SPEC 6.1): the plan marks the attempts after a non-streamed call that may outwait it (pipeline/attempt-budget.ts markBudgetReach). */
  precommitDeadlineMs?: () => number;
}

/** Client formats a dry run takes (SPEC 1), and the endpoints that imply them. */
export const DRY_RUN_FORMATS = ["openai-chat", "openai-responses", "anthropic-messages", "gemini"] as const;
/** Endpoint names a dry run takes instead of a format (pipeline/context.ts ENDPOINT_FORMAT). */
export const DRY_RUN_ENDPOINTS = ["chat", "responses", "messages", "gemini"] as const;

/** The dry-run request body. */
export const DryRunBody = strictBody({
  request: v.record(v.string(), v.unknown(), "request must be the client request JSON object"),
  format: v.optional(v.picklist(DRY_RUN_FORMATS, "format is openai-chat, openai-responses, anthropic-messages or gemini")),
  endpoint: v.optional(v.picklist(DRY_RUN_ENDPOINTS, "endpoint is chat, responses, messages or gemini")),
  model: v.optional(v.pipe(v.string(), v.minLength(1))),
  headers: v.optional(v.record(v.string(), v.string(), "headers maps names to strings")),
  key: v.optional(v.string()),
  key_tag: v.optional(v.string()),
  /**
   * false: leave out the key's counted limits (budgets, rpm, tpm, concurrency), which pass with time;
   * `setup --model` asks only whether the key may use the name and where it routes (review18 R4).
   */
  limits: v.optional(v.boolean("limits is true or false")),
}, "a dry run");

/** A parsed dry-run body. */
export type DryRunInput = v.InferOutput<typeof DryRunBody>;

/** Guesses the client format of a request body (see the module comment). */
export function guessFormat(body: Record<string, unknown>): WireFormat {
  if ("contents" in body) return "gemini";
  if ("input" in body || "instructions" in body) return "openai-responses";
  if ("system" in body) return "anthropic-messages";
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  for (const m of msgs) {
    const c = (m as { content?: unknown })?.content;
    if (Array.isArray(c) && c.some((b) => ["tool_use", "tool_result", "thinking", "document"].includes((b as { type?: string })?.type ?? ""))) return "anthropic-messages";
    if (Array.isArray(c) && c.some((b) => (b as { type?: string })?.type === "image" && "source" in (b as object))) return "anthropic-messages";
  }
  return "openai-chat";
}

/**
 * The dry run's answer to a request the endpoint itself would refuse before routing (`messages: 5`,
 * `stream: "yes"`): {@link endpointRefusalReply} with the endpoint's status and message (code
 * `request_refused`, `param` the field), and `endpoint_error` the body the client would get, in its own format.
 */
function endpointRefusal(format: WireFormat, err: HubError): Response {
  return endpointRefusalReply({ status: err.status, message: err.message, code: "request_refused", param: err.param }, { endpoint_error: codecFor(format).errorBody(err) });
}

/** Runs a dry run for a validated body. Exported for tests and the CLI-less callers. */
export async function dryRun(deps: RoutingAdminDeps, input: DryRunInput): Promise<Response> {
  const clientFormat: WireFormat = input.format ?? (input.endpoint ? ENDPOINT_FORMAT[input.endpoint] : guessFormat(input.request));
  const rawModel = input.model ?? input.request.model;
  if (typeof rawModel !== "string" || rawModel.trim() === "") return adminError(400, "The request must name a model (request.model or model).");
  // A Gemini body may name its model as the API's resource name (`models/gemini-2.5-pro`).
  // The endpoint's own checks of the body (pipeline/guard.ts): what it refuses gets no plan.
  const requestedModel = checkRequestBody(clientFormat, input.request, clientFormat === "gemini" ? rawModel.trim().replace(/^models\//, "") : rawModel);
  if (typeof requestedModel !== "string") return endpointRefusal(clientFormat, requestedModel);
  const body = { ...input.request, model: requestedModel };
  let hub;
  let hubError: string | undefined;
  try {
    hub = codecFor(clientFormat).parseRequest!(body);
  } catch (e) {
    hubError = `the request body could not be parsed as ${clientFormat} (${e instanceof Error ? e.message.slice(0, 120) : "invalid"})`;
  }
  const headers = new Headers(input.headers ?? {});
  let key: { name: string; id?: string; tag?: string; limits?: KeyLimits } | undefined;
  // A disabled key's requests are refused before routing (pipeline/guard.ts): so is its dry run, rather
  // than an order that would never be tried (review13 R4).
  const disabled = (name: string) => endpointRefusalReply({ status: 403, message: keyDisabledMessage(name), code: "key_disabled" });
  if (input.key !== undefined) {
    const named = (await deps.store.listKeys()).find((x) => x.name === input.key && x.revokedAt === undefined);
    if (!named) return adminError(404, `No active key named ${input.key}.`);
    if (named.disabledAt !== undefined) return disabled(named.name);
    key = named;
  } else {
    // No key named: the request as a client on this machine sends it (loopback), with the key its headers
    // present if any, and the guard's own decision on it: with `require_api_key` a keyless (or unknown-key)
    // request is a 401 there, so it gets no plan here either (newuser14 K9: "as from loopback" routed it).
    // Its 401 is answered 422 (./endpoint-refusal.ts: a 401 from the admin API means "your admin
    // credentials are refused" to every admin client, review14 R1).
    const auth = authenticate(false, headers, deps.store, { requireApiKey: deps.requireApiKey?.() ?? false, maxBodyBytes: Infinity });
    if (!auth.ok) return endpointRefusalReply({ status: auth.error.status, message: auth.error.message, code: auth.error.code ?? "request_refused" });
    key = auth.key;
  }
  // SPEC 9.6: the guard refuses a model outside the key's allow-list before routing; so does this.
  if (key?.limits && !modelAllowed(key.limits, requestedModel)) return adminError(403, modelNotAllowedMessage(key.name, requestedModel, key.limits), "model", "model_not_allowed");
  // Then its counted limits: a key over its budget (or rpm, tpm, concurrency) gets the guard's 429 in the
  // guard's words, read from the counters' reports (nothing counted or reserved; try18 D10).
  if (input.limits !== false && hasCountedLimits(key?.limits) && deps.keyUse) {
    const now = deps.now?.() ?? Date.now();
    const refusal = standingRefusal(key!.limits!, await deps.keyUse(keyId(key!), key!.limits!), now);
    if (refusal) {
      const err = refusalError(key!.name, refusal, now);
      return endpointRefusalReply({ status: 429, message: err.message, code: err.code ?? "key_rate_limit_exceeded" }, { retry_after: err.retryAfterSeconds });
    }
  }
  const keyTag = input.key_tag ?? key?.tag;
  // ordered as the request would be: a least-used combo's after the lifetime counts a request waits for
  const plan = await planRouteSeeded(
    deps.order,
    deps.routing(),
    { clientFormat, requestedModel, hub, hubError, keyTag, keyName: key?.name, keyModels: key?.limits?.models, headers },
    { pool: deps.registry, circuitOpen: (id) => deps.registry.circuitState(id).state === "open", maxAttempts: deps.maxAttempts?.(), precommitDeadlineMs: deps.precommitDeadlineMs?.() },
  );
  if ("error" in plan) return adminError(plan.error.status, plan.error.message);
  return Response.json({ ...plan, accountStrategy: deps.strategy() });
}

/** Adds the routing routes to the admin app (use as AdminDeps.extend). */
export function routingAdmin(deps: RoutingAdminDeps): (app: Elysia<"/admin/api">) => Elysia<"/admin/api"> {
  return (app) =>
    app
      .get("/accounts", () => accountsStatus(deps.registry, deps.strategy(), deps.logins, deps.routing()))
      .post(
        "/dry-run",
        async ({ request }) => {
          const input = await readBody(request, DryRunBody, deps.bodyTimeoutMs?.());
          if (!input.ok) return input.response;
          return dryRun(deps, input.value);
        },
        { parse: "none" },
      ) as never;
}
