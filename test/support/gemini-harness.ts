/**
 * Test helpers for the Gemini format: run bytes through `gemini.createDecoder` in any split, then the
 * normalizer and the accumulator, the way the pipeline composes them.
 */
import { gemini } from "../../formats/gemini/index.ts";
import type { GeminiDecoderOptions } from "../../formats/gemini/decoder.ts";
import type { HubEvent } from "../../formats/hub.ts";
import { accumulate, type Accumulated } from "../../formats/accumulate.ts";
import { normalizeEvents } from "../../formats/normalize.ts";

export const GEMINI_OPTS: GeminiDecoderOptions = { family: "gemini" };

/** Loose decoder events for the given reads (each Uint8Array is one `push`), then `end()`. */
export function decodePieces(pieces: Uint8Array[], opts: GeminiDecoderOptions = GEMINI_OPTS): HubEvent[] {
  const out: HubEvent[] = [];
  const dec = gemini.createDecoder(opts, (e) => out.push(e));
  for (const p of pieces) dec.push(p);
  dec.end();
  return out;
}

/** Loose decoder events for the whole byte string in one read. */
export function decodeBytes(bytes: Uint8Array, opts?: GeminiDecoderOptions): HubEvent[] {
  return decodePieces([bytes], opts);
}

/** Loose events → canonical events (with the end-of-stream rule) → accumulated reply. */
export function canonical(events: HubEvent[]): HubEvent[] {
  return normalizeEvents(events);
}

export function reply(events: HubEvent[]): Accumulated {
  return accumulate(normalizeEvents(events));
}

/** Bytes split at every offset into exactly two reads: [0,k) and [k,n). */
export function* twoPieceSplits(bytes: Uint8Array): Generator<[number, Uint8Array[]]> {
  for (let k = 1; k < bytes.length; k++) yield [k, [bytes.subarray(0, k), bytes.subarray(k)]];
}

/** One byte per read. */
export function bytewise(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i++) out.push(bytes.subarray(i, i + 1));
  return out;
}

export const utf8 = (s: string) => new TextEncoder().encode(s);

/** An SSE body in Gemini's framing (`data: <json>\r\n\r\n` per chunk). */
export function geminiSse(...chunks: unknown[]): Uint8Array {
  return utf8(chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(""));
}
