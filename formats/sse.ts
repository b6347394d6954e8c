/**
 * Server-sent events, both directions (REFERENCE §0).
 *
 * Reading uses eventsource-parser (the WHATWG event-stream algorithm: CR, LF and CRLF line ends,
 * comment/keep-alive lines, multi-line `data`, events split across reads) behind a streaming UTF-8
 * decoder, so a multi-byte character split across reads is never turned into U+FFFD.
 * Writing always uses `\n` line ends and `\n\n` terminators.
 */
import { createParser, type EventSourceParser } from "eventsource-parser";

const STREAM = { stream: true };

/** One parsed SSE event: `event` is the `event:` field (undefined when absent), `data` the joined data lines. */
export interface SseEvent {
  event?: string | undefined;
  data: string;
}

/**
 * Incremental SSE reader. `push(bytes)` calls `onEvent` synchronously for every complete event;
 * `end()` flushes a final event that lacked its blank-line terminator (some servers close right after
 * the last `data:` line) — callers decide whether that counts as a complete stream.
 */
export class SseReader {
  private readonly decoder = new TextDecoder("utf-8");
  private readonly parser: EventSourceParser;

  /** `onEvent` gets the parser's own message object (no copy per event); it must not keep it past the call's purpose. */
  constructor(onEvent: (ev: SseEvent) => void) {
    this.parser = createParser({ onEvent });
  }

  /** Feeds one read of bytes. */
  push(chunk: Uint8Array): void {
    const text = this.decoder.decode(chunk, STREAM);
    if (text.length > 0) this.parser.feed(text);
  }

  /** Feeds text that is already decoded (tests, fixtures). */
  pushText(text: string): void {
    this.parser.feed(text);
  }

  /** End of input: flushes the UTF-8 decoder and any unterminated final event. */
  end(): void {
    const rest = this.decoder.decode();
    if (rest.length > 0) this.parser.feed(rest);
    // Terminate a final event that lacked its blank line so it is dispatched (reset alone drops it).
    this.parser.feed("\n\n");
    this.parser.reset({ consume: true });
  }
}

/** Formats one SSE event with a name (`event:` line) — Anthropic and Responses style. */
export function sseNamed(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}

/** Formats one SSE event without a name (`data:` only) — Chat and Gemini style. */
export function sseData(data: string): string {
  return `data: ${data}\n\n`;
}

/** The Chat stream terminator. */
export const SSE_DONE = "data: [DONE]\n\n";

/** Response headers for an SSE reply (REFERENCE §0 "Emitting"). */
export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

/**
 * Parses JSON without throwing: returns `undefined` for invalid text. Used on upstream data lines,
 * where a malformed line must become an error event, not an exception.
 */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The last `k` bytes (fewer when there are not that many) of the bytes `parts` hold in order (a read
 * may be a single byte).
 */
function lastBytes(parts: readonly Uint8Array[], k: number): Uint8Array {
  const last = parts[parts.length - 1];
  if (last !== undefined && last.length >= k) return last.subarray(last.length - k);
  const out: number[] = [];
  for (let i = parts.length - 1; i >= 0 && out.length < k; i--) {
    const p = parts[i];
    for (let j = p.length - 1; j >= 0 && out.length < k; j--) out.push(p[j]);
  }
  return Uint8Array.from(out.reverse());
}

/**
 * A byte passthrough's held-back partial event (the Anthropic and Responses taps): reads are forwarded
 * up to the end of their last complete event and the rest is held (copied, one part per read). Only
 * each new read is searched for a terminator, with the last `lookBack` held bytes before it (a
 * terminator may straddle reads), so an event that spans many reads (MBs of tool-call arguments in one
 * delta) is joined once, when it completes, not copied and rescanned on every read.
 */
export class HeldEvent {
  private parts: Uint8Array[] = [];
  private len = 0;

  /**
   * @param lastEnd the end offset of the last complete event in `bytes`, or −1; `held` is how many of
   *   its first bytes were already held (searched before).
   * @param lookBack how many held bytes a terminator that ends in a new read can start in.
   */
  constructor(
    private readonly lastEnd: (bytes: Uint8Array, held: number) => number,
    private readonly lookBack: number,
  ) {}

  /** Bytes held, not yet forwarded. */
  get size(): number {
    return this.len;
  }

  /** Adds a read; returns the held bytes and the read up to the last complete event (empty when none ended), holding the rest. */
  push(chunk: Uint8Array): Uint8Array {
    let data = chunk;
    let cut: number;
    if (this.len > 0) {
      const tail = lastBytes(this.parts, this.lookBack);
      const probe = new Uint8Array(tail.length + chunk.length);
      probe.set(tail, 0);
      probe.set(chunk, tail.length);
      const at = this.lastEnd(probe, tail.length);
      if (at < 0) {
        this.parts.push(chunk.slice());
        this.len += chunk.length;
        return EMPTY_BYTES;
      }
      this.parts.push(chunk);
      data = concatBytes(this.parts, this.len + chunk.length);
      cut = this.len - tail.length + at;
    } else {
      cut = this.lastEnd(chunk, 0);
      if (cut < 0) {
        this.parts = [chunk.slice()];
        this.len = chunk.length;
        return EMPTY_BYTES;
      }
    }
    this.parts = [];
    this.len = 0;
    if (cut < data.length) {
      const rest = data.slice(cut);
      this.parts = [rest];
      this.len = rest.length;
    }
    return cut === data.length ? data : data.subarray(0, cut);
  }

  /** Everything held, joined (empty when nothing is), and nothing held after. */
  takeAll(): Uint8Array {
    const all = this.len > 0 ? concatBytes(this.parts, this.len) : EMPTY_BYTES;
    this.parts = [];
    this.len = 0;
    return all;
  }
}

const EMPTY_BYTES = new Uint8Array(0);

/**
 * Concatenates byte chunks (stream reads, held-back partial events). When at most one chunk holds
 * bytes (one chunk; or a whole reply beside a driver's empty output, as the commit point's parts
 * usually are) that chunk is returned as it is, without a copy. `total` (bytes) may be passed when the
 * caller already tracks it.
 */
export function concatBytes(parts: Uint8Array[], total?: number): Uint8Array {
  if (parts.length === 1) return parts[0];
  let n = 0;
  let filled = -1;
  let several = false;
  for (let i = 0; i < parts.length; i++) {
    const len = parts[i].byteLength;
    if (len === 0) continue;
    n += len;
    if (filled >= 0) several = true;
    filled = i;
  }
  if (!several) return filled >= 0 ? parts[filled] : new Uint8Array(0);
  if (total !== undefined) n = total;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.byteLength;
  }
  return out;
}

const LF = 10;
const CR = 13;

/**
 * Index just past the last event terminator (a line end immediately followed by another line end) in
 * `b`, or 0 when there is none. Handles `\n\n`, `\r\n\r\n`, `\r\r`; a trailing lone `\r` after a line
 * end is not taken as a terminator (it may be the first half of a CRLF).
 */
export function lastEventBoundary(b: Uint8Array): number {
  for (let i = b.length - 1; i >= 1; i--) {
    const c = b[i];
    const p = b[i - 1];
    if (c === LF) {
      // "\n\n", or a CRLF empty line after a line end ("\n\r\n", "\r\r\n", "\r\n\r\n")
      if (p === LF || (p === CR && i >= 2 && (b[i - 2] === LF || b[i - 2] === CR))) return i + 1;
    } else if (c === CR && (p === CR || p === LF) && i + 1 < b.length && b[i + 1] !== LF) {
      // a lone CR empty line ("\r\r", "\n\r") whose CR is known not to start a CRLF
      return i + 1;
    }
  }
  return 0;
}

/** True when every `data:` line of an event-stream fragment is JSON (or `[DONE]`): the event is whole. */
export function wholeEvents(text: string): boolean {
  let any = false;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (!line.startsWith("data:")) continue;
    const v = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    if (v === "[DONE]") continue;
    try {
      JSON.parse(v);
      any = true;
    } catch {
      return false;
    }
  }
  return any;
}
