/**
 * Request contexts for stage unit tests: scripts/lib/context.ts's {@link guardedContext} (the gateway's
 * own newContext, then the body fields the guard would have filled in) with fixed ids.
 */
import type { Endpoint, RequestContext } from "../../pipeline/context.ts";
import { guardedContext as contextPastGuard } from "../../scripts/lib/context.ts";

/** Fixed ids: `req_test` and `sy_test`. */
export const TEST_IDS = { request: () => "req_test", route: () => "sy_test" };

/** A context for `endpoint` past the guard: `body` parsed, its model and `stream` read; a loopback peer; fixed ids. */
export function guardedContext(endpoint: Endpoint, body: Record<string, unknown>, init: { headers?: Record<string, string>; path?: string } = {}): RequestContext {
  return contextPastGuard(endpoint, body, init, TEST_IDS, 0);
}
