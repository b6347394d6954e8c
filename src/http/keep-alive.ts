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

import type { Context } from "elysia";
import { mapResponse as elysiaMapResponse } from "elysia/adapter/bun/handler";
import { bodyLeftUnread, closeIfBodyUnread } from "../../pipeline/index.ts";

/*
 * A body a reply leaves unread (drained when small and whole, else `Connection: close`): one rule, in
 * pipeline/unread-body.ts, for the routes here and the gateway's refusals before the body read.
 */
export { bodyLeftUnread, closeIfBodyUnread, drainDeadlineMs, drainUnreadBody, DRAIN_MAX_BYTES, DRAIN_MAX_MS } from "../../pipeline/index.ts";

/**
 * A route's answer as the unread-body rule has it (pipeline/unread-body.ts {@link closeIfBodyUnread},
 * the one function deciding), for Elysia's `mapResponse` hook of src/http/server.ts, which sees a
 * route's answer before Elysia makes it a Response: `value` is a Response, or what Elysia maps to one
 * (the admin API's JSON objects, with `set` holding their status and headers; the WebSocket route's
 * undefined). Such a value is first made the Response Elysia would make of it (Elysia's own
 * `mapResponse` of its Bun adapter, with `set`), then decided like any other. Elysia maps the Response
 * returned once more with `set`, which adds nothing: its headers are already there (a `Set-Cookie` of
 * `set` would be added twice; no route of the gateway sets one there, the dashboard's sign-in puts its
 * cookie in its own Response). Undefined when `request` left no body unread: the value goes on as it is
 * (no copy). Measured on Elysia 1.4.30: a route's promise is settled before the hook sees it; a promise
 * is mapped all the same.
 */
export function unreadBodyAnswer(request: Request, value: unknown, set: Context["set"], drainMs: number): Response | Promise<Response> | undefined {
  if (!bodyLeftUnread(request)) return undefined;
  const answer: Response | Promise<Response> = value instanceof Response ? value : elysiaMapResponse(value, set, request);
  return answer instanceof Promise ? answer.then((r) => closeIfBodyUnread(request, r, drainMs)) : closeIfBodyUnread(request, answer, drainMs);
}

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
