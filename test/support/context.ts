/**
 * Request contexts for stage unit tests: the gateway's own {@link newContext}, then the body fields the
 * guard would have filled in (raw body, parsed body, model, stream), with fixed ids.
 */
import { newContext, type Endpoint, type RequestContext } from "../../pipeline/context.ts";

/** Fixed ids: `req_test` and `sy_test`. */
export const TEST_IDS = { request: () => "req_test", route: () => "sy_test" };

/** A context for `endpoint` past the guard: `body` parsed, its model and `stream` read; a loopback peer. */
export function guardedContext(endpoint: Endpoint, body: Record<string, unknown>, init: { headers?: Record<string, string>; path?: string } = {}): RequestContext {
  const text = JSON.stringify(body);
  const request = new Request(`http://127.0.0.1${init.path ?? "/v1/x"}`, { method: "POST", headers: init.headers });
  const ctx = newContext({ request, endpoint, peer: "127.0.0.1" }, 0, TEST_IDS);
  ctx.rawBody = new TextEncoder().encode(text);
  ctx.body = JSON.parse(text);
  ctx.requestedModel = ctx.trace.requestedModel = String(body.model);
  ctx.stream = body.stream === true;
  return ctx;
}
