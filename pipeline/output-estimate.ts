/**
 * The output of a reply that ended before its provider reported any usage (a Chat stream cut before
 * its final usage chunk by the client or the upstream, a provider that sends none): estimated from the
 * characters of text, reasoning and tool-call arguments that reached the client ({@link gatheredChars}),
 * turned into tokens by the local token count's rule ({@link estimateOutputTokens}: characters / 4).
 *
 * The hub drivers see those characters as events anyway and count them as they pass. A passthrough
 * forwards the provider's bytes without decoding them, and counting there per event cost its fast path
 * measurably (docs/performance.md item 74): the passthrough driver instead keeps what it forwarded
 * ({@link OutputSample}, one array push per upstream read, up to a bound), and the characters are
 * counted only when a reply ended without usage, by the provider format's own decoder; what came after
 * the kept part is extrapolated by its size.
 */
import type { DecoderOptions, FormatCodec } from "../formats/codec.ts";
import type { HubEvent } from "../formats/hub.ts";
import type { ReplyEvent } from "./ports.ts";
import { gatheredChars } from "./whole-reply-bound.ts";

/**
 * Tokens of `chars` characters of reply text, estimated by the rule of the local token count
 * (pipeline/predicates.ts `estimateInputTokens`: characters / 4, rounded up); 0 for none.
 */
export function estimateOutputTokens(chars: number): number {
  return chars > 0 ? Math.ceil(chars / 4) : 0;
}

/**
 * What a passthrough driver forwarded, kept to be read only if needed: the outputs of its reads (bytes,
 * or a batch of events) until `limit` units of `size` were kept (the first 64 KiB of an SSE reply, the
 * first 512 events of an event tap's), then only their size is added up. {@link count} reads the kept
 * part with `chars` and scales it to everything seen (exact for a reply within the limit). Memory: the
 * kept outputs, which are views of the upstream's reads (no copy).
 */
export class OutputSample<Out> {
  /**
   * The first kept output, and the list of all of them once there is a second: a reply sent whole at
   * the commit point has one output (its first read's), so it makes no list (docs/performance.md item 298).
   */
  private first: Out | undefined;
  private parts: Out[] | undefined;
  private kept = 0;
  private seen = 0;
  private counted = -1;

  constructor(
    private readonly size: (out: Out) => number,
    private readonly limit: number,
    /** Counts the kept outputs' characters with `codec`'s decoder: a module function, not a closure per reply (item 248). */
    private readonly chars: (codec: FormatCodec, options: DecoderOptions, parts: Out[]) => number,
    private readonly codec: FormatCodec,
    private readonly options: DecoderOptions,
  ) {}

  /** One output of the driver (ignored when empty). */
  add(out: Out): void {
    const n = this.size(out);
    if (n === 0) return;
    this.seen += n;
    if (this.kept < this.limit) {
      if (this.first === undefined) this.first = out;
      else if (this.parts === undefined) this.parts = [this.first, out];
      else this.parts.push(out);
      this.kept += n;
    }
  }

  /** Characters of text, reasoning and tool arguments in everything added (estimated past the limit); counted once. */
  count(): number {
    if (this.counted >= 0) return this.counted;
    let n = 0;
    if (this.kept > 0) {
      n = this.chars(this.codec, this.options, this.parts ?? [this.first!]);
      if (this.seen > this.kept) n = Math.round((n * this.seen) / this.kept);
    }
    this.counted = n;
    return n;
  }
}

/** Bytes of SSE a passthrough keeps to count from (see {@link OutputSample}). */
export const SAMPLE_BYTES = 64 * 1024;
/** Events an event tap's passthrough keeps to count from. */
export const SAMPLE_EVENTS = 512;

/** The sample of a passthrough whose output is SSE bytes of `codec`'s format. */
export function byteSample(codec: FormatCodec, options: DecoderOptions): OutputSample<Uint8Array> {
  return new OutputSample<Uint8Array>(byteLength, SAMPLE_BYTES, decodedChars, codec, options);
}

/** The sample of a passthrough whose output is the events of an event tap of `codec`'s format. */
export function eventSample(codec: FormatCodec, options: DecoderOptions): OutputSample<ReplyEvent[]> {
  return new OutputSample<ReplyEvent[]>(eventCount, SAMPLE_EVENTS, eventChars, codec, options);
}

/** {@link decodedChars} of event batches, written back as SSE bytes (only when a reply ended without usage). */
function eventChars(codec: FormatCodec, options: DecoderOptions, batches: ReplyEvent[][]): number {
  return decodedChars(
    codec,
    options,
    batches.map((b) => utf8.encode(b.map((e) => (e.event ? `event: ${e.event}\n` : "") + `data: ${e.data}\n\n`).join(""))),
  );
}

/** One encoder for the process: an event sample is encoded only when a reply ended without usage. */
const utf8 = new TextEncoder();
const byteLength = (b: Uint8Array) => b.byteLength;
const eventCount = (b: ReplyEvent[]) => b.length;

/**
 * Characters of text, reasoning and tool-call arguments ({@link gatheredChars}) in SSE bytes of
 * `codec`'s format, read by its decoder; what it cannot read counts nothing (an estimate never throws).
 */
export function decodedChars(codec: FormatCodec, options: DecoderOptions, parts: Uint8Array[]): number {
  let n = 0;
  const decoder = codec.createDecoder(options, (ev: HubEvent) => {
    if (ev.type === "block_delta" || ev.type === "block_start") n += gatheredChars(ev);
  });
  try {
    for (const p of parts) decoder.push(p);
    decoder.end();
  } catch {
    // an event past the bound: what was read before it counts
  }
  return n;
}
