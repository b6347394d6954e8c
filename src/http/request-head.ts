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
