/**
 * Split reads for the decoders' framing tests (test/formats/<format>/decoder.test.ts): the reads a
 * recording is cut into, instead of every two-piece split (a whole decode per offset: quadratic in the
 * recording, 15-48 s per test file under load).
 *
 * Why these cuts cover what a read boundary can change: every decoder's `push` only hands its bytes to
 * formats/sse.ts's SseReader, and the format's own code sees whole events (an event's data is parsed
 * once the event is complete), so a read boundary can only change what the reader delivers. At a
 * boundary the reader is in one of these states:
 *  - UTF-8: a read that ends on an ASCII byte is decoded whole by a shared decoder; one that ends inside
 *    or right after a multi-byte character switches the stream to its own streaming decoder for good; a
 *    first read is checked for a BOM (its first byte 0xEF).
 *  - eventsource-parser: nothing pending (the read ended on a line end); a line ended by a CR whose LF
 *    may start the next read; a blank line that dispatches the event; a partial line whose field name is
 *    still being recognised (its first 6 characters tell `data`, `event`, `id`, `retry` or a line to
 *    skip); or a partial value, kept whole until its line ends, so one state wherever it falls (a JSON
 *    escape inside it included).
 * So a cut is made at every offset from 2 bytes before each line end to 9 bytes after it (the value's
 * last bytes, both halves of a CRLF, the blank line, the next line's field name, colon, space and the
 * first byte of its value), inside and on both sides of every multi-byte UTF-8 sequence and every JSON
 * escape (`\uXXXX` whole), and in the first and last 8 bytes.
 *
 * The prefix is decoded once per relative offset, not once per cut: one decode of the whole recording
 * cuts it at the same offset `d` from every line end (one read per line end: cuts `e + d` for every line
 * end `e`), one decode per `d` from -2 to 9; likewise per offset into every UTF-8 sequence of one length
 * and every escape of one letter. The decoder then meets each cut with everything before it decoded
 * (its own state per event intact) and the same parser state as a two-piece split there (the bytes
 * since the last line end pending), so each decode checks every event's cut at once, for 20-60 whole
 * decodes per recording. (The UTF-8 switch to the streaming decoder happens at the first cut of a decode
 * that ends inside a character; the cuts after it meet the streaming decoder, as the second read of a
 * two-piece split there does.) A decode that differs is narrowed to the offset (two-piece splits at its cuts).
 * On top, `sample` seeded two-piece splits (a fresh decoder, the prefix in one read and the rest in the
 * next: the first read holding many whole events), half of them in those neighbourhoods, and every
 * test also decodes one byte per read (every offset a read boundary).
 */
import { expect } from "bun:test";
import { seededRng } from "../../pipeline/order.ts";

/** One decode's reads: the cuts (ascending offsets `k`, a read ends before byte `k`) and what they are. */
export interface CutSet {
  /** e.g. `line end +3`, `utf8:3 +1`, `escape:u +4`. */
  label: string;
  cuts: number[];
}

/** What {@link splitPlan} chose. */
export interface SplitPlan {
  /** Decodes of the whole recording, each cut at one offset from every place of one kind. */
  cutSets: CutSet[];
  /** Two-piece split offsets (seeded), ascending. */
  points: number[];
  /** Cuts (in the cut sets) between the CR and LF of a CRLF. */
  crlfCuts: number;
  /** Cuts (in the cut sets) right before a UTF-8 continuation byte (inside a character). */
  utf8Cuts: number;
}

/** Options of {@link splitPlan}. */
export interface SplitPlanOptions {
  /** Seed of the two-piece sample. */
  seed?: number;
  /** Two-piece splits (fewer when `budget` is smaller). */
  sample?: number;
  /** Bytes the two-piece splits may decode in all (each decodes the whole recording). */
  budget?: number;
}

/**
 * The cuts for one recording (see the module comment for why these).
 * @param bytes the recording, as the upstream sent it
 */
export function splitPlan(bytes: Uint8Array, opts: SplitPlanOptions = {}): SplitPlan {
  const n = bytes.length;
  const inside = (k: number) => k >= 1 && k <= n - 1;
  // Places of each kind: [kind, anchor offset, offsets before and after the anchor to cut at].
  const places = new Map<string, { from: number; to: number; anchors: number[] }>();
  const place = (kind: string, anchor: number, from: number, to: number) => {
    const p = places.get(kind);
    if (p) p.anchors.push(anchor);
    else places.set(kind, { from, to, anchors: [anchor] });
  };
  let escaped = false;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b === 10 || b === 13) {
      // A CRLF is one line end anchored at its CR; the offsets reach one further (the cut between them).
      if (b === 13 && bytes[i + 1] === 10) place("crlf", i, -2, 10), i++;
      else place("line end", i, -2, 9);
    } else if (b >= 0xc0) {
      const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      place(`utf8:${len}`, i, -1, len + 1);
    } else if (b === 92 /* \ */ && !escaped) {
      const letter = String.fromCharCode(bytes[i + 1] ?? 0);
      place(`escape:${letter}`, i, 0, letter === "u" ? 6 : 2);
      escaped = true;
      continue;
    }
    escaped = false;
  }
  const cutSets: CutSet[] = [];
  const near = new Set<number>();
  for (let d = 1; d <= 8; d++) near.add(d), near.add(n - d);
  cutSets.push({ label: "start and end", cuts: [...near].filter(inside).sort((x, y) => x - y) });
  for (const [kind, p] of places) {
    for (let d = p.from; d <= p.to; d++) {
      const cuts = [...new Set(p.anchors.map((a) => a + d))].filter(inside).sort((x, y) => x - y);
      cuts.forEach((k) => near.add(k));
      if (cuts.length) cutSets.push({ label: `${kind} ${d >= 0 ? "+" : ""}${d}`, cuts });
    }
  }

  const rand = seededRng(opts.seed ?? 0x5eed);
  const budget = opts.budget ?? 4_000_000;
  const want = Math.min(n - 1, opts.sample ?? 200, Math.max(16, Math.floor(budget / Math.max(1, n))));
  const hood = [...near].filter(inside);
  const points = new Set<number>();
  while (points.size < Math.min(want, Math.ceil(want / 2), hood.length)) points.add(hood[Math.floor(rand() * hood.length)]!);
  while (points.size < want) points.add(1 + Math.floor(rand() * (n - 1)));

  let crlfCuts = 0;
  let utf8Cuts = 0;
  for (const { cuts } of cutSets) {
    for (const k of cuts) {
      if (bytes[k - 1] === 13 && bytes[k] === 10) crlfCuts++;
      if ((bytes[k]! & 0xc0) === 0x80) utf8Cuts++;
    }
  }
  return { cutSets, points: [...points].sort((x, y) => x - y), crlfCuts, utf8Cuts };
}

/** `bytes` as consecutive reads ending before each cut (ascending offsets in [1, length - 1]). */
export function readsAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  for (const k of cuts) {
    out.push(bytes.subarray(at, k));
    at = k;
  }
  out.push(bytes.subarray(at));
  return out;
}

/**
 * Decodes `bytes` in the reads of {@link splitPlan} (its cut sets, then its two-piece splits) and
 * expects every decode to equal the decode in one read; a cut set that differs is narrowed to the first
 * of its cuts whose two-piece split differs, and the failure names the reads and the offset.
 * @param decode the format's decoder run over the reads (a fresh decoder each call, `end()` included)
 * @returns the plan, for the caller's own checks of what was cut
 */
export function expectSplitReadsDecodeAlike<T>(bytes: Uint8Array, decode: (reads: Uint8Array[]) => T, opts: SplitPlanOptions = {}): SplitPlan {
  const plan = splitPlan(bytes, opts);
  const whole = decode([bytes]);
  // Reads that really split the bytes (a cut set may be empty): none would leave nothing checked.
  const split = plan.cutSets.filter((c) => c.cuts.length > 0).length + plan.points.length;
  expect({ splitDecodes: split > 0 }).toEqual({ splitDecodes: true });
  for (const { label, cuts } of plan.cutSets) {
    const got = decode(readsAt(bytes, cuts));
    if (Bun.deepEquals(got, whole)) continue;
    const offset = cuts.find((k) => !Bun.deepEquals(decode(readsAt(bytes, [k])), whole));
    const where = `reads cut at ${label}; the first two-piece split that differs: ${offset ?? "none"}`;
    expect({ where, events: got }).toEqual({ where: "nowhere", events: whole });
  }
  for (const k of plan.points) {
    const got = decode(readsAt(bytes, [k]));
    if (!Bun.deepEquals(got, whole)) expect({ where: `two reads split at ${k}`, events: got }).toEqual({ where: "nowhere", events: whole });
  }
  return plan;
}
