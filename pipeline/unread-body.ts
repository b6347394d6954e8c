/**
 * The one rule for a request body a reply leaves unread (a route that reads none: a reload, a sign-out,
 * a 404 or 405; a refusal before the body: a foreign page's 403, a remote caller's 401 without a key, an
 * unknown Gemini method's 404). Such a request's connection cannot serve a next request until Bun has
 * taken in the rest of the body, which a client may trickle for ever (Bun waits for it with no timer:
 * measured on Bun 1.4.5, with `keep_alive_timeout_ms: 0` a body trickled a byte every 2 s held the socket
 * for as long as it went on; test/admin/slow-body.test.ts). So:
 *
 * - a small body ({@link drainUnreadBody}: a declared `Content-Length` of 1 to {@link DRAIN_MAX_BYTES},
 *   not chunked) is read and dropped for up to `server.body_timeout_ms`, at most {@link DRAIN_MAX_MS}
 *   (the reply waits for it); all of it in: the connection is kept
 *   (test/http/unread-complete-body-keep-alive.test.ts);
 * - any other (chunked, larger, not in by then, a GET's or HEAD's): the reply says `Connection: close`,
 *   and Bun closes the connection after it ({@link closeIfBodyUnread});
 * - a reply that says `Connection: close` already (a 413 for a declared length over the limit, a 408)
 *   is left as it is: nothing is drained for a connection that closes anyway.
 *
 * Used by every route of the HTTP layer (src/http/server.ts through src/http/keep-alive.ts: a route's
 * answer that is not yet a Response, the admin API's JSON objects, is made the Response Elysia would
 * make of it and then decided here like any other, `unreadBodyAnswer`) and by the gateway's own
 * refusals before the body read (pipeline/gateway.ts), with the same deadline.
 */

/**
 * Whether `request` declares a body (a `Content-Length` above 0, or a `Transfer-Encoding`) that nothing
 * began to read (`bodyUsed` false): see the module's rule. A WebSocket frame's head (no `bodyUsed`)
 * never has a body left.
 */
export function bodyLeftUnread(request: { readonly headers: Headers; readonly bodyUsed?: boolean }): boolean {
  if (request.bodyUsed !== false) return false;
  const length = request.headers.get("content-length");
  return length !== null ? Number(length) !== 0 : request.headers.has("transfer-encoding");
}

/** The largest declared `Content-Length` of a body left unread that {@link drainUnreadBody} drains, bytes (64 KiB). */
export const DRAIN_MAX_BYTES = 64 * 1024;

/** The most {@link drainUnreadBody} waits for such a body to arrive, ms. */
export const DRAIN_MAX_MS = 500;

/**
 * How long a small body left unread is drained, ms: `server.body_timeout_ms` (`bodyTimeoutMs`; unknown:
 * {@link DRAIN_MAX_MS}), at most {@link DRAIN_MAX_MS}.
 */
export function drainDeadlineMs(bodyTimeoutMs: number | undefined): number {
  return Math.min(bodyTimeoutMs ?? DRAIN_MAX_MS, DRAIN_MAX_MS);
}

/** What {@link drainUnreadBody} needs of a request: a `Request` is one. */
export interface DrainableRequest {
  readonly method: string;
  readonly headers: Headers;
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/**
 * Reads and drops the body `request` declared and nothing read, when it is small enough to drain: a
 * `Content-Length` of 1 to {@link DRAIN_MAX_BYTES} bytes, no `Transfer-Encoding`, not a GET or HEAD,
 * `deadlineMs` above 0.
 * Resolves true when all its declared bytes arrived within `deadlineMs`, false when not (a body still
 * trickling, a client gone); `false` at once (no promise) for a body it does not drain (chunked, larger,
 * no deadline). A body that did not arrive is left to the connection's close.
 *
 * A GET's or HEAD's body cannot be drained (measured on Bun 1.4.5 with a bare `Bun.serve` and raw
 * sockets, a body of `Content-Length: 2` sent whole with the head): Bun gives the handler no body at all
 * (`request.body` null; `bytes()`, `arrayBuffer()` and a reader give 0 bytes, `text()` ""), and reads
 * and drops the declared bytes itself after the handler. So whether they arrived cannot be known: a
 * `GET` declaring 10 bytes and sending 2 has the client's next request read as the rest of its body (Bun
 * then answers a 400), and one declaring 100,000 and trickling a byte every 200 ms holds the socket for
 * as long as it goes on. Such a request keeps the close.
 */
export function drainUnreadBody(request: DrainableRequest, deadlineMs: number): false | Promise<boolean> {
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
 * `response` as the module's rule has it for `request`: the same response when no body was left unread
 * or the response says `Connection: close` already; else after {@link drainUnreadBody} drained a small
 * body for up to `drainMs` (the reply waits for it), the same response when all of it arrived, with
 * `Connection: close` when not or when it cannot be drained. Synchronous (the same response) when there
 * is nothing to drain.
 */
export function closeIfBodyUnread(request: DrainableRequest, response: Response, drainMs: number): Response | Promise<Response> {
  if (!bodyLeftUnread(request) || response.headers.get("connection") === "close") return response;
  const drained = drainUnreadBody(request, drainMs);
  if (drained === false) return withClose(response);
  return drained.then((whole) => (whole ? response : withClose(response)));
}
