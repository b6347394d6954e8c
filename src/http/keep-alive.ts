/**
 * The idle timeout of client connections (`server.keep_alive_timeout_ms`). Bun's server has one idle
 * timer per socket (uSockets: reset by every byte read or written, checked every 4 s, whole seconds
 * up to 255, 0 = none). It counts while a request is in flight too: a reply silent for longer (a
 * reasoning model, a long upstream wait, a request body that pauses) would be cut mid-request. So a
 * request the gateway serves switches the timer off when it starts ({@link holdOpen}) and back on when
 * its reply ends ({@link idleAgain}); only a connection with no request in flight is timed out, the
 * in-flight request by its own timers (`server.body_timeout_ms`, the provider's idle and header
 * timeouts, the pre-commit deadline).
 *
 * What Bun does, measured on Bun 1.4.5 with raw sockets (test/e2e/keep-alive-timeout.test.ts):
 * `server.timeout(request, 0)` stays in force on the socket after that request's reply, so the timer
 * must be set again before the reply's last bytes are written (a call after the reply has been written
 * does nothing, and does not throw); set then, it counts from the last byte written. A WebSocket after
 * its upgrade is not timed by it (Bun's `websocket.idleTimeout` and pings apply). Before a
 * connection's first request Bun uses its own fixed ~10 s, whatever `idleTimeout` says.
 */

import { bodyLeftUnread } from "../../pipeline/index.ts";

export { bodyLeftUnread };

/** The part of Bun's Server this uses. */
export interface IdleTimerServer {
  /** Bun's `server.timeout(request, seconds)`: the idle timeout of the request's socket; 0 switches it off. */
  timeout(request: Request, seconds: number): void;
}

/** The most Bun takes for an idle timeout, in seconds. */
export const MAX_IDLE_SECONDS = 255;

/** `keep_alive_timeout_ms` as Bun's whole seconds: rounded up, at most 255; 0 stays 0 (never). */
export function idleSeconds(ms: number): number {
  return ms <= 0 ? 0 : Math.min(MAX_IDLE_SECONDS, Math.ceil(ms / 1000));
}

/** A request starts: its socket is not timed while it is served (its own timers apply). */
export function holdOpen(server: Partial<IdleTimerServer> | null | undefined, request: Request): void {
  server?.timeout?.(request, 0);
}

/**
 * A request's reply is ending (called before its last bytes are written: a whole reply before it is
 * returned, a stream when its upstream ended): the socket is timed again, from its last byte, by
 * `keepAliveMs`. Does nothing for a request that is no HTTP request of its own (a WebSocket frame).
 */
export function idleAgain(server: IdleTimerServer | undefined, request: unknown, keepAliveMs: number): void {
  if (server && request instanceof Request) server.timeout(request, idleSeconds(keepAliveMs));
}

/** The largest declared `Content-Length` of a body left unread that {@link closeIfBodyUnread} drains, bytes (64 KiB). */
export const DRAIN_MAX_BYTES = 64 * 1024;

/** The most {@link closeIfBodyUnread} waits for such a body to arrive, ms. */
export const DRAIN_MAX_MS = 500;

/**
 * How long {@link closeIfBodyUnread} waits for a small body left unread, ms: `server.body_timeout_ms`
 * (`bodyTimeoutMs`; unknown: {@link DRAIN_MAX_MS}), at most {@link DRAIN_MAX_MS}.
 */
export function drainDeadlineMs(bodyTimeoutMs: number | undefined): number {
  return Math.min(bodyTimeoutMs ?? DRAIN_MAX_MS, DRAIN_MAX_MS);
}

/**
 * Reads and drops the body `request` declared and nothing read, when it is small enough to drain: a
 * `Content-Length` of 1 to {@link DRAIN_MAX_BYTES} bytes, no `Transfer-Encoding`, not a GET or HEAD,
 * `deadlineMs` above 0.
 * Resolves true when all its declared bytes arrived within `deadlineMs`, false when not (a body still
 * trickling, a client gone); `false` at once (no promise) for a body it does not drain (chunked, larger,
 * no deadline). A body that did not arrive is left to the connection's close.
 */
export function drainUnreadBody(request: Request, deadlineMs: number): false | Promise<boolean> {
  // A GET or HEAD has no body stream in Bun (1.4.5: the handler runs before its declared body arrived,
  // and Bun reads the body past it): whether it arrived cannot be known, so it is not drained.
  if (deadlineMs <= 0 || request.method === "GET" || request.method === "HEAD" || request.headers.has("transfer-encoding")) return false;
  const length = Number(request.headers.get("content-length"));
  if (!(length > 0 && length <= DRAIN_MAX_BYTES)) return false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, deadlineMs, false)));
  const read = request.arrayBuffer().then(
    (bytes) => bytes.byteLength === length,
    () => false,
  );
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

/** `response` with `Connection: close`; a response whose headers cannot be changed is copied with the header added. */
function withClose(response: Response): Response {
  try {
    response.headers.set("connection", "close");
    return response;
  } catch {
    const headers = new Headers(response.headers);
    headers.set("connection", "close");
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }
}

/**
 * `response`, with `Connection: close` when `request`'s declared body was left unread (a route that
 * answers without reading it: a reload, a sign-out, a 404 or 405, a refusal before the body) and did not
 * arrive: Bun then closes the connection after the reply instead of waiting, with no timer, for the rest
 * of the body (measured on Bun 1.4.5: with `keep_alive_timeout_ms: 0` a body trickled a byte every 2 s
 * held the socket open for as long as it went on; test/admin/slow-body.test.ts). A small body (declared
 * `Content-Length` up to {@link DRAIN_MAX_BYTES}) is first drained for up to `drainMs`
 * ({@link drainUnreadBody}; the reply waits for it): one that arrived whole (`requests.post(url, json={})`
 * to a reload, an unknown path) keeps the connection (test/http/unread-complete-body-keep-alive.test.ts);
 * a chunked or larger one, one not in within `drainMs`, or a GET's or HEAD's (not readable), gets the close. A body that was read (whole,
 * or cut by `server.body_timeout_ms` with its own 408 and `Connection: close`) keeps the connection.
 * Synchronous (the same response) when there is nothing to drain.
 */
export function closeIfBodyUnread(request: Request, response: Response, drainMs: number): Response | Promise<Response> {
  if (!bodyLeftUnread(request)) return response;
  const drained = drainUnreadBody(request, drainMs);
  if (drained === false) return withClose(response);
  return drained.then((whole) => (whole ? response : withClose(response)));
}
