/**
 * Browsers and the loopback exemption (SPEC 2.6, G-6): web pages the user visits are not clients.
 *
 * {@link browserGuard} is the first thing the server runs for every request, on every path (`/v1`,
 * `/v1beta`, `/admin/api`, `/dashboard`, `/metrics`, `/health`, WebSocket upgrades), before routing,
 * body parsing or authentication:
 *
 * - Host rule: a `Host` that is a domain name other than `localhost`, the bind host or an entry of
 *   `server.allowed_hosts` is refused with 421 (DNS rebinding: a hostile name resolving to 127.0.0.1
 *   would make the attacker's page same-origin). IP literals (`127.0.0.1`, `[::1]`, a LAN address)
 *   cannot be rebound and pass. A request without `Host` (HTTP/1.0; never a browser) passes.
 * - Origin rule: an `Origin` that is neither the gateway's own origin (`http://` + the `Host` it was
 *   reached at) nor an entry of `server.cors_origins` gets no loopback exemption. Without a client key
 *   it is refused here with 403 (nothing else runs); with one it proceeds as a remote caller, so the key
 *   is checked like any remote caller's. Own and configured origins are vouched for
 *   ({@link vouchForOrigin}); an Origin nobody vouched for counts as remote everywhere (`isRemote`).
 *   `GET /health` needs no key from anyone and stays open.
 *   A listed app origin (`app://obsidian.md`, `tauri://localhost`, `chrome-extension://<id>`: Electron and
 *   Tauri apps, browser extensions) is matched by the header's exact string; `Origin: null` never is.
 * - CORS rule: preflights (`OPTIONS` with `Access-Control-Request-Method`) and `Access-Control-Allow-*`
 *   headers only for `server.cors_origins`, echoing the exact origin, never `*`, with `Vary: Origin`.
 *   A preflight from any other origin is a 403 without CORS headers, so the browser blocks the call.
 * - `server.cors_origins` opens the client API only ({@link clientSurface}: `/v1`, `/v1beta`, and the
 *   open `/health`, `/api/hello`): on any other path (`/admin/api`, `/metrics`, `/dashboard`) a listed
 *   origin is a foreign one, no CORS headers, no loopback exemption (since 2026-12-06; until then every
 *   page on a listed origin could mint keys through the admin API: try21's tryout). The dashboard is
 *   served from the gateway's own origin and is not affected.
 *
 * Errors are JSON in the client's format for the path ({@link formatForPath}). A refusal's verdict names
 * its reason and the refused value ({@link BrowserRefusal}): the server hands it to
 * src/http/browser-refusals.ts, which counts it in `switchyard_browser_refusals_total` and logs it
 * (bounded); an allowed request's verdict carries nothing more.
 */
import { hubError, type HubError, type WireFormat } from "../../formats/hub.ts";
import { errorResponse, presentedKey, vouchForOrigin } from "../../pipeline/index.ts";

/** What the rules are checked against; read per request (the config may be reloaded). */
export interface BrowserPolicy {
  /** The address the gateway was told to bind (`server.host` or `--host`); accepted as a Host name. */
  bindHost: string;
  /** `server.allowed_hosts`: extra Host names, lower-case, without port. */
  allowedHosts: readonly string[];
  /**
   * `server.cors_origins`: web origins in `URL.origin` form (`http://localhost:5173`) and apps' own
   * origins, lower-case (`app://obsidian.md`, `tauri://localhost`, `chrome-extension://<id>`).
   */
  corsOrigins: readonly string[];
}

/**
 * Why the browser rules refused a request: `host` (the Host rule's 421), `origin` (a foreign Origin
 * without a key, 403), `preflight` (a CORS preflight from an origin not allowed on the path, 403).
 */
export type BrowserRefusalReason = "host" | "origin" | "preflight";

/** A refusal of {@link browserGuard}: its reason and the header value refused (Host's for `host`, else Origin's), raw. */
export interface BrowserRefusal {
  reason: BrowserRefusalReason;
  value: string;
}

/** The outcome of {@link browserGuard}. */
export interface BrowserVerdict {
  /** The refusal (421/403 JSON, or the answer to a preflight) when the request must not go further. */
  response?: Response;
  /** Set when `response` is a refusal (not the 204 of an allowed preflight): what was refused and why. */
  refused?: BrowserRefusal;
  /** Headers every answer to this request carries (`Access-Control-*`, `Vary`). */
  headers: Record<string, string>;
}

/** The verdict of a request without an `Origin` whose Host passes: no refusal, no headers (shared, never written to). */
const PASS: BrowserVerdict = Object.freeze({ headers: Object.freeze({}) as Record<string, string> });

/** Response headers a configured web origin may read (SPEC 2.4; `x-should-retry`, which the OpenAI and Anthropic SDKs obey). */
const EXPOSED_HEADERS = [
  "x-request-id",
  "x-switchyard-route-id",
  "x-switchyard-fallback",
  "x-switchyard-warning",
  "x-switchyard-cache",
  "retry-after",
  "x-should-retry",
].join(", ");

const PREFLIGHT_METHODS = "GET, POST, PUT, PATCH, DELETE";
/** Request headers a configured web origin may send when its preflight names none. */
const DEFAULT_ALLOWED_HEADERS = "authorization, x-api-key, content-type, anthropic-version, anthropic-beta, x-goog-api-key";
const PREFLIGHT_MAX_AGE_SECONDS = "600";

/** Paths that need no key from anyone (SPEC 2.1): a foreign Origin changes nothing for them. */
const OPEN_PATHS = new Set(["/health", "/api/hello"]);

/**
 * Whether `path` (as the router sees it: Bun resolves `.`/`..` segments in `request.url`) is the client
 * API a `server.cors_origins` origin may call: `/v1`, `/v1beta` and what is under them, and the
 * paths open to anyone. Not `/admin/api`, `/metrics` or `/dashboard`.
 */
export function clientSurface(path: string): boolean {
  if (OPEN_PATHS.has(path) || /^\/v1(beta)?(\/|$)/.test(path)) return true;
  // `//v1/chat/completions` (a base URL ending in "/"): served as the collapsed path (src/http/path-aliases.ts).
  const collapsed = collapseSlashes(path);
  return collapsed !== undefined && clientSurface(collapsed);
}

/**
 * `path` with each run of slashes made one (`/v1//chat/completions` → `/v1/chat/completions`, what a base
 * URL ending in "/" asks for); undefined when it has none.
 */
export function collapseSlashes(path: string): string | undefined {
  return path.includes("//") ? path.replace(/\/{2,}/g, "/") : undefined;
}

const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6_LITERAL_RE = /^\[[0-9a-f:.]+(%25[0-9a-z._~-]+)?\]$/i;

/**
 * Splits a `Host` header value into its host name (lower-case; IPv6 keeps its brackets) and whether
 * that is an IP literal. Undefined when the value is not a syntactically valid Host.
 */
export function parseHostHeader(value: string): { name: string; ip: boolean } | undefined {
  const host = value.trim().toLowerCase();
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    if (end < 0) return undefined;
    const name = host.slice(0, end + 1);
    const rest = host.slice(end + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return undefined;
    return IPV6_LITERAL_RE.test(name) ? { name, ip: true } : undefined;
  }
  const m = /^([^:]+)(:\d{1,5})?$/.exec(host);
  if (!m) return undefined;
  return { name: m[1], ip: IPV4_RE.test(m[1]) };
}

/**
 * The last `Host` value {@link hostAllowed} accepted, with the policy's names it was checked against: a
 * gateway is reached at one or a few host names, so most requests repeat it and skip the parse (two
 * regular expressions) and the comparisons (issue 17). Only an acceptance is remembered; a policy with
 * another bind host or another `allowedHosts` array (a reloaded config) checks again.
 */
let lastAccepted: { value: string; bindHost: string; allowedHosts: readonly string[] } | undefined;

/** Whether the Host rule accepts this `Host` value (see the module comment). */
export function hostAllowed(value: string | null, policy: BrowserPolicy): boolean {
  if (value === null) return true;
  const last = lastAccepted;
  if (last !== undefined && last.value === value && last.bindHost === policy.bindHost && last.allowedHosts === policy.allowedHosts) return true;
  const host = parseHostHeader(value);
  if (!host) return false;
  const ok = host.ip || host.name === "localhost" || host.name === policy.bindHost.toLowerCase() || policy.allowedHosts.includes(host.name);
  if (ok) lastAccepted = { value, bindHost: policy.bindHost, allowedHosts: policy.allowedHosts };
  return ok;
}

/** The origin a browser names for a page of this gateway reached at `host` (`http://` + Host, normalised). */
function ownOrigin(host: string | null): string | undefined {
  if (host === null) return undefined;
  try {
    return new URL(`http://${host}`).origin;
  } catch {
    return undefined;
  }
}

/** `URL.origin` form of an `Origin` header value; undefined for `null` or garbage. */
function normalOrigin(value: string): string | undefined {
  try {
    const u = new URL(value);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The client format errors on `path` are written in (SPEC 2.1: errors come in the client's own
 * format), one rule for every answer the gateway writes before a route runs or when none serves the
 * path (browser refusals, 414, 404, 405, a body Elysia could not parse). By the path's family first:
 * Anthropic Messages for anything under `/v1/messages` or `/v1/v1/messages` (`/v1/messages/batches`,
 * `/v1/messagesX` included), Gemini for anything under `/v1beta` and the `/v1/models/{model}:method`
 * routes, OpenAI Responses under `/v1/responses`, OpenAI Chat under `/v1/chat/`, `/admin/` and
 * `/dashboard`. Any other path (the model lists, a path no route serves) by who the headers say asks:
 * Anthropic's `anthropic-version` → Anthropic Messages, `x-goog-api-key` / `x-goog-api-client`
 * (`@google/genai`) → Gemini, else OpenAI Chat. Repeated slashes count as one (`/v1//messages` is
 * Anthropic's, as the path is served: src/http/path-aliases.ts).
 */
export function formatForPath(path: string, headers: Headers): WireFormat {
  path = collapseSlashes(path) ?? path;
  if (path.startsWith("/v1/messages") || path.startsWith("/v1/v1/messages")) return "anthropic-messages";
  if (path.startsWith("/v1beta/") || path === "/v1beta" || /^\/v1\/models\/[^]*:(generateContent|streamGenerateContent|countTokens)$/.test(path)) return "gemini";
  if (path.startsWith("/v1/responses")) return "openai-responses";
  if (path.startsWith("/v1/chat/") || path.startsWith("/admin/") || path.startsWith("/dashboard")) return "openai-chat";
  if (headers.has("anthropic-version")) return "anthropic-messages";
  // @google/genai lists and gets models under /v1/models (src/http/server.ts, geminiClient) and calls APIs the gateway does not serve
  if (headers.has("x-goog-api-key") || headers.has("x-goog-api-client")) return "gemini";
  return "openai-chat";
}

function refuse(request: Request, path: string, err: HubError, headers: Record<string, string>, refused: BrowserRefusal): BrowserVerdict {
  const response = errorResponse(formatForPath(path, request.headers), err, new Headers(headers));
  return { response, headers, refused };
}

/**
 * Applies the Host, Origin and CORS rules of SPEC 2.6 to a request (see the module comment). Returns
 * the refusal or preflight answer to send instead of running the request (a refusal with `refused`
 * set), and the headers to add to whatever is answered. Marks own and configured origins as vouched for ({@link vouchForOrigin}).
 * Never throws; reads no body.
 */
export function browserGuard(request: Request, policy: BrowserPolicy): BrowserVerdict {
  const host = request.headers.get("host");
  if (!hostAllowed(host, policy)) {
    const name = host === null ? "" : (parseHostHeader(host)?.name ?? host);
    return refuse(
      request,
      pathOf(request.url),
      hubError(
        "permission",
        `This gateway does not answer for the host name "${name.slice(0, 200)}" (a web page may be trying DNS rebinding). ` +
          `Reach it as localhost or by IP address, or add the name to server.allowed_hosts in the config file.`,
        { status: 421, code: "host_not_allowed" },
      ),
      {},
      { reason: "host", value: host ?? "" },
    );
  }

  const origin = request.headers.get("origin");
  // No Origin (every API client, curl, the SDKs): nothing to add; the URL is not even read.
  if (origin === null) return PASS;
  const headers: Record<string, string> = { vary: "Origin" };
  const path = pathOf(request.url);
  const normal = normalOrigin(origin);
  // An app's own origin (`app://obsidian.md`) has no URL.origin ("null"): its header string is compared
  // as it is; the literal `null` is never an entry (src/config/schema.ts refuses it).
  const listed = normal !== undefined ? policy.corsOrigins.includes(normal) : origin !== "null" && policy.corsOrigins.includes(origin);
  const configured = listed && clientSurface(path);
  const own = normal !== undefined && normal === ownOrigin(host);

  if (request.method === "OPTIONS" && request.headers.has("access-control-request-method")) {
    if (!configured) {
      return refuse(
        request,
        path,
        hubError(
          "permission",
          listed
            ? `Cross-origin calls from ${origin.slice(0, 200)} are allowed to the client API only (/v1, /v1beta), not to ${path.slice(0, 200)}.`
            : `Cross-origin calls from ${origin.slice(0, 200)} are not allowed. To allow a web origin, add it to server.cors_origins in the config file.`,
          { code: "origin_not_allowed" },
        ),
        headers,
        { reason: "preflight", value: origin },
      );
    }
    const response = new Response(null, {
      status: 204,
      headers: {
        ...headers,
        "access-control-allow-origin": origin,
        "access-control-allow-methods": PREFLIGHT_METHODS,
        "access-control-allow-headers": request.headers.get("access-control-request-headers") ?? DEFAULT_ALLOWED_HEADERS,
        "access-control-max-age": PREFLIGHT_MAX_AGE_SECONDS,
      },
    });
    return { response, headers };
  }

  if (configured || own) {
    vouchForOrigin(request.headers);
    if (configured) {
      headers["access-control-allow-origin"] = origin;
      headers["access-control-expose-headers"] = EXPOSED_HEADERS;
    }
    return { headers };
  }
  // A foreign origin: no loopback exemption (isRemote sees the unvouched Origin). Without any key there
  // is nothing to check, so it is refused before anything runs.
  // Gemini clients send their key as x-goog-api-key or ?key= (SPEC 2.1).
  const geminiUrl = formatForPath(path, request.headers) === "gemini" ? request.url : undefined;
  if (presentedKey(request.headers, geminiUrl) === undefined && !OPEN_PATHS.has(path)) {
    return refuse(
      request,
      path,
      hubError(
        "permission",
        listed
          ? `This request comes from a web page (Origin ${origin.slice(0, 200)}) and carries no key; server.cors_origins trusts that origin for the client API (/v1, /v1beta) only, not for ${path.slice(0, 200)}, which needs a key like a remote caller.`
          : `This request comes from a web page (Origin ${origin.slice(0, 200)}) and carries no client key; web pages do not get the loopback exemption. ` +
            `Send a client key (Authorization: Bearer KEY or x-api-key), or add the origin to server.cors_origins in the config file to trust it.`,
        { code: "origin_not_allowed" },
      ),
      headers,
      { reason: "origin", value: origin },
    );
  }
  return { headers };
}

/**
 * The path of a request URL without parsing the whole URL (`http://host/path?query` → `/path`), not
 * decoded. Bun's `request.url` is the bare request target (`/path?query`, no scheme or authority) when
 * the request has no Host or an empty one (`Host:`; HTTP/1.0 without Host): that is its own path from
 * its first character (`//v1/x` included), where `new URL(request.url)` throws. One scan, no URL object
 * (every request of the API reads it: issue 17).
 */
export function pathOf(url: string): string {
  const start = url.charCodeAt(0) === 47 /* "/" */ ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q < 0 ? url.slice(start) : url.slice(start, q);
}

/**
 * `request.url` as a URL object, for the few readers that need more than {@link pathOf} (a normalised
 * pathname, the protocol, the host): Bun's bare request target of a request with no or an empty `Host`
 * (`/v1/models/x`, see {@link pathOf}) is read as a path of `http://localhost`, where `new URL(url)`
 * throws (a 500 until 2026-12-07). A full URL is parsed as it is.
 */
export function requestUrl(url: string): URL {
  return new URL(url.charCodeAt(0) === 47 /* "/" */ ? `http://localhost${url}` : url);
}
