/**
 * A request's headers as the pipeline reads them (SPEC G-1…G-3, 2.4, S-1, P-3): the forwarding and
 * origin headers, the client key, the session headers, the token-saver switch and the headers an
 * executor forwards. Most of the names looked up are absent from a given request (a client sends its
 * key one way, one session header or none, no forwarding header on loopback), and each `Headers.get`
 * or `has` is a native call (~0.1 µs in a loop, about twice that in the running server under load,
 * docs/performance.md item 138), ~15 of them per request, plus a `forEach` over every header for the
 * `x-opencode-*` names a same-format call forwards. Here the headers are taken once, as Bun's
 * `Headers.toJSON()` (one native call: a plain object of every name, lower-case, and its value, a
 * repeated header's values joined with ", " as `get` joins them), and read from that object.
 */

/** The reads the pipeline makes of a request's headers; a `Headers` is one, a {@link ClientHeaders} another. */
export interface HeaderReader {
  /** The header's value (repeated headers joined with ", "), or null when absent. Names in lower case. */
  get(name: string): string | null;
  /** Whether the header is present. Names in lower case. */
  has(name: string): boolean;
}

/** A request's headers, taken once ({@link HeaderReader}); `raw` is the request's own `Headers` object. */
export class ClientHeaders implements HeaderReader {
  /** Every header: lower-case name → value (`set-cookie` as an array, read through `raw`). */
  private readonly values: Record<string, unknown>;

  constructor(readonly raw: Headers) {
    this.values = (raw as Headers & { toJSON(): Record<string, unknown> }).toJSON();
  }

  get(name: string): string | null {
    const v = this.values[name];
    if (typeof v === "string") return v;
    // Absent; or not a plain value (an array of `set-cookie` values, a property every object has):
    // the request's own headers answer.
    return v === undefined ? null : this.raw.get(name);
  }

  has(name: string): boolean {
    const v = this.values[name];
    if (typeof v === "string") return true;
    return v !== undefined && this.raw.has(name);
  }

  /**
   * Calls `each` with every header whose name starts with `prefix` (lower case), and its value; `each`
   * a `Headers`: sets each such header there (no callback to make per call: an executor copies the
   * `x-opencode-*` headers of every same-format call, docs/performance.md item 228).
   */
  withPrefix(prefix: string, each: ((name: string, value: string) => void) | Headers): void {
    for (const name in this.values) {
      if (!name.startsWith(prefix)) continue;
      const v = this.get(name);
      if (v === null) continue;
      if (typeof each === "function") each(name, v);
      else each.set(name, v);
    }
  }
}

/** {@link ClientHeaders.withPrefix} of a request's headers, whichever form they come in. */
export function headersWithPrefix(headers: Headers | ClientHeaders, prefix: string, each: ((name: string, value: string) => void) | Headers): void {
  if (headers instanceof ClientHeaders) headers.withPrefix(prefix, each);
  else fromHeaders(headers, prefix, each);
}

/**
 * {@link headersWithPrefix} for a `Headers`: a function of its own, so that the callback it makes (which
 * holds `prefix` and `each`) does not make its caller allocate their scope on every call, the common
 * path (a {@link ClientHeaders}) too (JavaScriptCore makes a function's captured variables at its entry:
 * docs/performance.md item 255).
 */
function fromHeaders(headers: Headers, prefix: string, each: ((name: string, value: string) => void) | Headers): void {
  headers.forEach((value, name) => {
    if (!name.startsWith(prefix)) return;
    if (typeof each === "function") each(name, value);
    else each.set(name, value);
  });
}
