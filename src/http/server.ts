/**
 * The HTTP surface (SPEC 2.1) on Elysia: client endpoints, models, health, admin API, a 405 with
 * `Allow` in the path's client format for a served path asked with another method
 * ({@link methodNotAllowed}), and a JSON 404 for anything else (never an HTML page), both in the
 * client format of the path and headers ({@link unknownPath}). Bodies of API routes are not parsed
 * by Elysia: the guard reads them with its own size limit (SPEC G-4).
 */
import { Elysia } from "elysia";
import { errorResponse, type Endpoint, type Gateway } from "../../pipeline/index.ts";
import { hubError, type WireFormat } from "../../formats/hub.ts";
import { refusedUpgrade, ResponsesSocketSession, takesDeflateFrom, type SocketLike } from "./responses-socket.ts";
import { browserGuard, collapseSlashes, formatForPath, pathOf, requestUrl, type BrowserPolicy, type BrowserRefusal, type BrowserVerdict } from "./browser-guard.ts";
import { pathHint, rootAnswer } from "./path-aliases.ts";
import { StoreError } from "../store/types.ts";
import { closeIfBodyUnread, drainDeadlineMs, holdOpen, unreadBodyAnswer } from "./keep-alive.ts";
import { urlTooLong, wholeTarget } from "./request-head.ts";
import { allowedMethods, type ListedRoute } from "./admin-methods.ts";

/** What the server needs besides the gateway. */
export interface ServerDeps {
  gateway: Gateway;
  /** GET /v1/models data; `request` tells whose key asks (a key's models allow-list narrows the list, SPEC 9.6). */
  models: (anthropicShape: boolean, request: Request) => unknown;
  /** GET /v1/models/{id}; undefined when unknown (or outside the asking key's allow-list). */
  model: (id: string, anthropicShape: boolean, request: Request) => unknown | undefined;
  /**
   * Liveness + readiness: `ok` false makes it a 503; `db` is "ok", "unreachable" (a query fails, or
   * PostgreSQL is away) or "failing" (the embedded store's writes fail, a full disk: rows wait in memory).
   */
  health: () => { ok: boolean; db: "ok" | "unreachable" | "failing" };
  /** The admin API (SPEC 9.3) mounted under /admin/api. */
  admin?: (request: Request, peer: string | undefined, path: string) => Promise<Response>;
  /**
   * The admin API's access rule (src/admin/admin-api.ts `adminRefusal`): its 401 / 403, or undefined
   * when the caller may use the admin API. Applied under `/admin/api/` before an unknown path's 404 or a
   * wrong method's 405, as before every admin route.
   */
  adminRefusal?: (request: Request, peer: string | undefined) => Promise<Response | undefined>;
  /**
   * The /v1 guard for routes outside the pipeline (model list): undefined when the caller may
   * proceed, else the 401 in the client's format (SPEC G-1/G-2). `format` is `gemini` for the
   * `/v1beta` routes (the key may come as `x-goog-api-key` or `?key=`, the error in Gemini's shape).
   */
  authorize?: (request: Request, peer: string | undefined, format?: WireFormat) => Response | undefined;
  /** The Host, Origin and CORS rules' settings (SPEC 2.6), read per request. */
  browser: () => BrowserPolicy;
  /**
   * Told of each request the browser rules refused, with its refusal and the status answered, on every
   * path and both routers (src/http/browser-refusals.ts `BrowserRefusalLog.note`: counted and logged).
   * Never called for an allowed request.
   */
  onBrowserRefusal?: (request: Request, refusal: BrowserRefusal, status: number) => void;
  /**
   * Codex's Responses WebSocket (SPEC 2.5): idle time before a socket is closed, ms (config
   * `server.websocket_idle_timeout_ms`, default 10 min), read as each socket opens. The sockets run
   * frames through `gateway` (src/http/responses-socket.ts).
   */
  responsesSocketIdleMs?: () => number;
  /** Each time a socket's reply starts waiting for its client to read (ResponsesSocketOptions.onHeldBack; tests). */
  onResponsesSocketHeldBack?: () => void;
  /** Aborted when the gateway begins to stop (SPEC D-3): open Responses WebSockets take no new request (ResponsesSocketOptions.stopping). */
  stopping?: AbortSignal;
  /** GET /v1beta/models body (Gemini list shape), narrowed to the asking key's models allow-list (SPEC 9.6). */
  geminiModels?: (request: Request) => unknown;
  /** GET /v1beta/models/{model}; undefined when unknown (or outside the asking key's allow-list). */
  geminiModel?: (id: string, request: Request) => unknown | undefined;
  /** `server.body_timeout_ms`, read per request: bounds how long a small body a route left unread is drained (pipeline/unread-body.ts `closeIfBodyUnread`). */
  bodyTimeoutMs?: () => number;
}

/**
 * The part of Bun's server the handlers use: the socket's peer address (SPEC G-3), WebSocket upgrades,
 * the socket's idle timer (src/http/keep-alive.ts).
 */
interface PeerSource {
  requestIP(r: Request): { address: string } | null;
  upgrade?(r: Request, opts: { data: unknown }): boolean;
  timeout?(r: Request, seconds: number): void;
}

/** What Elysia's WebSocket dispatch calls on `ws.data` (elysia/ws: open, message, close). */
interface SocketHandlers {
  open(ws: SocketLike): void;
  message(ws: unknown, message: string | Buffer): void;
  /** The socket's send buffer was written out (backpressure, {@link ResponsesSocketSession.drain}). */
  drain(): void;
  close(): void;
}

/**
 * `GET /v1/responses` (SPEC 2.5): with `Upgrade: websocket`, the client-key rule of SPEC G-1/G-2 is
 * checked (the browser rules already ran in `onRequest`) and the socket is accepted with a
 * {@link ResponsesSocketSession}; a refused upgrade is an HTTP error, never a socket. Without the
 * upgrade header it is a 405 ({@link methodNotAllowed}: plain HTTP takes POST here).
 */
function responsesSocket(deps: ServerDeps) {
  return ({ request, server }: { request: Request; server: PeerSource | null }) => {
    if ((request.headers.get("upgrade") ?? "").toLowerCase() !== "websocket" || !server?.upgrade) {
      return methodNotAllowed(request.method, "/v1/responses", request.headers)!;
    }
    const peer = server.requestIP(request)?.address;
    // A refused upgrade (no key, a wrong, revoked or disabled one: 401/403) is answered by the gateway,
    // as POST /v1/responses is: logged, counted and recorded like that refusal (refusedUpgrade).
    if (deps.authorize?.(request, peer)) return refusedUpgrade(deps.gateway, request, peer);
    let session: ResponsesSocketSession | undefined;
    const handlers: SocketHandlers = {
      open(ws) {
        session = new ResponsesSocketSession(ws, { gateway: deps.gateway, upgrade: request, peer, idleMs: deps.responsesSocketIdleMs?.(), onHeldBack: deps.onResponsesSocketHeldBack, stopping: deps.stopping });
      },
      message(_ws, message) {
        session?.message(typeof message === "string" ? message : message.toString("utf8"));
      },
      drain() {
        session?.drain();
      },
      close() {
        session?.close();
      },
    };
    // Bun negotiates the extension from the request's header: without it, none (item 135 of docs/performance.md).
    if (!takesDeflateFrom(peer)) request.headers.delete("sec-websocket-extensions");
    if (server.upgrade(request, { data: handlers })) return undefined;
    return json(400, { error: { message: "The WebSocket upgrade failed.", type: "invalid_request_error", param: null, code: "websocket_upgrade_failed" } });
  };
}

const json = (status: number, body: unknown, headers?: Record<string, string>) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** The JSON 404 every unknown path gets (OpenAI error shape, SPEC 2.1). */
export function notFound(method: string, path: string): Response {
  return json(404, {
    error: { message: `Unknown path: ${method} ${path}`, type: "invalid_request_error", param: null, code: "unknown_url" },
  });
}

/**
 * The JSON 404 of a path no route serves (SPEC 2.1: never HTML, in the client's own format): the
 * format {@link formatForPath} gives the path and headers, the one rule the 405
 * ({@link methodNotAllowed}) follows too. So `/v1/messages/batches` answers Anthropic's
 * `{"type":"error","error":{"type":"not_found_error",…}}`, `/v1beta/cachedContents` (or any path asked
 * with `x-goog-api-key`) Google's `{"error":{"code":404,"message","status":"NOT_FOUND"}}` (formats
 * REFERENCE "Gemini errors"; `@google/genai` reports `error.status`), any other OpenAI's
 * `{"error":{"message","type":"invalid_request_error","param":null,"code":"unknown_url"}}`.
 * Runs on the not-found branch only, never for a served route.
 */
export function unknownPath(method: string, path: string, headers: Headers, note = ""): Response {
  return errorResponse(formatForPath(path, headers), hubError("not_found", `Unknown path: ${method} ${path}${note}`, { code: "unknown_url" }));
}

/**
 * What the 404 of {@link unknownPath} adds when the target asked for is a served path spelled another
 * way the gateway does not read as that path (README "Base-URL mistakes"): `//health` (repeated
 * slashes are read as one on the API paths under `/v1` and `/v1beta` only), `/health#x` (a request
 * target carries no fragment, RFC 9112 3.2). `shown` is the target as the 404 names it; "" otherwise.
 */
function unservedSpellingNote(shown: string, asked: string, hash: string): string {
  if (!PATH_METHODS.has(asked) && !OPTIONS_METHODS.has(asked)) return "";
  if (hash !== "") return ` (a request target carries no fragment: ask for ${asked} without "${hash.slice(0, 100)}").`;
  if (shown !== asked) return ` (repeated slashes are read as one only on the API paths under /v1 and /v1beta: ask for ${asked}).`;
  return "";
}

/**
 * The methods each served path takes, for a 405's `Allow` (RFC 9110 15.5.6; a GET route answers HEAD
 * too). The prefixes below: the model routes take GET (a model's entry) and POST (Gemini's `{model}:generateContent`, …) under
 * one pattern, a model id may hold colons. `/v1/responses` takes GET only as Codex's WebSocket upgrade
 * (SPEC 2.5). The admin API and the dashboard answer every method themselves.
 */
const PATH_METHODS: ReadonlyMap<string, string> = new Map([
  ["/v1/chat/completions", "POST"],
  ["/v1/responses", "GET, POST"],
  ["/v1/messages", "POST"],
  ["/v1/v1/messages", "POST"],
  ["/v1/messages/count_tokens", "POST"],
  ["/v1/v1/messages/count_tokens", "POST"],
  ["/v1/models", "GET, HEAD"],
  ["/v1beta/models", "GET, HEAD"],
  ["/health", "GET, HEAD, OPTIONS"],
  ["/metrics", "GET, HEAD"],
  ["/api/hello", "HEAD"],
]);
const PREFIX_METHODS: ReadonlyArray<readonly [string, string]> = [
  ["/v1/models/", "GET, HEAD, POST"],
  ["/v1beta/models/", "GET, HEAD, POST"],
];

/**
 * The 405 of a served path asked with a method it does not take (`GET /v1/chat/completions`, `DELETE
 * /v1/messages`): `Allow` lists the methods it takes, and the body is an error in the path's client
 * format (formatForPath: OpenAI's shape for Chat and Responses, Anthropic's for `/v1/messages`,
 * Gemini's for its paths), code `method_not_allowed`. Undefined for a path no route serves (then
 * {@link unknownPath}), and for a method the path takes (`GET //health`, `GET /health#x`: the path as
 * asked is not the served one; a 405 never lists the method it refuses), but `GET /v1/responses`
 * without the WebSocket upgrade. Runs on the not-found branch only, never for a served request.
 */
export function methodNotAllowed(method: string, path: string, headers: Headers): Response | undefined {
  let allow = PATH_METHODS.get(path);
  if (allow === undefined) for (const [prefix, methods] of PREFIX_METHODS) if (path.startsWith(prefix) && path.length > prefix.length) allow = methods;
  if (allow === undefined) return undefined;
  if (allow.split(", ").includes(method) && !(path === "/v1/responses" && method === "GET")) return undefined;
  const message =
    path === "/v1/responses" && method === "GET"
      ? "GET /v1/responses is served only as a WebSocket upgrade (Upgrade: websocket, Codex's Responses WebSocket); over plain HTTP send POST."
      : `The method ${method} is not allowed on ${path}; it takes ${allow.replace(/, (?=[A-Z]+$)/, " or ")}.`;
  const err = hubError("invalid_request", message, { status: 405, code: "method_not_allowed" });
  return errorResponse(formatForPath(path, headers), err, new Headers({ allow: path === "/v1/responses" && method === "GET" ? "POST" : allow }));
}

/** The `Allow` of an `OPTIONS` on these paths ({@link optionsAnswer}): the base address (a browser's GET is sent to the dashboard) and the health check. */
const OPTIONS_METHODS: ReadonlyMap<string, string> = new Map([
  ["/", "GET, HEAD, OPTIONS"],
  ["/health", "GET, HEAD, OPTIONS"],
]);

/**
 * `OPTIONS /` or `OPTIONS /health` that is no CORS preflight (no Origin: a load balancer's health
 * check; HAProxy's default `option httpchk` sends `OPTIONS /` and takes a 4xx as down): 204 with
 * `Allow` naming the path's methods (RFC 9110 9.3.7). Undefined for any other request. A preflight
 * (Origin and `Access-Control-Request-Method`) never gets here: the browser rules answer it, 204 or
 * refused (browser-guard.ts); nor does an OPTIONS from a foreign origin without a key to `/` (refused
 * there too). `/health/` is `/health` (as `GET /health/` is served); `//health` is not (its GET is a
 * 404 too). Runs on the not-found branch only.
 */
export function optionsAnswer(method: string, path: string, headers: Headers): Response | undefined {
  if (method !== "OPTIONS" || headers.has("access-control-request-method")) return undefined;
  // `/health/` as `/health`, as the GET route serves it (Elysia reads one trailing slash as none).
  const allow = OPTIONS_METHODS.get(path) ?? (path.length > 1 && path.endsWith("/") ? OPTIONS_METHODS.get(path.slice(0, -1)) : undefined);
  return allow === undefined ? undefined : new Response(null, { status: 204, headers: { allow } });
}

/** Paths whose bodies the guard reads with the configured limit (SPEC G-4). */
const GUARDED_PATHS = new Set([
  "/v1/chat/completions",
  "/v1/responses",
  "/v1/messages",
  "/v1/v1/messages",
  "/v1/messages/count_tokens",
  "/v1/v1/messages/count_tokens",
]);

/** Prefixes of the Gemini routes (`…/models/{model}:method`), whose bodies the guard reads too. */
const GEMINI_PREFIXES = ["/v1beta/models/", "/v1/models/"];

/** Body limit of every other route (admin API), in bytes. */
export const OTHER_BODY_LIMIT = 1024 * 1024;

/**
 * Bounds request bodies outside the guarded API routes before anything parses them: a declared
 * Content-Length over {@link OTHER_BODY_LIMIT} is a JSON 413, a body without a Content-Length a JSON
 * 411. Undefined when the request may proceed.
 *
 * It runs as an `onRequest` hook, which Elysia runs for every request before routing (a route-local
 * hook would run after the body is parsed). The headers are looked at first, so a request whose body
 * is within the limit (every API request but the largest prompts) never has its URL parsed here.
 */
export function bodyLimit(request: Request): Response | undefined {
  const declared = request.headers.get("content-length");
  const tooLarge = declared !== null && Number(declared) > OTHER_BODY_LIMIT;
  const unsized = declared === null && request.headers.has("transfer-encoding");
  if (!tooLarge && !unsized) return undefined;
  // The API routes read their bodies with the guard's own limit (SPEC G-4).
  // `/v1//chat/completions` is served as `/v1/chat/completions` (src/http/path-aliases.ts).
  const url = requestUrl(request.url).pathname;
  const path = collapseSlashes(url) ?? url;
  if (GUARDED_PATHS.has(path)) return undefined;
  if (request.method === "POST" && GEMINI_PREFIXES.some((p) => path.startsWith(p))) return undefined;
  if (tooLarge) {
    return json(413, { error: { message: `The request body exceeds ${OTHER_BODY_LIMIT} bytes.`, type: "invalid_request_error", param: null, code: "request_too_large" } });
  }
  return json(411, { error: { message: "Send the request body with a Content-Length.", type: "invalid_request_error", param: null, code: "length_required" } });
}

/** A Gemini route's path after `…/models/`: the model and the method (`generateContent`, …). */
export interface GeminiCall {
  model: string;
  method: string;
}

/**
 * Splits the rest of a Gemini path (`glm/glm-5.3:streamGenerateContent`) at its LAST colon: model ids
 * may hold slashes (`provider/model`) and colons (`ollama/qwen:7b`), methods never do. The model is
 * URL-decoded. Undefined when there is no `model:method`.
 */
export function parseGeminiCall(rest: string): GeminiCall | undefined {
  const colon = rest.lastIndexOf(":");
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  let model: string;
  try {
    model = decodeURIComponent(rest.slice(0, colon));
  } catch {
    return undefined;
  }
  return { model, method: rest.slice(colon + 1) };
}

/** `text` URL-decoded, or as it is when it does not decode (a stray `%`). */
function pathText(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A query parameter of a request URL (`?alt=sse&key=…`), reading only the query part; null when absent. */
function queryParam(url: string, name: string): string | null {
  const q = url.indexOf("?");
  return q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get(name);
}

/**
 * The Gemini endpoints (SPEC 2.1): `POST …/models/{model}:generateContent`,
 * `:streamGenerateContent` (server-sent events; the `?alt=sse` form every Gemini SDK asks for — the
 * JSON-array stream without it is refused with a 400 saying so), `:countTokens`. Other methods are a
 * 404 in Gemini's error shape. Those two refusals go through the gateway (IncomingRequest.refusal):
 * after the client key's check, and logged, counted and traced as other refused requests (until
 * 2026-12-07 they were answered here, with no log line, metric or span). So does a path without
 * `{model}:method` (`…/models/foo`: a 404, its model the rest of the path; until the evening of
 * 2026-12-07 answered here). `path` is the request's path
 * without its query, not decoded (`prefix` and then the rest); served by Bun's route
 * ({@link nativeApiRoutes}) and by Elysia's.
 */
function geminiApi(deps: ServerDeps, prefix: string) {
  return (request: Request, server: PeerSource | null, path: string): Response | Promise<Response> => {
    const call = parseGeminiCall(path.slice(prefix.length));
    const peer = server?.requestIP(request)?.address;
    if (!call) {
      // refused by the gateway after the key's check, as an unknown method is: logged, counted and traced
      holdOpen(server, request);
      const refusal = hubError("not_found", `Unknown path: POST ${path}; expected ${prefix}{model}:generateContent.`);
      return deps.gateway.handle({ request, endpoint: "gemini", peer, pathModel: pathText(path.slice(prefix.length)), pathStream: false, refusal });
    }
    switch (call.method) {
      case "generateContent":
        holdOpen(server, request); // the gateway's `finish` times the socket again (src/http/keep-alive.ts)
        return deps.gateway.handle({ request, endpoint: "gemini", peer, pathModel: call.model, pathStream: false });
      case "streamGenerateContent":
        holdOpen(server, request);
        if (queryParam(request.url, "alt") !== "sse") {
          // refused by the gateway's guard after the key's check: logged, counted and traced (SPEC O-3..O-5)
          const refusal = hubError("invalid_request", "streamGenerateContent is served as server-sent events only: add ?alt=sse (what the Gemini SDKs and Gemini CLI send).", { param: "alt" });
          return deps.gateway.handle({ request, endpoint: "gemini", peer, pathModel: call.model, pathStream: true, refusal });
        }
        return deps.gateway.handle({ request, endpoint: "gemini", peer, pathModel: call.model, pathStream: true });
      case "countTokens":
        holdOpen(server, request);
        return deps.gateway.handle({ request, endpoint: "gemini_count_tokens", peer, pathModel: call.model, pathStream: false });
      default: {
        holdOpen(server, request);
        const refusal = hubError("not_found", `The method ${call.method} is not served by this gateway (generateContent, streamGenerateContent and countTokens are).`);
        return deps.gateway.handle({ request, endpoint: "gemini", peer, pathModel: call.model, pathStream: false, refusal });
      }
    }
  };
}

/**
 * Whether a `GET /v1/models[/{model}]` comes from a Gemini API client: `@google/genai` lists and gets
 * models under `/v1/models` by default (its generateContent too, which the POST routes serve), sending
 * its key as `x-goog-api-key` and naming itself in `x-goog-api-client`; a hand-written call may put the
 * key in `?key=`. Such a caller gets the Gemini shapes of `/v1beta/models` (an OpenAI list would read as
 * no models to it), with its key read from where Gemini clients put it. OpenAI and Anthropic clients send
 * none of these.
 */
export function geminiClient(request: Request): boolean {
  const h = request.headers;
  if (h.has("x-goog-api-key") || h.has("x-goog-api-client")) return true;
  const q = request.url.indexOf("?");
  return q >= 0 && new URLSearchParams(request.url.slice(q + 1)).has("key");
}

/**
 * Headers `extra` added to `response` where it has none of that name (what Elysia does with the
 * `set.headers` an `onRequest` hook filled: a new Response with the merged headers, the response's own
 * winning), or `response` itself when `extra` is empty.
 */
function withHeaders(response: Response, extra: Record<string, string>): Response {
  let headers: Headers | undefined;
  for (const k in extra) {
    if (response.headers.has(k)) continue;
    headers ??= new Headers(response.headers);
    headers.set(k, extra[k]!);
  }
  return headers ? new Response(response.body, { status: response.status, statusText: response.statusText, headers }) : response;
}

/**
 * `response`, the answer of a verdict with one, after telling `deps.onBrowserRefusal` of it when it is a
 * refusal (not an allowed preflight's 204). Called only when the guard answered, never for an allowed request.
 */
function refusalNoted(deps: ServerDeps, request: Request, verdict: BrowserVerdict, response: Response): Response {
  if (verdict.refused !== undefined) deps.onBrowserRefusal?.(request, verdict.refused, response.status);
  return response;
}

/**
 * The API routes as Bun.serve `routes` of their own, handed to Bun beside Elysia's: Bun's router calls
 * them directly. The static POST paths (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`,
 * count_tokens and their `/v1/v1` aliases) and Gemini's POST `/v1beta/models/*` and `/v1/models/*`
 * (every other method of those paths goes on to Elysia through Bun's `fetch`: the model GETs, the
 * preflights). Each does what the Elysia route and the app's `onRequest` hook do for these paths, in
 * the same order: the browser rules first (SPEC 2.6: a refusal answers at once; the CORS headers go on
 * the answer), the socket's idle timer off, the gateway with the socket's peer. The body limit hook
 * never refuses these paths (the guard enforces `max_body_bytes`, SPEC G-4). Why: with an app-level
 * `onRequest` hook Elysia compiles every route with the request's URL read twice, its query index and
 * the hook's call around the handler; in the running server that was ~6 µs per request on the static
 * paths (docs/performance.md item 131), and Elysia's dynamic router added more on Gemini's (item 147).
 * Elysia keeps its own routes for the same paths (its `handle`, and any path Bun does not route here).
 */
function nativeApiRoutes(deps: ServerDeps): Record<string, { POST: (request: Request, server: PeerSource) => Response | Promise<Response> }> {
  const guarded = (serve: (request: Request, server: PeerSource) => Response | Promise<Response>) => ({
    POST(request: Request, server: PeerSource): Response | Promise<Response> {
      const verdict = browserGuard(request, deps.browser());
      // Answered before the body (a foreign page, a preflight): Connection: close when one was declared.
      if (verdict.response) return closeIfBodyUnread(request, refusalNoted(deps, request, verdict, verdict.response), drainDeadlineMs(deps.bodyTimeoutMs?.()));
      let answer = serve(request, server);
      // A reply made at once is made before the body is read (a Gemini path's 404 or 414): the same rule.
      if (answer instanceof Response) answer = closeIfBodyUnread(request, answer, drainDeadlineMs(deps.bodyTimeoutMs?.()));
      for (const _ in verdict.headers) return answer instanceof Response ? withHeaders(answer, verdict.headers) : answer.then((res) => withHeaders(res, verdict.headers));
      return answer;
    },
  });
  const route = (endpoint: Endpoint) =>
    guarded((request, server) => {
      holdOpen(server, request);
      return deps.gateway.handle({ request, endpoint, peer: server.requestIP(request)?.address });
    });
  const gemini = (prefix: string) => {
    const serve = geminiApi(deps, prefix);
    return guarded((request, server) => {
      const url = request.url;
      return urlTooLong(request, url) ?? serve(request, server, pathOf(url));
    });
  };
  return {
    "/v1/chat/completions": route("chat"),
    "/v1/responses": route("responses"),
    "/v1/messages": route("messages"),
    "/v1/v1/messages": route("messages"),
    "/v1/messages/count_tokens": route("count_tokens"),
    "/v1/v1/messages/count_tokens": route("count_tokens"),
    "/v1beta/models/*": gemini("/v1beta/models/"),
    "/v1/models/*": gemini("/v1/models/"),
  };
}

/**
 * Builds the Elysia app. Call `.listen()` on the result. Elysia's Bun adapter hands every static route
 * to Bun.serve's native `routes`, so Bun's router matches them; the API's POST routes, Gemini's
 * included, are Bun routes of their own ({@link nativeApiRoutes}); the other wildcard routes (the model
 * GETs, admin) and unknown paths go through Elysia's router via Bun's `fetch`.
 */
export function createServer(deps: ServerDeps) {
  /** How long a small body a route left unread is drained before its reply (pipeline/unread-body.ts). */
  const drainMs = () => drainDeadlineMs(deps.bodyTimeoutMs?.());
  // A request the gateway serves is not idle-timed until its reply ends (the gateway's `finish` times
  // the socket again: src/http/keep-alive.ts).
  const api = (endpoint: Endpoint) => ({ request, server }: { request: Request; server: PeerSource | null }) => {
    holdOpen(server, request);
    return deps.gateway.handle({ request, endpoint, peer: server?.requestIP(request)?.address });
  };
  const noParse = { parse: "none" as const };
  /**
   * A Gemini handler as an Elysia route, with the request's path ({@link pathOf}: no query, not decoded).
   * Not Elysia's `path`, which it cuts at the first "/" after the URL's 11th character: right for a bare
   * request target (no Host) only because request-head.ts wholeTarget made it a URL first.
   */
  const elysiaGemini = (serve: ReturnType<typeof geminiApi>) => ({ request, server }: { request: Request; server: PeerSource | null }) => serve(request, server, pathOf(request.url));
  /** `GET /v1beta/models` (and `/v1/models` asked by a Gemini client): the Gemini list shape, its key rules. */
  const geminiList = (request: Request, server: PeerSource | null) => {
    const denied = deps.authorize?.(request, server?.requestIP(request)?.address, "gemini");
    if (denied) return denied;
    return json(200, deps.geminiModels?.(request) ?? { models: [] });
  };
  /**
   * `GET /v1beta/models/{model}` (and `/v1/models/{model}` asked by a Gemini client); `prefix` is the path's
   * part before the id; `path` the path served (the URL's, or its collapsed form: src/http/path-aliases.ts).
   */
  const geminiOne = (request: Request, server: PeerSource | null, prefix: string, path = requestUrl(request.url).pathname) => {
    const denied = deps.authorize?.(request, server?.requestIP(request)?.address, "gemini");
    if (denied) return denied;
    let id: string;
    try {
      id = decodeURIComponent(path.slice(prefix.length));
    } catch {
      id = "";
    }
    const m = deps.geminiModel?.(id, request);
    if (m === undefined) return errorResponse("gemini", hubError("not_found", `models/${id} is not found for this gateway.`));
    return json(200, m);
  };

  /** `GET /v1/models`: the OpenAI (or, with `anthropic-version`, Anthropic) list; Gemini clients get Gemini's. */
  const modelList = (request: Request, server: PeerSource | null) => {
    if (geminiClient(request)) return geminiList(request, server);
    const denied = deps.authorize?.(request, server?.requestIP(request)?.address);
    if (denied) return denied;
    return json(200, deps.models(request.headers.has("anthropic-version"), request));
  };
  /** `GET /v1/models/{id}` with `path` the path served (the id is the rest of it, slashes included). */
  const modelOne = (request: Request, server: PeerSource | null, path: string) => {
    if (geminiClient(request)) return geminiOne(request, server, "/v1/models/", path);
    const denied = deps.authorize?.(request, server?.requestIP(request)?.address);
    if (denied) return denied;
    const raw = path.slice("/v1/models/".length);
    let id = raw;
    try {
      id = decodeURIComponent(raw);
    } catch {
      // A malformed escape (`%E0%A4%A`) names no model: answered as unknown below.
    }
    const m = deps.model(id, request.headers.has("anthropic-version"), request);
    if (m === undefined) {
      const err = hubError("model_not_found", `The model \`${id}\` does not exist.`, { param: "model", code: "model_not_found" });
      return errorResponse(request.headers.has("anthropic-version") ? "anthropic-messages" : "openai-chat", err);
    }
    return json(200, m);
  };
  const POST_ALIASES: ReadonlyMap<string, Endpoint> = new Map([
    ["/v1/chat/completions", "chat"],
    ["/v1/responses", "responses"],
    ["/v1/messages", "messages"],
    ["/v1/v1/messages", "messages"],
    ["/v1/messages/count_tokens", "count_tokens"],
    ["/v1/v1/messages/count_tokens", "count_tokens"],
  ]);
  const geminiV1beta = geminiApi(deps, "/v1beta/models/");
  const geminiV1 = geminiApi(deps, "/v1/models/");
  /**
   * A path no route matched whose repeated slashes collapse to a served API path (`/v1//chat/completions`,
   * a base URL ending in "/": src/http/path-aliases.ts), served as that path with the request as it came
   * (its body unread, its socket's peer); undefined for any other. The browser rules ran already on the
   * request (`onRequest`; they treat repeated slashes as one).
   */
  const socket = responsesSocket(deps);
  const servedAlias = (request: Request, server: PeerSource | null, path: string): Response | Promise<Response> | undefined => {
    if (request.method === "POST") {
      const endpoint = POST_ALIASES.get(path);
      if (endpoint !== undefined) return api(endpoint)({ request, server });
      if (path.startsWith("/v1beta/models/")) return geminiV1beta(request, server, path);
      if (path.startsWith("/v1/models/")) return geminiV1(request, server, path);
      return undefined;
    }
    if (request.method !== "GET" && request.method !== "HEAD") return undefined;
    // Codex's Responses WebSocket (SPEC 2.5) at `/v1//responses`: the same handler as the plain path's
    // route (its client-key rule, its 405 without the upgrade header); the session's frames are
    // requests to `/v1/responses` whatever path the upgrade named (src/http/responses-socket.ts). An
    // accepted upgrade answers nothing (undefined: here "not served"), so an empty Response stands for
    // it, which Bun ignores once the socket is upgraded, as it ignores the one Elysia makes of the plain
    // route's undefined.
    if (path === "/v1/responses" && request.method === "GET") return socket({ request, server }) ?? new Response(null);
    if (path === "/v1/models") return modelList(request, server);
    if (path === "/v1beta/models") return geminiList(request, server);
    if (path.startsWith("/v1/models/") && path.length > "/v1/models/".length) return modelOne(request, server, path);
    if (path.startsWith("/v1beta/models/") && path.length > "/v1beta/models/".length) return geminiOne(request, server, "/v1beta/models/", path);
    return undefined;
  };

  // Bun's router serves the static API routes itself (nativeApiRoutes); Elysia's routes below stay for
  // the same paths through `app.handle` and for every other method and path.
  const app = new Elysia({ serve: { routes: nativeApiRoutes(deps) } as never })
    // A request with no Host (HTTP/1.0) is routed by its whole path, as with a Host (request-head.ts).
    .wrap(wholeTarget as never)
    // SPEC 2.6 first, for every request and path (WebSocket upgrades included): nothing else runs for a
    // refused Host or a key-less foreign Origin, and CORS headers go on every answer to a configured origin.
    .onRequest(({ request, set }) => {
      const verdict = browserGuard(request, deps.browser());
      // An answer here reads no body: Connection: close when one was declared, unless small and whole (pipeline/unread-body.ts).
      if (verdict.response) return closeIfBodyUnread(request, refusalNoted(deps, request, verdict, verdict.response), drainMs());
      Object.assign(set.headers, verdict.headers);
      // A URL past the gateway's own limit (src/http/request-head.ts): a 414 in the path's format.
      const refused = urlTooLong(request) ?? bodyLimit(request);
      return refused && closeIfBodyUnread(request, refused, drainMs());
    })
    // Every route's answer: Connection: close when the request's declared body was left unread (a route
    // that reads none), so that Bun closes the connection instead of waiting for the rest of the body;
    // a small body that arrived whole keeps the connection (drained first; the reply waits for it). A
    // value Elysia maps (the admin API's JSON objects) is made a Response first, so one function
    // decides for every answer (src/http/keep-alive.ts unreadBodyAnswer). Errors and unknown paths: `onError` below.
    .mapResponse(({ request, responseValue, set }) => unreadBodyAnswer(request, responseValue, set, drainMs()))
    .post("/v1/chat/completions", api("chat") as never, noParse)
    .post("/v1/responses", api("responses") as never, noParse)
    // Codex's Responses WebSocket (SPEC 2.5).
    .get("/v1/responses", socket as never)
    .post("/v1/messages", api("messages") as never, noParse)
    .post("/v1/v1/messages", api("messages") as never, noParse)
    // count_tokens runs through the gateway (guard, resolve, order) like every API route (SPEC G-1…G-4).
    .post("/v1/messages/count_tokens", api("count_tokens") as never, noParse)
    .post("/v1/v1/messages/count_tokens", api("count_tokens") as never, noParse)
    .get("/v1/models", (({ request, server }: { request: Request; server: PeerSource | null }) => modelList(request, server)) as never)
    // Model ids carry the provider prefix (`glm/glm-5.3`): the rest of the path is the id, slashes included.
    .get("/v1/models/*", (({ request, server }: { request: Request; server: PeerSource | null }) => modelOne(request, server, requestUrl(request.url).pathname)) as never)
    // Gemini (SPEC 2.1): the same POST routes under /v1beta/models/ and /v1/models/ (@google/genai's default).
    .post("/v1beta/models/*", elysiaGemini(geminiApi(deps, "/v1beta/models/")) as never, noParse)
    .post("/v1/models/*", elysiaGemini(geminiApi(deps, "/v1/models/")) as never, noParse)
    .get("/v1beta/models", (({ request, server }: { request: Request; server: PeerSource | null }) => geminiList(request, server)) as never)
    .get("/v1beta/models/*", (({ request, server }: { request: Request; server: PeerSource | null }) => geminiOne(request, server, "/v1beta/models/")) as never)
    .get("/health", () => {
      const h = deps.health();
      return json(h.ok ? 200 : 503, { status: h.ok ? "ok" : "degraded", db: h.db });
    })
    // Claude Code probes the base URL with HEAD /api/hello before its first request.
    .head("/api/hello", () => new Response(null, { status: 200 }))
    .all("/admin/api/*", (async ({ request, server }: { request: Request; server: PeerSource | null }) => {
      if (!deps.admin) {
        // SPEC 9.3: the access rule first, whatever the method or path (an OPTIONS without a CORS
        // preflight's headers included; a preflight was answered by the browser guard, as on /v1): a
        // caller it refuses gets its 401 / 403 and learns neither which paths exist nor their methods.
        const refused = await deps.adminRefusal?.(request, server?.requestIP(request)?.address);
        if (refused) return refused;
        const path = requestUrl(request.url).pathname;
        const allow = allowedMethods(app.routes as readonly ListedRoute[], "/admin/api/", path);
        if (allow === undefined) return notFound(request.method, path);
        const takes = allow.replace(/, (?=[A-Z]+$)/, " or ");
        return json(405, { error: { message: `The method ${request.method} is not allowed on ${path}; it takes ${takes}.`, type: "invalid_request_error", param: null, code: "method_not_allowed" } }, { allow });
      }
      const path = requestUrl(request.url).pathname.slice("/admin/api".length) || "/";
      // The live event stream is open for as long as its reader wants (src/http/keep-alive.ts).
      if (path === "/events") holdOpen(server, request);
      return deps.admin(request, server?.requestIP(request)?.address, path);
    }) as never, noParse)
    // Every answer of an error or unknown path too, Connection: close when its body was left unread.
    // (Its context destructured: Elysia reads from the hooks' parameters which parts of the request they
    // use, and a hook taking the whole context would make every route parse, so wait for, the body.)
    .onError(({ code, request, error, server }) => {
      const answer = errorAnswerOf(code, request, error, server);
      return answer instanceof Response ? closeIfBodyUnread(request, answer, drainMs()) : answer.then((res) => closeIfBodyUnread(request, res, drainMs()));
    });
  /** The answer of an error Elysia caught (`onError`), or of a path no route matched. */
  function errorAnswerOf(code: unknown, request: Request, error: unknown, server: unknown): Response | Promise<Response> {
    const url = requestUrl(request.url);
    const path = url.pathname;
    if (code === "NOT_FOUND") {
      // A base URL ending in "/" (`/v1//chat/completions`): served as the collapsed path; a base URL
      // without /v1 or an endpoint not served: a 404 that says so (src/http/path-aliases.ts).
      // (A bare request target, no Host, was routed by its whole path too: request-head.ts wholeTarget.)
      const collapsed = collapseSlashes(path);
      const served = collapsed === undefined ? undefined : servedAlias(request, server as PeerSource | null, collapsed);
      if (served !== undefined) return served;
      const asked = collapsed ?? path;
      // OPTIONS on the path as asked: `OPTIONS //health` is the 404 `GET //health` is (README: repeated
      // slashes are read as one on the API paths only).
      return (
        optionsAnswer(request.method, path + url.hash, request.headers) ??
        methodNotAllowed(request.method, asked, request.headers) ??
        rootAnswer(request.method, asked, request.headers) ??
        pathHint(request.method, asked, request.headers) ??
        unknownPath(request.method, path + url.hash, request.headers, unservedSpellingNote(path, asked, url.hash))
      );
    }
    // Bad input that reached Elysia's own parser or a route's declared schema is the client's error
    // (SPEC 2.6, G-4): a 400 in the client's format naming the field, never a 500.
    if (code === "PARSE") {
      return errorResponse(formatForPath(path, request.headers), hubError("invalid_request", "The request body is not valid JSON."));
    }
    if (code === "VALIDATION") {
      const issue = (error as { valueError?: { message?: string; path?: Array<{ key?: unknown }> } }).valueError;
      const param = (issue?.path ?? []).map((p, i) => (typeof p.key === "number" ? `[${p.key}]` : `${i ? "." : ""}${String(p.key)}`)).join("");
      const message = `${param ? `${param}: ` : ""}${issue?.message ?? "The request does not have the expected shape."}`;
      return errorResponse(formatForPath(path, request.headers), hubError("invalid_request", message, param ? { param } : {}));
    }
    // A read the store cannot answer (the shared database is away, SPEC D-2; the store closing at
    // shutdown): the admin API says so with 503, not the generic 500 below.
    if (error instanceof StoreError && (error.code === "unavailable" || error.code === "closed")) {
      return json(503, { error: { message: error.message, type: "unavailable_error", param: null, code: null } });
    }
    // A change made by hand (unlock, close-circuit, restore) the shared database refused: its reason
    // (the SQLSTATE and the database's message, shared-state-writes.ts `refusedChangeError`), not the 500 below.
    if (error instanceof StoreError && error.code === "rejected") {
      return json(503, { error: { message: error.message, type: "unavailable_error", param: null, code: "store_rejected" } });
    }
    console.error(JSON.stringify({ level: "error", msg: "http error", path, code, error: error instanceof Error ? error.message : String(error) }));
    return json(500, { error: { message: "The gateway failed to handle this request.", type: "server_error", param: null, code: null } });
  }
  return app;
}
