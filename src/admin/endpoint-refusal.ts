/**
 * How an admin route reports that a client endpoint would refuse a request (the dry run's answers to a
 * body the endpoint refuses, a disabled key, a keyless request under `require_api_key`): one place, so
 * every admin route that describes a *client's* refusal says it the same way.
 *
 * The rule it keeps: a 401 from the admin API means "your admin credentials are refused" to every admin
 * client (src/dashboard/client/api.ts reloads to its sign-in view, `switchyard setup` asks for
 * SWITCHYARD_ADMIN_KEY), so a client's 401 is answered 422 (review14 R1). Other statuses are the
 * endpoint's own. Every such answer carries the endpoint's status in `error.refused_status` and begins
 * its message with "The endpoint would refuse this request (STATUS): ".
 */
import { adminError } from "./replies.ts";

/** Statuses an admin client reads as being about its own admin credentials, and what is answered instead. */
const ADMIN_AUTH_STATUS: Readonly<Record<number, number>> = { 401: 422 };

/** The endpoint's refusal: its status (4xx), its message and code, the body field at fault if any. */
export interface EndpointRefusal {
  status: number;
  message: string;
  code: string;
  param?: string | null;
}

/** The status the admin API answers for an endpoint refusal of `status` (a client's 401 → 422; others unchanged). */
export function adminStatusForRefusal(status: number): number {
  return ADMIN_AUTH_STATUS[status] ?? status;
}

/**
 * The admin error reply saying the endpoint would refuse the request: status per
 * {@link adminStatusForRefusal}, message "The endpoint would refuse this request (STATUS): MESSAGE",
 * `code` and `param` the endpoint's, `refused_status` the endpoint's status, plus `extra` fields (the
 * dry run's `endpoint_error`, the body the client would get in its own format).
 */
export function endpointRefusalReply(refusal: EndpointRefusal, extra: Record<string, unknown> = {}): Response {
  return adminError(
    adminStatusForRefusal(refusal.status),
    `The endpoint would refuse this request (${refusal.status}): ${refusal.message}`,
    refusal.param ?? null,
    refusal.code,
    { refused_status: refusal.status, ...extra },
  );
}
