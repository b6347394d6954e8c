/**
 * The relative time a `since` names (`GET /admin/api/usage?since=`, `calls`, `switchyard usage --since`):
 * one rule for the admin API and the command line, which checks it before asking the instance.
 */

/**
 * A `since` value: a whole number above 0 and its unit (s, m, h, d). `0h` is refused: it names an empty
 * window, so `usage --since 0h` listed nothing as if nothing had been used (newuser5 tryout).
 */
export const SINCE = /^(0*[1-9]\d*)(s|m|h|d)$/;

/** The error a `since` that is not {@link SINCE} gets (400 invalid_request, admin API). */
export const SINCE_MESSAGE = "since must look like 30m, 24h or 7d (a whole number above 0 and s, m, h or d)";
