/**
 * Starts the gateway's HTTP server listening with the options a gateway needs of Bun (through Elysia's
 * Bun adapter): request heads up to 64 KiB, the keep-alive idle timeout, no transport body limit, no
 * shared port, never Bun's development mode, and the Responses WebSocket's compression and frame limit.
 */
import { idleSeconds } from "./keep-alive.ts";
import { raiseHeadLimit } from "./request-head.ts";

/** Where and how to listen. */
export interface ListenAt {
  host: string;
  /** 0: a free port chosen by the system. */
  port: number;
  /** `server.keep_alive_timeout_ms`: the idle timeout of a connection with no request in flight, ms. */
  keepAliveTimeoutMs: number;
  /** The Responses WebSocket's largest frame, bytes (src/http/responses-socket.ts `responsesSocketMaxFrameBytes`). */
  frameLimit: number;
}

/** The listening options given to Elysia's `listen` (Bun's serve options). */
export interface GatewayListenOptions {
  hostname: string;
  port: number;
  idleTimeout: number;
  maxRequestBodySize: number;
  reusePort: boolean;
  development: boolean;
  websocket: { perMessageDeflate: boolean; maxPayloadLength: number };
}

/** Listens (`app.listen`, synchronous once the head limit is raised); throws what Bun throws (e.g. the port in use). */
export async function listenGateway(app: { listen(options: GatewayListenOptions): unknown }, at: ListenAt): Promise<void> {
  // Request heads up to 64 KiB reach the gateway, not Bun's empty 431 (src/http/request-head.ts).
  await raiseHeadLimit();
  app.listen({
    hostname: at.host,
    port: at.port,
    // Connections with no request in flight (src/http/keep-alive.ts); a request in flight has its own timers.
    idleTimeout: idleSeconds(at.keepAliveTimeoutMs),
    // No transport limit: Bun's own 413 is an empty body. The guard enforces max_body_bytes on the API
    // routes (client-format 413, reading no further than the limit); createServer bounds every other route.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    // Elysia's Bun adapter defaults to SO_REUSEPORT: a second instance on the same port would then
    // silently share the traffic. One port, one gateway.
    reusePort: false,
    // Elysia's Bun adapter turns on Bun's development mode unless NODE_ENV=production: an error that
    // reached Bun would then be answered with Bun's HTML error page and its stack trace. A gateway is
    // never in development mode (errors are JSON in the client's format, SPEC 2.6).
    development: false,
    // Codex's Responses WebSocket (SPEC 2.5) negotiates permessage-deflate.
    // Frames up to twice the body limit reach the guard (a 413 error frame over the limit), not Bun's
    // 16 MiB default, which closed the socket instead (src/http/responses-socket.ts).
    websocket: { perMessageDeflate: true, maxPayloadLength: at.frameLimit },
  });
}
