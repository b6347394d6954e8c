/**
 * Web Streams wrappers around the synchronous codec pieces, for tests and for callers that want a
 * standalone stage. The pipeline composes the pieces itself inside one TransformStream per request.
 */
import type { DecoderOptions, EncoderOptions, FormatCodec } from "./codec.ts";
import type { HubEvent } from "./hub.ts";
import { EventNormalizer } from "./normalize.ts";

const utf8 = new TextEncoder();

/** Provider bytes → (loose) hub events. */
export function decoderStream(codec: FormatCodec, opts: DecoderOptions): TransformStream<Uint8Array, HubEvent> {
  let dec: ReturnType<FormatCodec["createDecoder"]>;
  return new TransformStream<Uint8Array, HubEvent>({
    start(controller) {
      dec = codec.createDecoder(opts, (e) => controller.enqueue(e));
    },
    transform(chunk) {
      dec.push(chunk);
    },
    flush() {
      dec.end();
    },
  });
}

/** Loose hub events → canonical hub events (see formats/normalize.ts). */
export function normalizerStream(): TransformStream<HubEvent, HubEvent> {
  let n: EventNormalizer;
  return new TransformStream<HubEvent, HubEvent>({
    start(controller) {
      n = new EventNormalizer((e) => controller.enqueue(e));
    },
    transform(ev) {
      n.event(ev);
    },
    flush() {
      n.end();
    },
  });
}

/** Canonical hub events → client bytes. Throws if the codec has no client side. */
export function encoderStream(codec: FormatCodec, opts: EncoderOptions): TransformStream<HubEvent, Uint8Array> {
  if (!codec.createEncoder) throw new Error(`${codec.format} has no client-side encoder`);
  const create = codec.createEncoder.bind(codec);
  let enc: ReturnType<NonNullable<FormatCodec["createEncoder"]>>;
  return new TransformStream<HubEvent, Uint8Array>({
    start(controller) {
      enc = create(opts, (t) => controller.enqueue(utf8.encode(t)));
    },
    transform(ev) {
      enc.event(ev);
    },
    flush() {
      enc.end();
    },
  });
}

/** Collects every chunk of a stream into an array. */
export async function collect<T>(stream: ReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of stream) out.push(x);
  return out;
}

/** A ReadableStream of the given byte pieces (split points for framing tests). */
export function bytesStream(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of pieces) controller.enqueue(p);
      controller.close();
    },
  });
}

/** Splits bytes at the given offsets (REFERENCE §0 framing tests, CASES.md `split_at`). */
export function splitBytes(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let last = 0;
  for (const o of [...offsets].sort((a, b) => a - b)) {
    if (o <= last || o >= bytes.length) continue;
    out.push(bytes.subarray(last, o));
    last = o;
  }
  out.push(bytes.subarray(last));
  return out;
}
