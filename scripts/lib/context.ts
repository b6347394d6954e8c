/**
 * A request context past the guard, built without running the guard: the gateway's own
 * {@link newContext}, then the body fields the guard fills in (raw body, parsed body, requested model,
 * stream flag). Used by the in-process benchmarks (scripts/bench-budget.ts) and, with fixed ids, by the
 * stage unit tests (test/support/context.ts), so that scripts do not import test support.
 */
import { defaultIds, newContext, type Endpoint, type Ids, type RequestContext } from "../../pipeline/context.ts";

/**
 * A context for `endpoint` past the guard: `body` serialised as the raw body and parsed back, its
 * `model` and `stream` read; a loopback peer; the request URL is `http://127.0.0.1<path>` (default
 * `/v1/x`). With `pathModel` (Gemini, SPEC 2.1: the model and stream mode named in the URL) those two
 * are read from `pathModel` and `pathStream` instead of the body, as the guard does. `ids` mints the
 * request and route ids ({@link defaultIds} when absent); `startedAt` is the arrival time in ms since
 * the epoch (default 0).
 */
export function guardedContext(
  endpoint: Endpoint,
  body: Record<string, unknown>,
  init: { headers?: Record<string, string>; path?: string; pathModel?: string; pathStream?: boolean } = {},
  ids: Ids = defaultIds,
  startedAt = 0,
): RequestContext {
  const text = JSON.stringify(body);
  const request = new Request(`http://127.0.0.1${init.path ?? "/v1/x"}`, { method: "POST", headers: init.headers });
  const inURL = init.pathModel !== undefined;
  const ctx = newContext({ request, endpoint, peer: "127.0.0.1", ...(inURL ? { pathModel: init.pathModel, pathStream: init.pathStream === true } : {}) }, startedAt, ids);
  ctx.rawBody = new TextEncoder().encode(text);
  ctx.body = JSON.parse(text);
  ctx.requestedModel = ctx.trace.requestedModel = inURL ? init.pathModel! : String(body.model);
  ctx.stream = inURL ? init.pathStream === true : body.stream === true;
  return ctx;
}
