/**
 * `GET /admin/api/events` (SPEC 9.3, 9.4, 9.7): the event bus (src/events/bus.ts) as Server-Sent
 * Events, one SSE event per bus event:
 *
 * ```
 * id: 17
 * event: request_finished | account_state | alert | keys_changed | routing_changed | config_reloaded
 * data: {"type":"request_finished",…}
 * ```
 *
 * The first frame is `event: hello` (`{at, heartbeatMs}`), the last one `event: shutdown` when the gateway stops; a comment line `: ping` follows every
 * {@link HEARTBEAT_MS} so proxies and browsers keep the connection. `?types=a,b` keeps only those event
 * types.
 *
 * Back-pressure: each connection has its own bounded queue (the stream's queue, measured in bytes).
 * A reader that lets more than {@link MAX_QUEUED_BYTES} pile up is sent `event: dropped` and
 * disconnected; the publisher never waits, so a slow dashboard cannot slow a request down. A client
 * that goes away (its request's signal aborts, or the stream is cancelled) is unsubscribed at once.
 *
 * Shutdown: when the gateway begins to stop (`stopping` aborts) each open stream is sent
 * `event: shutdown` (`{at}`) and closed at once. An event stream is not a request in flight: a dashboard
 * tab left open held every stop (and so every restart or upgrade) for the whole grace period (newuser14
 * K10: 31.4 s against 2.0 s), while its "Live" badge said nothing was wrong.
 *
 * Access: the caller was allowed when the stream opened; with `allowed` the stream asks again before
 * each event (a session lookup, and a key lookup for a signed-in one) and every {@link RECHECK_MS}, and ends (`event: signed_out`,
 * then close) once the answer is no — a dashboard that signed out, whose session expired or whose key
 * was revoked stops receiving events at once rather than when it next calls the API.
 */
import * as v from "valibot";
import type { EventBus, GatewayEvent } from "../events/bus.ts";

/** Interval of the `: ping` comment lines, ms. */
export const HEARTBEAT_MS = 15_000;
/** How often an open stream re-checks that its caller may still read it, ms (also before each event). */
export const RECHECK_MS = 5_000;
/** Bytes a connection may have queued before it is dropped as a slow reader (1 MiB). */
export const MAX_QUEUED_BYTES = 1024 * 1024;

/** The event types a client may ask for with `?types=`. */
export const EVENT_TYPES = ["request_finished", "account_state", "alert", "keys_changed", "routing_changed", "config_reloaded"] as const;

/** Query of `GET /events`. */
export const EventsQuery = v.object({
  types: v.optional(
    v.pipe(
      v.string(),
      v.regex(
        /^(request_finished|account_state|alert|keys_changed|routing_changed|config_reloaded)(,(request_finished|account_state|alert|keys_changed|routing_changed|config_reloaded))*$/,
        "types is a comma-separated list of request_finished, account_state, alert, keys_changed, routing_changed, config_reloaded",
      ),
      v.description("Comma-separated event types to receive (default: all)."),
    ),
  ),
});

const enc = new TextEncoder();

/** One SSE frame. `data` is JSON on one line (JSON.stringify never emits a raw newline). */
function frame(event: string, data: unknown, id?: number): Uint8Array {
  return enc.encode(`${id !== undefined ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Options of {@link eventStream}. */
export interface EventStreamOptions {
  /** Only these event types; all when absent. */
  types?: ReadonlySet<string>;
  /** Aborts when the client goes away. */
  signal?: AbortSignal;
  heartbeatMs?: number;
  maxQueuedBytes?: number;
  now?: () => number;
  /** Whether the caller may still read the stream (re-checked, see the module comment). */
  allowed?: () => boolean;
  recheckMs?: number;
  /** Aborts when the gateway begins to stop: the stream sends `event: shutdown` and ends. */
  stopping?: AbortSignal;
}

/**
 * Subscribes to `bus` and answers the events as an SSE Response. The subscription ends when the client
 * disconnects, cancels the body, or falls more than `maxQueuedBytes` behind.
 */
export function eventStream(bus: EventBus, opts: EventStreamOptions = {}): Response {
  const heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
  const maxQueued = opts.maxQueuedBytes ?? MAX_QUEUED_BYTES;
  let unsubscribe: (() => void) | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let recheck: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  let seq = 0;
  const stop = () => {
    if (closed) return;
    closed = true;
    unsubscribe?.();
    if (heartbeat) clearInterval(heartbeat);
    if (recheck) clearInterval(recheck);
    opts.signal?.removeEventListener("abort", stop);
    opts.stopping?.removeEventListener("abort", onStopping);
  };
  let onStopping = (): void => stop();
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const send = (chunk: Uint8Array): boolean => {
          if (closed) return false;
          // desiredSize = highWaterMark − bytes queued: below zero the reader is maxQueued behind.
          if ((controller.desiredSize ?? 0) < 0) {
            stop();
            try {
              controller.enqueue(frame("dropped", { reason: "slow reader", at: (opts.now ?? Date.now)() }));
              controller.close();
            } catch {
              // already closed
            }
            return false;
          }
          try {
            controller.enqueue(chunk);
            return true;
          } catch {
            stop();
            return false;
          }
        };
        const now = opts.now ?? Date.now;
        /** false (and the stream ended) once the caller may no longer read it. */
        const stillAllowed = (): boolean => {
          if (!opts.allowed || closed) return !closed;
          if (opts.allowed()) return true;
          stop();
          try {
            controller.enqueue(frame("signed_out", { at: now() }));
            controller.close();
          } catch {
            // already closed
          }
          return false;
        };
        send(frame("hello", { at: now(), heartbeatMs }));
        unsubscribe = bus.subscribe((event: GatewayEvent) => {
          if (opts.types && !opts.types.has(event.type)) return;
          if (!stillAllowed()) return;
          send(frame(event.type, event, ++seq));
        });
        if (opts.allowed) recheck = setInterval(stillAllowed, opts.recheckMs ?? RECHECK_MS);
        heartbeat = setInterval(() => send(enc.encode(": ping\n\n")), heartbeatMs);
        onStopping = () => {
          if (closed) return;
          stop();
          try {
            controller.enqueue(frame("shutdown", { at: now() }));
            controller.close();
          } catch {
            // already closed
          }
        };
        if (opts.signal?.aborted) stop();
        else opts.signal?.addEventListener("abort", stop, { once: true });
        if (opts.stopping?.aborted) onStopping();
        else opts.stopping?.addEventListener("abort", onStopping, { once: true });
      },
      cancel() {
        stop();
      },
    },
    { highWaterMark: maxQueued, size: (chunk) => chunk?.byteLength ?? 0 },
  );
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}
