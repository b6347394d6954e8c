/**
 * The Responses WebSocket's frame limit (Bun's `websocket.maxPayloadLength`, SPEC 2.5, G-4) made to
 * follow `server.max_body_bytes` when a reload changes it.
 *
 * Bun holds a client frame whole before the gateway sees it, so its limit is what bounds the memory one
 * frame can take (permessage-deflate included: the limit is on the inflated frame); the guard then
 * holds the frame to the body limit (a 413 error frame over it). Bun takes the WebSocket options at
 * start and again from `server.reload(options)`, which applies them to new and open sockets alike
 * (Bun 1.4: test/e2e/socket-frame-limit.test.ts). But a reload replaces the server's routes and
 * handlers with the options it is given: Elysia hands Bun its routes (compiled after start, in its own
 * `server.reload`) and its WebSocket dispatch, which the gateway cannot rebuild. So the options of the
 * last `server.reload` are recorded here, and a new frame limit is applied as those options with only
 * `maxPayloadLength` changed: everything else stays as it was.
 */
import type { Server } from "bun";
import { responsesSocketMaxFrameBytes } from "./responses-socket.ts";

/** What the gateway asks of the frame limit while it runs. */
export interface SocketFrameLimit {
  /** The frame limit in force, bytes. */
  readonly bytes: number;
  /**
   * Sets the frame limit for the body limit `maxBodyBytes` ({@link responsesSocketMaxFrameBytes}). Returns
   * false when it cannot (no reload options were recorded: the limit stays as it is, and the caller
   * says so), true when the limit in force is the one asked for.
   */
  follow(maxBodyBytes: number): boolean;
}

/**
 * Records the options of every `server.reload` of `server` (Elysia's, after start) and returns the
 * control of its frame limit, `bytes` at start. Call it right after the server starts, before Elysia's
 * reload (a microtask later).
 */
export function socketFrameLimit(server: Pick<Server<unknown>, "reload">, bytes: number): SocketFrameLimit {
  type Options = Parameters<Server<unknown>["reload"]>[0] & { websocket?: Record<string, unknown> };
  const reload = server.reload.bind(server) as (options: Options) => unknown;
  let last: Options | undefined;
  (server as { reload: (options: Options) => unknown }).reload = (options: Options) => {
    last = options;
    return reload(options);
  };
  let current = bytes;
  return {
    get bytes() {
      return current;
    },
    follow(maxBodyBytes) {
      const next = responsesSocketMaxFrameBytes(maxBodyBytes);
      if (next === current) return true;
      if (!last?.websocket) return false;
      last = { ...last, websocket: { ...last.websocket, maxPayloadLength: next } };
      reload(last);
      current = next;
      return true;
    },
  };
}
