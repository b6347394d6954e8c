/**
 * The bounds of a request's head (its request line and headers; SPEC 2.6: bad input gets a clear
 * error in the client's format, never an empty one). Bun's HTTP parser answers a head longer than its
 * limit with its own `431 Request Header Fields Too Large` and an empty body, before any handler runs
 * (16 KiB by default: a 17,000-character model name in `GET /v1/models/{id}` or a Gemini path got it).
 * Bun.serve has no option for that limit; the process-wide one (`--max-http-header-size`) is also set
 * at run time through node:http's `maxHeaderSize`, which Bun makes writable and its parser reads at
 * each request (Bun 1.4.5). So:
 * - {@link raiseHeadLimit} raises Bun's limit to {@link BUN_HEAD_LIMIT_BYTES} (64 KiB) at start: heads
 *   up to that reach the gateway (a long model name, a 40 KiB cookie from other apps on localhost);
 * - {@link urlTooLong} answers a URL longer than {@link MAX_URL_CHARS} (16 KiB) with a 414 in the
 *   client's format, where the gateway reads the URL anyway (the paths that carry a name: models, the
 *   Gemini calls, the admin API, the dashboard, unknown paths); the four static POST API paths ignore a
 *   query and do not read their URL, so a long one is served there.
 * - {@link wholeTarget} gives Elysia's router a request with no Host (HTTP/1.0) as a URL, so that it
 *   routes the request's whole path.
 * A head over 64 KiB still gets Bun's empty 431 and the connection is closed: no handler sees it.
 * Bun.serve has no hook for it (Bun 1.4.5: its `error` handler is not called); the parser's error
 * callback (uWS `onClientError`) is set only by node:http, for its `clientError` event, through Bun's
 * internal `setServerCustomOptions`, which user code cannot load (README "What runs today").
 */
import { errorResponse } from "../../pipeline/index.ts";
import { hubError } from "../../formats/hub.ts";
import { formatForPath, pathOf } from "./browser-guard.ts";

/** The request head Bun's parser takes once {@link raiseHeadLimit} ran, bytes: 64 KiB (Bun's default is 16 KiB). */
export const BUN_HEAD_LIMIT_BYTES = 64 * 1024;

/** The longest request URL the gateway answers other than with a 414, in characters (its origin included): 16 KiB. */
export const MAX_URL_CHARS = 16 * 1024;

/**
 * Raises Bun's request head limit to {@link BUN_HEAD_LIMIT_BYTES} for the whole process (a larger
 * `--max-http-header-size` given to Bun is kept). Loads node:http to do it (~1.2–1.4 MB of RSS in the
 * running gateway, measured 2026-12-03): call once, at `start`.
 */
export async function raiseHeadLimit(): Promise<void> {
  const http = (await import("node:http")).default as { maxHeaderSize: number };
  if (http.maxHeaderSize < BUN_HEAD_LIMIT_BYTES) http.maxHeaderSize = BUN_HEAD_LIMIT_BYTES;
}

/**
 * The 414 for a request whose URL is longer than {@link MAX_URL_CHARS}, in the error format of its
 * path (a Gemini path gets Gemini's error, `/v1/messages…` Anthropic's, …); undefined otherwise. A
 * length compare unless the URL is too long.
 */
export function urlTooLong(request: Request, url: string = request.url): Response | undefined {
  if (url.length <= MAX_URL_CHARS) return undefined;
  const err = hubError(
    "invalid_request",
    `The request URL is ${url.length.toLocaleString("en-US")} characters long; this gateway takes at most ${MAX_URL_CHARS.toLocaleString("en-US")} (no model name or path it serves is that long).`,
    { status: 414, code: "uri_too_long" },
  );
  return errorResponse(formatForPath(pathOf(url), request.headers), err);
}

/**
 * Elysia's higher-order function around its router (`app.wrap`: Bun's `fetch`, and each route Elysia
 * hands to Bun.serve's `routes`), run before the router reads the request's path: a bare request target
 * (Bun's `request.url` of a request with no Host or an empty one, HTTP/1.0: `/admin/api/keys/x`, no
 * scheme or authority, see browser-guard.ts pathOf) is made the URL `http://localhost` + target, read as
 * Bun reads a target with a Host ({@link bareTargetUrl}: dot segments resolved, so routing and the
 * handlers read the same path), on the request itself, as its own `url` property. Elysia reads
 * a URL's path from the first "/" after its 11th character (past `http://h/`): a bare target lost its
 * first segments there, and a path no route serves was answered by the route that serves its tail
 * (`GET /abcdefghij/health` was the health answer; `GET /admin/api/keys/x` a 404, not the 405 it gets
 * with a Host). The request object stays the one Bun made: `server.requestIP`, `server.timeout` and
 * `server.upgrade` take only that one (the peer and loopback rules, client keys), and its body and
 * headers are untouched. A request with a Host costs one read of `url` and a character compare, no
 * allocation (measured 2026-12-08: ~5.5 ns a call, no heap object in 10^6 calls). The API's POST paths
 * are Bun's own routes (server.ts nativeApiRoutes): they do not go through Elysia's router and read a
 * bare target themselves (pathOf).
 */
export function wholeTarget<F>(route: F, request: Request): F {
  const url = request.url;
  if (url.charCodeAt(0) === 47 /* "/" */) Object.defineProperty(request, "url", { value: bareTargetUrl(url) });
  return route;
}

/**
 * A bare request target (`/admin/api/x/../keys?q`, from a request with no Host) as the URL Bun makes of
 * the same target with a Host: `http://localhost` + target read by the URL parser (WHATWG URL, as Bun
 * reads it), so its dot segments (`/./`, `/../`, `%2e`) are resolved, a backslash read as "/", and
 * what Bun percent-encodes (spaces, quotes, non-ASCII) encoded; the query and fragment are kept as
 * sent. Checked against Bun 1.4.5 with `Host: localhost` for each of those (2026-12-08). The prefix is
 * joined before parsing, never given as a base: `//health` stays a path, not a host. Falls back to the
 * plain join if the parser refuses the target (it does not for any target Bun's HTTP parser passes).
 */
export function bareTargetUrl(target: string): string {
  try {
    return new URL(`http://localhost${target}`).href;
  } catch {
    return `http://localhost${target}`;
  }
}
