/**
 * A streamed reply's in-band error scrubbed (SPEC 2.4): an error event that an upstream sends after
 * content (Anthropic `event: error`, a Chat `{"error": …}` chunk, a Responses `error` or
 * `response.failed` event, a Gemini error object) may echo the account's key in its message, and the
 * client gets it in-band, not as an error answer the gateway scrubs whole (pipeline/gateway.ts).
 *
 * Only error events are touched, and only once there is one: a native lane's driver
 * (pipeline/passthrough-driver.ts) passes the tap's output here only after the tap has read an
 * in-band error (TapState.error), with the tap as the judge of which of its events are errors
 * (PassthroughTap.isErrorEvent: a text delta that says "error" is none, and goes out as it came); a
 * translated lane's (pipeline/re-translate.ts) passes only the hub's error event. An ordinary stream's
 * bytes are never decoded, searched or copied for it.
 */
import type { InBandErrors, StreamEvent } from "../formats/codec.ts";
import type { HubError, HubEvent } from "../formats/hub.ts";
import { readEvent, splitEvents, splitLines } from "../formats/sse.ts";
import { scrubText, type SecretSource } from "./scrub.ts";

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * `out`, a native lane's output after its tap read an in-band error (the tap's bytes: whole SSE events;
 * or an event tap's events, SPEC 2.5), with each event that `errors` (the tap) says is an in-band error
 * scrubbed of `source`'s secrets and of anything shaped like a credential (pipeline/scrub.ts
 * scrubText): its JSON data re-serialised with every string scrubbed, its other lines and its framing
 * kept; data that is not JSON scrubbed as text. Every other event is left as it came. `out` itself when
 * nothing changed.
 */
export function scrubErrorOutput<Out>(out: Out, source: SecretSource, errors: InBandErrors): Out {
  if (out instanceof Uint8Array) return scrubErrorBytes(out, source, errors) as Out;
  if (Array.isArray(out)) return scrubErrorEvents(out as StreamEvent[], source, errors) as Out;
  return out;
}

/** {@link scrubErrorOutput} of SSE bytes (whole events, so whole UTF-8 characters). */
export function scrubErrorBytes(out: Uint8Array, source: SecretSource, errors: InBandErrors): Uint8Array {
  if (out.byteLength === 0) return out;
  const text = utf8Decoder.decode(out);
  const clean = scrubErrorText(text, source.secrets(), errors);
  return clean === text ? out : utf8.encode(clean);
}

/**
 * {@link scrubErrorOutput} of SSE text (whole events): each event read as the SSE reader reads it
 * (formats/sse.ts readEvent) and, when `errors` says it is an error, scrubbed ({@link scrubEventText}).
 */
export function scrubErrorText(text: string, secrets: readonly string[], errors: InBandErrors): string {
  const parts = splitEvents(text);
  let changed = false;
  // Events at the even indexes, the blank lines that end them at the odd ones.
  for (let i = 0; i < parts.length; i += 2) {
    const event = parts[i]!;
    const read = readEvent(event);
    if (read === undefined || !errors.isErrorEvent(read.event, read.data)) continue;
    const clean = scrubEventText(event, read.data, secrets);
    if (clean !== event) {
      parts[i] = clean;
      changed = true;
    }
  }
  return changed ? parts.join("") : text;
}

/** {@link scrubErrorOutput} of an event tap's events: a new array only when an event changed. */
export function scrubErrorEvents(events: StreamEvent[], source: SecretSource, errors: InBandErrors): StreamEvent[] {
  let out: StreamEvent[] | undefined;
  let list: readonly string[] | undefined;
  for (let i = 0; i < events.length; i++) {
    const ev = events[i]!;
    if (!errors.isErrorEvent(ev.event, ev.data)) continue;
    const data = scrubData(ev.data, (list ??= source.secrets()));
    if (data === ev.data) continue;
    out ??= events.slice();
    out[i] = { event: ev.event, data };
  }
  return out ?? events;
}

/**
 * One error event's text (its lines, without the blank line that ends it; `data` is its data as read)
 * scrubbed: when the data is JSON and a string in it changed, it is written again as one `data:` line
 * where the event's first was (its other data lines dropped, every other line kept with its line end);
 * when it is not JSON, the event's whole text scrubbed.
 */
function scrubEventText(event: string, data: string, secrets: readonly string[]): string {
  const json = scrubbedJson(data, secrets);
  if (json === undefined) return scrubText(event, secrets);
  if (json === data) return event;
  const lines = splitLines(event);
  let out = "";
  let written = false;
  for (let i = 0; i < lines.length; i += 2) {
    const line = lines[i]!;
    const end = lines[i + 1] ?? "";
    if (!line.startsWith("data:")) out += line + end;
    else if (!written) {
      out += `data: ${json}${end}`;
      written = true;
    }
  }
  return out;
}

/** An event's data scrubbed: JSON re-serialised when a string in it changed ({@link scrubbedJson}), else as text. */
function scrubData(data: string, secrets: readonly string[]): string {
  return scrubbedJson(data, secrets) ?? scrubText(data, secrets);
}

/**
 * `text`, JSON, with every string in it (member names too) scrubbed and serialised again; `text`
 * itself when none changed; undefined when it is not JSON. Strings are scrubbed as parsed, so an
 * upstream's own escapes (`\/`, `\u…`) hide nothing.
 */
function scrubbedJson(text: string, secrets: readonly string[]): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const clean = scrubbedValue(value, secrets);
  return clean === value ? text : JSON.stringify(clean);
}

/** A parsed JSON value with every string scrubbed: `value` itself when none changed, else a copy. */
function scrubbedValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") {
    const clean = scrubText(value, secrets);
    return clean === value ? value : clean;
  }
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = scrubbedValue(value[i], secrets);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return out ?? value;
  }
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value as Record<string, unknown>);
  let changed = false;
  for (const entry of entries) {
    const key = scrubText(entry[0], secrets);
    const v = scrubbedValue(entry[1], secrets);
    if (key !== entry[0] || v !== entry[1]) {
      entry[0] = key;
      entry[1] = v;
      changed = true;
    }
  }
  return changed ? Object.fromEntries(entries) : value;
}

/**
 * A hub error event (a translated lane's in-band error, before the client's encoder writes it) with
 * the error's words the client reads (`message`, `code`, `param`) scrubbed of `source`'s secrets and
 * of credential shapes; `ev` itself when none changed. `traceMessage` is left: it never reaches the
 * client, and the route trace scrubs it (pipeline/context.ts noteLateError).
 */
export function scrubHubErrorEvent(ev: Extract<HubEvent, { type: "error" }>, source: SecretSource): Extract<HubEvent, { type: "error" }> {
  const e = ev.error;
  const secrets = source.secrets();
  const message = scrubText(e.message, secrets);
  const code = e.code === undefined ? undefined : scrubText(e.code, secrets);
  const param = e.param === undefined ? undefined : scrubText(e.param, secrets);
  if (message === e.message && code === e.code && param === e.param) return ev;
  const error: HubError = { ...e, message };
  if (code !== undefined) error.code = code;
  if (param !== undefined) error.param = param;
  return { ...ev, error };
}
