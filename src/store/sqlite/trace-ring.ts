/**
 * The SQLite route-trace ring (SPEC O-2) as blocks (migration 8): each flush writes its traces as ONE
 * row of `trace_blocks` (at most {@link BLOCK_MAX} traces per row), the traces' lines joined and
 * compressed with zstd, with the smallest and largest route id and request id of the block beside it.
 * One row and one compressed body per flush instead of a row and two index entries per trace: the
 * block's body fills a page or two of the WAL where the traces' rows filled ten
 * (docs/performance.md, item 88). The ring keeps whole blocks: the oldest are deleted while the
 * others still hold at least N traces, so at least the newest N and fewer than N + {@link BLOCK_MAX}
 * are kept, all of them visible.
 *
 * A block's text is one line per trace, each line starting with "\n": the route id as a JSON string,
 * a tab, the request id as a JSON string, a tab, the trace's JSON. JSON text holds no raw newline or
 * tab, so `\n"ID"\t` finds a route id and `\t"ID"\t` a request id, and nothing else. No I/O:
 * encoding (into a buffer reused between calls), decoding and searching; the queries are in ./usage.ts
 * and ./flush.ts.
 */
import { isPlainJsonText } from "../../../formats/json-text.ts";
import type { TraceParams } from "../rows.ts";

/** Traces per block row at most (a flush of more writes several blocks). */
export const BLOCK_MAX = 256;

/** zstd level of a block body: level 1 compresses the bench's 255-trace block 36× in ~0.25 µs per trace. */
const ZSTD_LEVEL = 1;

/** The columns of one `trace_blocks` row, as the flush inserts them. */
export interface TraceBlock {
  n: number;
  minRoute: string;
  maxRoute: string;
  minRequest: string;
  maxRequest: string;
  /** zstd of the block's text. */
  body: Uint8Array;
}

/** A block's id ranges, as read back to decide which blocks can hold an id. */
export interface BlockHead {
  seq: number;
  min_route: string;
  max_route: string;
  min_request: string;
  max_request: string;
}

/**
 * Bytes of the buffer {@link encodeBlock} writes a block's text into, kept between flushes; a block that
 * needs more gets a larger buffer for its own encoding, kept only up to {@link KEPT_MAX}.
 */
const KEPT_BYTES = 256 * 1024;
/** Largest text buffer kept for the next block (a block of long traces, e.g. with error texts, may need more once). */
const KEPT_MAX = 1024 * 1024;
let kept: Buffer | undefined;

/**
 * Encodes traces (route id, request id, ts, JSON body; non-empty) as one block, in their order.
 *
 * The block's text is written as UTF-8 straight into a buffer kept for the life of the process and
 * compressed from there (docs/performance.md item 182): building it as one string made a rope of six
 * pieces per trace, which the compressor flattened into a fresh ~150 KB string and encoded again into
 * fresh memory, on every flush, memory whose pages the process had to fault in each time. The bytes
 * compressed are the same as the string's UTF-8. An id is written between quotes as it is when JSON
 * would not escape it, else as `JSON.stringify` writes it.
 */
export function encodeBlock(traces: readonly TraceParams[]): TraceBlock {
  let minRoute = traces[0]![0];
  let maxRoute = minRoute;
  let minRequest = traces[0]![1];
  let maxRequest = minRequest;
  let buf = kept ?? (kept = Buffer.allocUnsafeSlow(KEPT_BYTES));
  let at = 0;
  for (const [route, request, , body] of traces) {
    if (route < minRoute) minRoute = route;
    else if (route > maxRoute) maxRoute = route;
    if (request < minRequest) minRequest = request;
    else if (request > maxRequest) maxRequest = request;
    const r = isPlainJsonText(route) ? route : JSON.stringify(route).slice(1, -1);
    const q = isPlainJsonText(request) ? request : JSON.stringify(request).slice(1, -1);
    // A UTF-16 unit is at most 3 UTF-8 bytes; 7 for the newline, the four quotes and the two tabs.
    const most = 3 * (r.length + q.length + body.length) + 7;
    if (at + most > buf.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(2 * buf.length, at + most));
      buf.copy(bigger, 0, 0, at);
      buf = bigger;
      if (bigger.length <= KEPT_MAX) kept = bigger;
    }
    buf[at++] = 0x0a; // \n
    buf[at++] = 0x22; // "
    at += buf.write(r, at);
    buf[at++] = 0x22;
    buf[at++] = 0x09; // \t
    buf[at++] = 0x22;
    at += buf.write(q, at);
    buf[at++] = 0x22;
    buf[at++] = 0x09;
    at += buf.write(body, at);
  }
  return { n: traces.length, minRoute, maxRoute, minRequest, maxRequest, body: Bun.zstdCompressSync(buf.subarray(0, at), { level: ZSTD_LEVEL }) };
}

/**
 * A block body's text (see the module comment). `Buffer#toString` rather than a `TextDecoder`: the
 * same UTF-8 decoding (invalid bytes as U+FFFD), ~0.01 against ~0.6 ms for a 148 KB block of ASCII.
 */
export function decodeBlock(body: Uint8Array): string {
  return Bun.zstdDecompressSync(body).toString("utf8");
}

/** Whether a block can hold `id` as a route id (`route`) or a request id. */
export function blockMayHold(head: BlockHead, id: string, route: boolean): boolean {
  return route ? head.min_route <= id && id <= head.max_route : head.min_request <= id && id <= head.max_request;
}

/** One trace line of a block, split. */
export interface TraceLine {
  routeId: string;
  requestId: string;
  /** The trace's JSON. */
  json: string;
}

/** The line starting at `start` (its "\n") of a block's text, up to `end` (the next line's "\n") when known. */
function lineAt(text: string, start: number, end = -1): TraceLine {
  const tab1 = text.indexOf("\t", start + 1);
  const tab2 = text.indexOf("\t", tab1 + 1);
  if (end < 0) end = text.indexOf("\n", tab2 + 1);
  return {
    routeId: JSON.parse(text.slice(start + 1, tab1)) as string,
    requestId: JSON.parse(text.slice(tab1 + 1, tab2)) as string,
    json: text.slice(tab2 + 1, end < 0 ? text.length : end),
  };
}

/** The last (newest) line of a block's text with this route id (`route`) or request id, if any. */
export function findLine(text: string, id: string, route: boolean): TraceLine | undefined {
  const key = JSON.stringify(id);
  if (route) {
    const at = text.lastIndexOf("\n" + key + "\t");
    return at < 0 ? undefined : lineAt(text, at);
  }
  const at = text.lastIndexOf("\t" + key + "\t");
  return at < 0 ? undefined : lineAt(text, text.lastIndexOf("\n", at));
}

/** Every line of a block's text, newest (last) first. */
export function linesNewestFirst(text: string): TraceLine[] {
  const out: TraceLine[] = [];
  let end = text.length;
  while (end > 0) {
    const start = text.lastIndexOf("\n", end - 1);
    out.push(lineAt(text, start, end));
    end = start;
  }
  return out;
}
