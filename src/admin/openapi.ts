/**
 * The OpenAPI document of the admin API at `GET /admin/api/openapi.json` (SPEC 9.3).
 *
 * Generated on the first request for it from the admin Elysia app's own routes by `@elysiajs/openapi`'s
 * `toOpenAPISchema`, which converts valibot (Standard Schema) route schemas with
 * `@valibot/to-json-schema`, and kept as JSON text until the app has another number of routes
 * ({@link adminOpenApiJson}). A route added to the admin app appears in the document by itself.
 *
 * Several admin routes validate their JSON bodies inside the handler (so a bad body is a 400 in
 * OpenAI error shape rather than Elysia's validation error): their valibot schemas are named in
 * {@link ADMIN_ROUTE_DOCS} and handed to the generator as documentation only — the live routes'
 * hooks are never changed, so nothing about validation changes. The same table carries summaries and
 * the query parameters the handlers read.
 */
import type { AnyElysia } from "elysia";
import { toOpenAPISchema } from "@elysiajs/openapi/openapi";
import { toJsonSchema } from "@valibot/to-json-schema";
import type { MappingGuard } from "../config/errors.ts";
import * as v from "valibot";
import { CallsQuery, KeyCreate, KeyRotate, UsageQuery } from "./admin-api.ts";
import { KeyChangeBody } from "./key-change.ts";
import { DryRunBody } from "./routing-api.ts";
import { AccountCreate, DiscoveryRequest } from "./subscription-routes.ts";
import { CONTROL_ROUTE_DOCS } from "./control-routes.ts";
import { CONFIG_ROUTE_DOCS } from "./config-routes.ts";
import { OLDER_ROUTE_RESPONSES } from "./reply-schemas.ts";
import { VERSION } from "../version.ts";

/** The prefix every admin route lives under. */
export const ADMIN_PREFIX = "/admin/api";

/** Documentation of one admin route beyond what its Elysia hooks declare. */
export interface AdminRouteDoc {
  summary: string;
  /** The JSON body the handler validates itself (valibot). */
  body?: v.GenericSchema;
  /**
   * The body may be left out (the handler reads an empty body as `{}`: every field optional): the
   * document says `requestBody.required: false`, so a generated client may call the route without one.
   */
  bodyOptional?: true;
  /** The query parameters the handler reads (valibot object). */
  query?: v.GenericSchema;
  /** The JSON answer (status 200 unless keyed by status), or for `stream` routes one event's data. */
  response?: v.GenericSchema | Record<number, v.GenericSchema>;
  /** A Server-Sent Events route: the answer is `text/event-stream`, `response` describes one event's data. */
  stream?: boolean;
}

/** The error answer of every admin route (the statuses: {@link operationErrors}). */
export const ErrorReply = v.object({
  error: v.object({
    message: v.string(),
    type: v.string(),
    param: v.pipe(v.nullable(v.string()), v.description("The offending field's path, e.g. targets[0].model.")),
    code: v.nullable(v.string()),
  }),
});

/**
 * What each error status means in the document, in the {@link ErrorReply} shape (src/admin/replies.ts
 * `adminError`, access.ts, src/http/server.ts's `bodyLimit` and catch-all, browser-guard.ts and
 * request-head.ts). A route's own reasons ({@link ROUTE_ERRORS}) replace these words for its statuses.
 */
export const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad input: a body or query that does not parse or fit its schema (`param` names the field).",
  401: "No valid admin credentials (with `WWW-Authenticate: Bearer`).",
  403: "A key without the admin scope, a dashboard session's call without its CSRF token, or a browser Origin not allowed.",
  404: "No such object.",
  408: "The body did not arrive within server.body_timeout_ms (with `Connection: close`).",
  409: "The object is read-only here or the name is taken.",
  411: "A body sent without a Content-Length.",
  413: "A body over 1 MiB.",
  414: "A URL over 16 KiB.",
  415: "A body whose Content-Type is not JSON (`application/json` or a `+json` type; a body without one is read as JSON, and a `text/plain` one, what a browser's `fetch` sends for a string body, when it is JSON).",
  421: "A Host the gateway does not answer to (server.allowed_hosts).",
  422: "A dry run's request without a valid client key.",
  429: "A dry run for a key over one of its limits (the guard's refusal).",
  503: "The store cannot answer (a shared database out of reach, or the instance shutting down); the request may be retried.",
};

/** What the document's `5XX` answer says: the rest of the 5xx range (503 is listed by itself where a route can answer it). */
const OTHER_5XX = "An unexpected failure, never with a stack.";

/** Statuses every admin operation can answer: the access rule (401, 403) and the server's checks before routing (411, 413, 414, 421). */
const EVERY_ROUTE = [401, 403, 411, 413, 414, 421];
/** Statuses of an operation that reads a JSON body (src/admin/replies.ts `readJson`). */
const BODY_READ = [400, 408, 415];

/**
 * The statuses a route answers beyond {@link EVERY_ROUTE}, those of its body ({@link BODY_READ}) or
 * query (400), and the store's 503, each with the route's reasons when they say more than
 * {@link STATUS_TEXT} (a reason of "" keeps its words). Keyed as {@link ADMIN_ROUTE_DOCS}.
 */
export const ROUTE_ERRORS: Readonly<Record<string, Readonly<Record<number, string>>>> = {
  "POST /admin/api/keys": { 400: "A bad body, or a models pattern naming no provider.", 409: "The name is taken (by an active key, one differing only in case, or a config-file key)." },
  "POST /admin/api/keys/:name/rotate": { 404: "No active key of this name.", 409: "A config-file key." },
  "PATCH /admin/api/keys/:name": { 400: "A bad value, or nothing to change.", 404: "No active key of this name.", 409: "A revoked key or a config-file key." },
  "DELETE /admin/api/keys/:name": { 404: "No active key of this name.", 409: "A config-file key." },
  "POST /admin/api/keys/:name/disable": { 404: "No active key of this name.", 409: "A config-file key." },
  "POST /admin/api/keys/:name/enable": { 404: "No active key of this name.", 409: "A config-file key." },
  "GET /admin/api/usage": { 400: "A bad query, or a since that makes too many buckets of the bucket asked." },
  "GET /admin/api/calls": { 400: "A bad query, or both before and after." },
  "GET /admin/api/route-traces/:id": { 404: "No route trace of this id (only the newest settings.trace_ring_size are kept)." },
  "GET /admin/api/calls/:id/recording": { 404: "No recording of this call (the message says why)." },
  "POST /admin/api/combos": { 400: "A bad body or a combo the config loader refuses (`issues`).", 409: "The name is taken or looks like one taken, the change would break stored objects, or the config file is invalid." },
  "GET /admin/api/combos/:name": { 404: "No combo of this name." },
  "PUT /admin/api/combos/:name": { 400: "A bad body, another name than the path's, or a combo the config loader refuses (`issues`).", 404: "No combo of this name was created through the admin API.", 409: "The config file's combo, a change that would break stored objects, or an invalid config file." },
  "DELETE /admin/api/combos/:name": { 404: "No combo of this name was created through the admin API.", 409: "The config file's combo, or stored objects that use it." },
  "POST /admin/api/aliases": { 400: "A bad body or an alias the config loader refuses (`issues`).", 409: "The name is taken or looks like one taken, the change would break stored objects, or the config file is invalid." },
  "PUT /admin/api/aliases/:name": { 400: "A bad body, another name than the path's, or an alias the config loader refuses (`issues`).", 404: "No alias of this name was created through the admin API.", 409: "The config file's alias, a change that would break stored objects, or an invalid config file." },
  "DELETE /admin/api/aliases/:name": { 404: "No alias of this name was created through the admin API.", 409: "The config file's alias, or stored objects that use it." },
  "PATCH /admin/api/settings": { 400: "A bad body, no settings key, or a value the config loader refuses.", 409: "A key set in the config file, or an invalid config file." },
  "POST /admin/api/accounts/:id/disable": { 404: "No account of this id.", 409: "The implicit keyless account, or one disabled in the config file." },
  "POST /admin/api/accounts/:id/enable": { 404: "No account of this id.", 409: "The implicit keyless account, or one disabled in the config file." },
  "POST /admin/api/config/reload": { 400: "The config file is refused (`issues`); the previous config stays in force.", 409: "The instance runs without a config file." },
  "GET /admin/api/events": { 400: "A bad query (types)." },
  "POST /admin/api/accounts/:id/test": { 400: "A bad body, or no model known to test with (`models` offers the upstream's).", 404: "No account of this id.", 409: "The account's provider is not configured." },
  "POST /admin/api/accounts/:id/restore": { 404: "No account of this id." },
  "POST /admin/api/accounts/:id/unlock": { 404: "No account of this id." },
  "POST /admin/api/providers/:id/close-circuit": { 404: "No provider of this id." },
  "POST /admin/api/accounts": { 404: "No subscription provider of this name.", 409: "An account of the config file, or of another provider." },
  "DELETE /admin/api/accounts/:id": { 404: "No stored account of this id.", 409: "An account of the config file, or the implicit keyless account." },
  "POST /admin/api/dry-run": {
    400: "A bad body, no model, or a request the endpoint refuses (`refused_status`, `endpoint_error`).",
    403: "An admin credential refused, a disabled key (`key_disabled`), or a model outside the key's allow-list.",
    404: "No active key of the name given, or a model nothing serves.",
    422: "",
    429: "",
  },
  "GET /admin/api/oauth/:kind": { 404: "No subscription provider of this kind or id." },
  "POST /admin/api/discovery": { 404: "No provider or account of the id given." },
};

/** Routes that read only the gateway's memory (no 503 from the store). */
const NO_STORE = new Set(["GET /admin/api/openapi.json", "GET /admin/api/oauth/:kind", "GET /admin/api/alerts", "GET /admin/api/providers", "GET /admin/api/events", "GET /admin/api/quota", "GET /admin/api/accounts", "GET /admin/api/combos", "GET /admin/api/combos/:name", "GET /admin/api/aliases", "GET /admin/api/settings"]);

/**
 * The error statuses of the operation keyed `key` ({@link ADMIN_ROUTE_DOCS}'s form) with their
 * descriptions, in order: {@link EVERY_ROUTE}, {@link BODY_READ} when it takes a body, 400 when it
 * has query parameters, the route's own ({@link ROUTE_ERRORS}), and 503 unless it reads only memory.
 */
export function operationErrors(key: string, takesBody: boolean, hasQuery: boolean): Array<[number, string]> {
  const own = ROUTE_ERRORS[key] ?? {};
  const statuses = new Set<number>([...EVERY_ROUTE, ...(takesBody ? BODY_READ : []), ...(hasQuery ? [400] : []), ...Object.keys(own).map(Number), ...(NO_STORE.has(key) ? [] : [503])]);
  return [...statuses].sort((a, b) => a - b).map((status) => [status, own[status] || STATUS_TEXT[status]!]);
}

/**
 * Summaries, handler-validated bodies and query parameters of the admin routes, keyed by
 * `METHOD /path` as Elysia names the route (prefix included, `:param` placeholders).
 */
export const ADMIN_ROUTE_DOCS: Record<string, AdminRouteDoc> = {
  "GET /admin/api/keys": { summary: "List client API keys (names, scopes, tags, dates, limits with their budget use and requests in flight; never the secrets)." },
  "POST /admin/api/keys": { summary: "Create a client API key, optionally with limits (rpm, tpm, concurrency, budgets, models); the answer carries the secret, shown this once.", body: KeyCreate },
  "DELETE /admin/api/keys/:name": { summary: "Revoke the active key of this name." },
  "POST /admin/api/keys/:name/rotate": {
    summary:
      "Give the active stored key of this name a new secret (in the answer, shown this once) and keep everything else: its identity, scopes, tag, limits and their use (budget windows, this minute). The previous secret is accepted for `grace` more (e.g. 10m; default 0: refused at once); 404 for no such active key, 409 for a config-file key (a stored key sharing its name with one is the one rotated, with a `note`).",
    body: KeyRotate,
    bodyOptional: true,
  },
  "PATCH /admin/api/keys/:name": {
    summary:
      "Change the limits (rpm, tpm, concurrency, budgets, models), tag and scopes (`[\"admin\"]`: the admin API and dashboard) of the active stored key of this name, keeping its secret, identity and the use of its limits so far (a budget raised from 1,000 to 2,000 tokens at 900 used reads 900 of 2,000). A field given replaces the key's, null clears it (`scopes: null` or `[]`: no admin scope), a field left out stays; budgets and models are replaced as whole lists; `limits: null` clears every limit. The next request is checked against the new limits and scopes (other instances of a shared store within about a second). Answers {key, note?}, the key as GET /keys lists it; 400 for a bad value or nothing to change, 404 for no such key, 409 for a revoked key or a config-file key (a stored key sharing its name with one is the one changed, with a `note`).",
    body: KeyChangeBody,
  },
  "POST /admin/api/keys/:name/disable": {
    summary:
      "Disable the active stored key of this name for a while: its requests get 403 `key_disabled` (in the client's format, from loopback too) until it is enabled; it keeps its secret, identity, limits and their use. Answers {name, disabled: true, disabledAt}; 404 for no such active key, 409 for a config-file key. A stored key that shares its name with a config key is the one disabled, and `note` says the config key is not affected.",
  },
  "POST /admin/api/keys/:name/enable": { summary: "Enable a disabled key again (its requests are served from the next one). Answers {name, disabled: false}; 404 for no such active key, 409 for a config-file key (a stored key sharing its name with one is the one enabled, with a `note`)." },
  "GET /admin/api/usage": { summary: "Token usage and request counts, grouped.", query: UsageQuery },
  "GET /admin/api/calls": { summary: "Recent requests, newest first, a page at a time (older / newer cursors, keeping the filters).", query: CallsQuery },
  "GET /admin/api/route-traces/:id": { summary: "The route trace of one request, by the opaque id in x-switchyard-route-id." },
  "GET /admin/api/accounts": { summary: "Live eligibility per account and model: cooldowns, locks, quota windows, slots, circuits; a *-compatible provider without accounts lists its implicit <provider>-keyless account (source implicit)." },
  "POST /admin/api/accounts": { summary: "Store a subscription account's OAuth tokens (switchyard login / import).", body: AccountCreate },
  "DELETE /admin/api/accounts/:id": { summary: "Remove a stored subscription account (switchyard login / import) and its state; accounts of the config file are removed there, an implicit keyless account by giving its provider an account (both 409)." },
  "POST /admin/api/dry-run": { summary: "The ordered candidates for a request and why, without calling upstream. A request the endpoint refuses before routing (a field of the wrong type: `messages: 5`) gets that refusal instead: the endpoint's status and message, code `request_refused`, `param` the field, `endpoint_error` the body the client would get in its format. A disabled client key (named in `key`, or its secret in `headers`) gets the endpoint's 403, code `key_disabled`. Without a valid client key while `server.require_api_key` is on, the endpoint's 401 is answered as 422 with code `invalid_api_key` (a 401 here would read as refused admin credentials). Each such refusal carries the endpoint's status in `refused_status`.", body: DryRunBody },
  "GET /admin/api/oauth/:kind": { summary: "The OAuth client of the subscription providers of a kind (claude-code, codex); no secrets." },
  "POST /admin/api/discovery": {
    summary: "Run model discovery now for a provider or account (neither: every subscription account). A provider or account id the gateway does not know is a 404.",
    body: DiscoveryRequest,
    bodyOptional: true,
  },
  "GET /admin/api/quota": { summary: "Live quota windows per account." },
  "GET /admin/api/openapi.json": { summary: "This document." },
  ...CONTROL_ROUTE_DOCS,
  ...CONFIG_ROUTE_DOCS,
};

/**
 * The converter's options. A {@link strictObj} of the config (key limits, combo targets, the settings
 * blocks) converts to `{}` (any) by default: its pipe starts with a custom mapping check, where the
 * converter stops in `typeMode: "input"` (newuser15 N4); the object schema the check names
 * ({@link MappingGuard}) is converted in its place.
 */
const CONVERSION: NonNullable<Parameters<typeof toJsonSchema>[1]> = {
  target: "draft-2020-12",
  errorMode: "ignore",
  typeMode: "input",
  overrideSchema: (context) => {
    const object = (context.valibotSchema as Partial<MappingGuard>).mappingOf;
    return object ? strip(toJsonSchema(object, CONVERSION) as Record<string, unknown>) : undefined;
  },
};

/**
 * A converted part without its `$schema`, and without `$defs` the converter made for a recursive
 * schema it cannot describe (a routing predicate's `v.lazy` expression, SPEC 5.2: each definition `{}`):
 * a `$ref: "#/$defs/0"` nested in the OpenAPI document would resolve against the document's root,
 * where there is no such definition, so each reference to an empty definition becomes `{}` (any).
 */
const strip = <T extends Record<string, unknown>>(out: T): T => {
  delete out.$schema;
  inlineEmptyDefs(out);
  return out;
};

function inlineEmptyDefs(node: unknown, empty: Set<string> = new Set()): void {
  if (!node || typeof node !== "object") return;
  if (Array.isArray(node)) {
    for (const x of node) inlineEmptyDefs(x, empty);
    return;
  }
  const o = node as Record<string, unknown>;
  const defs = o.$defs as Record<string, unknown> | undefined;
  let inner = empty;
  if (defs && typeof defs === "object") {
    inner = new Set(empty);
    for (const [id, d] of Object.entries(defs)) if (d && typeof d === "object" && Object.keys(d).length === 0) inner.add(`#/$defs/${id}`), delete defs[id];
    if (Object.keys(defs).length === 0) delete o.$defs;
  }
  if (typeof o.$ref === "string" && inner.has(o.$ref)) delete o.$ref;
  for (const v of Object.values(o)) inlineEmptyDefs(v, inner);
}

/** valibot → JSON Schema for OpenAPI 3.1 (draft 2020-12); an unconvertible part becomes `{}`, never a 500. */
const valibotToJsonSchema = (schema: unknown) => strip(toJsonSchema(schema as v.GenericSchema, CONVERSION) as Record<string, unknown>);

interface ElysiaRoute {
  method: string;
  path: string;
  hooks?: Record<string, unknown> & { body?: unknown; query?: unknown; detail?: Record<string, unknown> };
}

/** The document's JSON text per app, with the number of routes it was built from. */
const built = new WeakMap<AnyElysia, { routes: number; json: string }>();

/**
 * The JSON text of {@link adminOpenApiDocument} for `app`, built once and kept while the app has the
 * same number of routes (Elysia only ever adds routes). Nothing else goes into it: the route schemas,
 * {@link ADMIN_ROUTE_DOCS} and the version are fixed while the process runs, and no part of the
 * configuration is read, so a config reload leaves it as it is. Building it took 7-50 ms of CPU per
 * request under load (2026-12-03); the admin fuzz test asks for it some 30 times. `build` is the
 * generator (a test counts its calls).
 */
export function adminOpenApiJson(app: AnyElysia, build: (app: AnyElysia) => Record<string, unknown> = adminOpenApiDocument): string {
  const routes = (app.routes as unknown[]).length;
  let doc = built.get(app);
  if (doc?.routes !== routes) built.set(app, (doc = { routes, json: JSON.stringify(build(app)) }));
  return doc.json;
}

/**
 * The OpenAPI 3.1 document of the admin routes of `app` (an Elysia app or plugin holding them).
 * Only routes under {@link ADMIN_PREFIX} are listed; JSON is the only request body type.
 */
export function adminOpenApiDocument(app: AnyElysia): Record<string, unknown> {
  const routes = (app.routes as unknown as ElysiaRoute[])
    .filter((r) => r.path.startsWith(ADMIN_PREFIX + "/") && r.method !== "OPTIONS")
    .map((r) => {
      // Copies: the live routes' hooks stay exactly as they are.
      const doc = ADMIN_ROUTE_DOCS[`${r.method} ${r.path}`];
      const hooks = { ...r.hooks };
      if (doc?.body && !hooks.body) {
        hooks.body = doc.body;
        // A route that reads its own body (parse: "none") still takes JSON.
        delete hooks.parse;
      }
      if (doc?.query && !hooks.query) hooks.query = doc.query;
      const response = doc?.response ?? OLDER_ROUTE_RESPONSES[`${r.method} ${r.path}`];
      if (response && !hooks.response) hooks.response = response;
      hooks.detail = { tags: ["admin"], ...(doc ? { summary: doc.summary } : {}), ...hooks.detail };
      return { ...r, hooks };
    });
  // toOpenAPISchema reads an app's routes through getGlobalRoutes: hand it the documented copies.
  const view = { getGlobalRoutes: () => routes, getGlobalDefinitions: () => ({ type: {} }) } as unknown as AnyElysia;
  const { paths, components } = toOpenAPISchema(view, { staticFile: false }, undefined, { valibot: valibotToJsonSchema } as never, "3.1.0");
  // The admin API reads JSON bodies only (the generator also lists form encodings).
  const errorSchema = valibotToJsonSchema(ErrorReply);
  type Op = { requestBody?: { required?: boolean; content?: Record<string, unknown> }; responses?: Record<string, { description?: string; content?: Record<string, unknown> }> };
  for (const [path, item] of Object.entries(paths as Record<string, Record<string, Op>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op) continue;
      const content = op.requestBody?.content;
      if (content) for (const type of Object.keys(content)) if (type !== "application/json") delete content[type];
      const key = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`;
      const doc = ADMIN_ROUTE_DOCS[key];
      const ok = op.responses?.["200"];
      if (doc?.stream && ok?.content) {
        // One SSE event's data; the stream itself is text/event-stream.
        const schema = Object.values(ok.content)[0] as { schema?: unknown } | undefined;
        ok.content = { "text/event-stream": { schema: { type: "string", description: "Server-Sent Events; each event's data is JSON of this shape.", contentSchema: schema?.schema } } };
      }
      // The generator lists every media type for an answer too: JSON only.
      for (const r of Object.values(op.responses ?? {})) {
        if (r?.content) for (const type of Object.keys(r.content)) if (type !== "application/json" && type !== "text/event-stream") delete r.content[type];
      }
      if (doc?.bodyOptional && op.requestBody) op.requestBody.required = false;
      op.responses ??= {};
      const params = (op as { parameters?: Array<{ in?: string }> }).parameters ?? [];
      for (const [status, description] of operationErrors(key, op.requestBody !== undefined, params.some((x) => x.in === "query"))) {
        op.responses[String(status)] ??= { description, content: { "application/json": { schema: errorSchema } } };
      }
      op.responses["5XX"] ??= { description: OTHER_5XX, content: { "application/json": { schema: errorSchema } } };
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "switchyard admin API",
      version: VERSION,
      description:
        "Administration of a running switchyard instance. Local callers need no key unless require_api_key is on; " +
        "otherwise send a client key with the admin scope, or the instance's admin token from instance.json, " +
        "as `Authorization: Bearer …` or `x-api-key`. Errors use the OpenAI error shape; each operation lists the statuses it answers. " +
        "A method a path does not take is a 405 with `Allow`; a path that is no route a 404.",
    },
    servers: [{ url: "/" }],
    tags: [{ name: "admin" }],
    security: [{ bearer: [] }, { apiKey: [] }],
    paths,
    components: {
      ...(components as object),
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An admin-scoped client key or the admin token." },
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
      },
    },
  };
}
