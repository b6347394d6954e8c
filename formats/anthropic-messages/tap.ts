/**
 * Passthrough observer for native Anthropic streams (SPEC F-3, 6.4): the provider's bytes go to the
 * client unchanged while the tap reads usage (`message_start` + `message_delta`, cumulative: later
 * values replace), the stop reason, `message_stop`, and an in-band `event: error`.
 *
 * Cheap by design: events are recognised by their SSE `event:` name and only `message_start`,
 * `message_delta` and `error` payloads are JSON-parsed (an unnamed event, which Anthropic never sends,
 * is parsed to learn its type).
 *
 * Bytes are forwarded unchanged but only up to the last complete event (the end of a blank line): a
 * trailing partial event is held until the rest arrives. So when the upstream dies mid-event the client
 * never holds half an event, and {@link AnthropicTap.end} can append clean frames:
 * - the stream was complete (`message_stop`, or the upstream's own `event: error`): nothing;
 * - the stop reason arrived (`message_delta`) but not `message_stop`: only `message_stop` (case B12);
 * - otherwise: one `event: error` (`failure`, else an `api_error` "stream ended early"); never an
 *   invented finish. A `message_stop` before any stop reason is such a cut-off reply too: it (and
 *   whatever follows it) is withheld and the error frame takes its place, as the translated lanes do.
 */
import type { PassthroughTap, TapOptions, TapState } from "../codec.ts";
import { mergeUsage, type HubError } from "../hub.ts";
import { TRUNCATED_ERROR } from "../normalize.ts";
import { HeldEvent, lastEventBoundary, SseReader, wholeEvents, type SseEvent } from "../sse.ts";
import { errorFrame, errorFromObject } from "./errors.ts";
import { stopFromAnthropic, usageFromAnthropic } from "./mapping.ts";

const EMPTY = new Uint8Array(0);
const utf8 = new TextEncoder();
const MESSAGE_STOP_FRAME = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
/** The line that opens a `message_stop` event (Anthropic names every event). */
const MESSAGE_STOP_LINE = Buffer.from("event: message_stop");
const bufferLastIndexOf = Buffer.prototype.lastIndexOf;

/** {@link lastEventBoundary} as {@link HeldEvent} asks for it: −1 when no event ended. */
const lastEventEnd = (bytes: Uint8Array): number => lastEventBoundary(bytes) || -1;

/** The passthrough tap; see the module doc. */
export class AnthropicTap implements PassthroughTap {
  readonly state: TapState = { usage: {}, sawContent: false, stopReason: null, terminal: false };
  private readonly reader: SseReader;
  /** Bytes after the last complete event, not yet forwarded (a terminator can start up to 3 bytes before a read). */
  private readonly pending = new HeldEvent(lastEventEnd, 3);
  private ended = false;
  /**
   * `message_stop` arrived before any stop reason (and without an error): the reply was cut off, not
   * finished. That event and anything after it are withheld, and `end()` sends the error frame.
   */
  private prematureStop = false;

  constructor(_opts: TapOptions) {
    this.reader = new SseReader((ev) => this.onEvent(ev));
  }

  push(chunk: Uint8Array): Uint8Array {
    if (this.ended || this.prematureStop || chunk.length === 0) return EMPTY;
    const out = this.pending.push(chunk);
    if (out.length === 0) return EMPTY;
    this.reader.push(out);
    if (this.prematureStop) {
      // Forward what came before the withheld `message_stop` (its event line starts the event).
      this.pending.takeAll();
      const at = bufferLastIndexOf.call(out, MESSAGE_STOP_LINE) as number;
      // An unnamed `message_stop` (never Anthropic's own) is forwarded; the error frame then follows it.
      return at < 0 ? out : out.subarray(0, at);
    }
    return out;
  }

  end(failure?: HubError): Uint8Array {
    if (this.ended) return EMPTY;
    this.ended = true;
    let tail = "";
    const rest = this.pending.takeAll();
    if (rest.length > 0 && !this.state.terminal && this.state.error === undefined) {
      // A final event without its blank line (some servers close right after the last data line):
      // complete it if it parses as a whole event; otherwise it is a torn event and is not forwarded.
      const text = new TextDecoder().decode(rest);
      if (wholeEvents(text)) {
        tail = text + "\n\n";
        this.reader.pushText(tail);
        if (this.prematureStop) tail = "";
      }
    }
    const s = this.state;
    if (s.terminal || s.error !== undefined) return tail.length > 0 ? utf8.encode(tail) : EMPTY;
    if (s.stopReason !== null) {
      s.terminal = true;
      return utf8.encode(tail + MESSAGE_STOP_FRAME);
    }
    const err = failure ?? TRUNCATED_ERROR;
    // The client gets an in-band error: the reply failed, whatever the caller records (SPEC 6.4).
    s.error = err;
    return utf8.encode(tail + errorFrame(err));
  }

  private onEvent(ev: SseEvent): void {
    let name = ev.event;
    if (name === undefined) {
      // Unnamed events are not Anthropic's; learn the type from the payload.
      const data = ev.data;
      if (data.length === 0 || data === "[DONE]") return;
      try {
        const t = JSON.parse(data)?.type;
        if (typeof t !== "string") return;
        name = t;
      } catch {
        return;
      }
    }
    switch (name) {
      case "content_block_start":
        this.state.sawContent = true;
        return;
      case "message_stop":
        // Only a reply with its stop reason (or the provider's own error) is finished (SPEC 6.4): the
        // translated lanes read a stop without one as truncated, and so does the passthrough.
        if (this.state.stopReason === null && this.state.error === undefined) this.prematureStop = true;
        else this.state.terminal = true;
        return;
      case "message_start": {
        const m = parse(ev.data);
        if (m) mergeUsage(this.state.usage, usageFromAnthropic(m.message?.usage));
        return;
      }
      case "message_delta": {
        const m = parse(ev.data);
        if (!m) return;
        mergeUsage(this.state.usage, usageFromAnthropic(m.usage));
        const raw = m.delta?.stop_reason;
        if (typeof raw === "string") {
          this.state.stopReason = stopFromAnthropic(raw);
          this.state.sawContent = true;
        }
        return;
      }
      case "error": {
        const m = parse(ev.data);
        this.state.error = errorFromObject(m?.error, 0);
        return;
      }
      default:
        return;
    }
  }
}

function parse(data: string): any {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** {@link FormatCodec.createTap} for Anthropic Messages. */
export function createTap(opts: TapOptions): PassthroughTap {
  return new AnthropicTap(opts);
}
