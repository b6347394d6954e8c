/**
 * The HTTP surface (SPEC 2.1) on Elysia: client endpoints, models, health, admin API, and a JSON 404
 * in OpenAI error shape for anything else (never an HTML page). Bodies of API routes are not parsed
 * by Elysia: the guard reads them with its own size limit (SPEC G-4).
 */
import { Elysia } from "elysia";
import type { Gateway } from "../pipeline/gateway.ts";
import type { Endpoint } from "../pipeline/context.ts";

/** What the server needs besides the gateway. */
export interface ServerDeps {
  gateway: Gateway;
  /** GET /v1/models data. */
  models: (anthropicShape: boolean) => unknown;
  /** GET /v1/models/{id}; undefined when unknown. */
  model: (id: string, anthropicShape: boolean) => unknown | undefined;
  /** POST /v1/messages/count_tokens. */
  countTokens: (request: Request, peer: string | undefined) => Promise<Response>;
  /** Liveness + readiness (DB reachable). */
  health: () => { ok: boolean; db: boolean };
  /** The admin API (SPEC 9.3) mounted under /admin/api. */
  admin?: (request: Request, peer: string | undefined, path: string) => Promise<Response>;
}

/** The part of Bun's server the handlers use: the socket's peer address (SPEC G-3). */
interface PeerSource {
  requestIP(r: Request): { address: string } | null;
}

const json = (status: number, body: unknown, headers?: Record<string, string>) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

/** The JSON 404 every unknown path gets (OpenAI error shape, SPEC 2.1). */
export function notFound(method: string, path: string): Response {
  return json(404, {
    error: { message: `Unknown path: ${method} ${path}`, type: "invalid_request_error", param: null, code: "unknown_url" },
  });
}

/** Builds the Elysia app. Call `.listen()` on the result. */
export function createServer(deps: ServerDeps) {
  const api = (endpoint: Endpoint) => ({ request, server }: { request: Request; server: PeerSource | null }) =>
    deps.gateway.handle({ request, endpoint, peer: server?.requestIP(request)?.address });
  const noParse = { parse: "none" as const };

  const app = new Elysia()
    .post("/v1/chat/completions", api("chat") as never, noParse)
    .post("/v1/responses", api("responses") as never, noParse)
    .post("/v1/messages", api("messages") as never, noParse)
    .post("/v1/v1/messages", api("messages") as never, noParse)
    .post(
      "/v1/messages/count_tokens",
      (({ request, server }: { request: Request; server: PeerSource | null }) =>
        deps.countTokens(request, server?.requestIP(request)?.address)) as never,
      noParse,
    )
    .post(
      "/v1/v1/messages/count_tokens",
      (({ request, server }: { request: Request; server: PeerSource | null }) =>
        deps.countTokens(request, server?.requestIP(request)?.address)) as never,
      noParse,
    )
    .get("/v1/models", ({ request }) => json(200, deps.models(request.headers.has("anthropic-version"))))
    .get("/v1/models/:id", ({ request, params }) => {
      const id = decodeURIComponent((params as { id: string }).id);
      const m = deps.model(id, request.headers.has("anthropic-version"));
      if (m === undefined) {
        return json(404, { error: { message: `The model \`${id}\` does not exist.`, type: "invalid_request_error", param: "model", code: "model_not_found" } });
      }
      return json(200, m);
    })
    .get("/health", () => {
      const h = deps.health();
      return json(h.ok ? 200 : 503, { status: h.ok ? "ok" : "degraded", db: h.db ? "ok" : "unreachable" });
    })
    // Claude Code probes the base URL with HEAD /api/hello before its first request.
    .head("/api/hello", () => new Response(null, { status: 200 }))
    .all("/admin/api/*", (async ({ request, server }: { request: Request; server: PeerSource | null }) => {
      if (!deps.admin) return notFound(request.method, new URL(request.url).pathname);
      const path = new URL(request.url).pathname.slice("/admin/api".length) || "/";
      return deps.admin(request, server?.requestIP(request)?.address, path);
    }) as never, noParse)
    .onError(({ code, request, error }) => {
      const path = new URL(request.url).pathname;
      if (code === "NOT_FOUND") return notFound(request.method, path);
      console.error(JSON.stringify({ level: "error", msg: "http error", path, code, error: error instanceof Error ? error.message : String(error) }));
      return json(500, { error: { message: "The gateway failed to handle this request.", type: "server_error", param: null, code: null } });
    });
  return app;
}
