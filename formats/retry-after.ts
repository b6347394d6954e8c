/**
 * The wait a provider names in its HTTP response headers, shared by the four codecs' `parseError`.
 * Pure: an HTTP date is measured against a `now` the caller passes (formats keep no clock).
 */

/**
 * Seconds to wait before retrying, from response headers (REFERENCE §5.2: keep `retry-after`):
 * `retry-after-ms` (milliseconds, the OpenAI and Anthropic SDKs' convention) first, else
 * `Retry-After` as delta seconds or an HTTP date (RFC 9110 §10.2.3). Delta values are returned as
 * sent (fractional seconds kept: callers round up when their format needs whole seconds); an HTTP
 * date is measured against `now` (ms since the epoch), rounded up and never negative, and is not read
 * at all without `now`. Undefined when the headers are absent or name no readable wait.
 */
export function retryAfterSeconds(headers: Headers | undefined, now?: number): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms) / 1000;
  const ra = headers.get("retry-after")?.trim();
  if (!ra) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra)) return Number(ra);
  if (now === undefined) return undefined;
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Parses the Go-style durations of OpenAI's `x-ratelimit-reset-*` headers ("1s", "6m0s", "20ms",
 * "1h2m3.5s") into milliseconds; undefined when nothing in the text is a duration.
 */
export function parseGoDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let matched = false;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    matched = true;
    const n = Number(m[1]);
    total += m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : m[2] === "m" ? n * 60_000 : n * 3600_000;
  }
  return matched ? total : undefined;
}

/**
 * A reset time as providers write it — Unix seconds, Unix milliseconds or an ISO 8601 date — in ms
 * since the epoch; undefined when empty or unreadable.
 */
export function epochMs(value: string | null | undefined): number | undefined {
  const t = value?.trim();
  if (!t) return undefined;
  const n = Number(t);
  if (Number.isFinite(n)) return n < 1e12 ? n * 1000 : n;
  const d = Date.parse(t);
  return Number.isFinite(d) ? d : undefined;
}
