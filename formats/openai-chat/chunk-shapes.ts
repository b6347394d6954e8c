/**
 * The Chat decoder's shortcut for the events a stream opens and closes with, across streams: the role
 * chunk, the first content delta, the finish chunk and the usage chunk (docs/performance.md item 185).
 * The per-stream content template (content-template.ts) covers a stream's content deltas from its
 * second on; these four events each came once per stream and each cost a `JSON.parse` of the chunk (the
 * first delta two: its parse and the template's learning probe). A provider writes them with the same
 * bytes from stream to stream but for a few values: the chunk's `id`, its `created` time, the text, the
 * `obfuscation` padding OpenAI adds, the usage object's figures. A {@link ChunkShape} is such an event
 * with those values as holes; the {@link ShapeBook} keeps a few, module-wide, and an event matching one
 * is decoded from the hole values alone, without the chunk's parse (the usage object is parsed alone).
 *
 * Why that is exact: a shape is learned from an event the full path has just decoded, and what that
 * did (open the message, add a text, finish, report usage) is the shape's {@link ShapeKind}, checked by
 * the decoder on the parsed chunk. The holes are then proven by parsing the event once more with marker
 * strings in them: each marker must come back as the value the hole stands for (the top-level `id`,
 * `created`, `obfuscation` and `usage`, the chosen choice's `delta.content`). An event matching the shape
 * differs from the learned one only in those values (each hole is checked to hold one valid JSON value
 * of its kind: a string literal, an integer, an object that parses), so the full path would decode it
 * the same way with the other values. `created` and `obfuscation` are read by nobody; the `id` opens
 * the message. Anything else (another field, whitespace, another model or finish reason) does not match
 * and takes the full path.
 */
import { tryParseJson } from "../sse.ts";
import { literalEnd, literalText, stringLiteral, validLiteral, firstChoice } from "./content-template.ts";

/**
 * What the full path did with a shape's event (checked by the decoder when it learned it): `ROLE`, a
 * choice whose delta adds nothing (`role`, an empty `content`, a null `refusal`), opens the message;
 * `CONTENT`, a content-only delta (what content-template.ts learns within a stream); `FINISH`, a choice
 * with a finish reason (not a failure's) and a delta that adds nothing; `USAGE`, a usage object and no
 * choice.
 */
export const ShapeKind = { Role: 0, Content: 1, Finish: 2, Usage: 3 } as const;
/** One of {@link ShapeKind}'s values. */
export type ShapeKind = (typeof ShapeKind)[keyof typeof ShapeKind];

const HOLE_ID = 0;
const HOLE_CREATED = 1;
const HOLE_CONTENT = 2;
const HOLE_OBFUSCATION = 3;
const HOLE_USAGE = 4;
/** The marker of each hole kind for the learning probe (a raw U+0001 cannot appear in JSON text, only escaped). */
const MARKS = ["\u0001sy-id", "\u0001sy-created", "\u0001sy-content", "\u0001sy-obfuscation", "\u0001sy-usage"];
const MARKS_JSON = MARKS.map((m) => JSON.stringify(m));
/** Most holes a shape has (id, created, content or usage, obfuscation). */
const MAX_HOLES = 4;

/** Where the last {@link ShapeBook.match} found each hole of the matched shape: `[start, end)` pairs, in the shape's order. */
const ranges = new Int32Array(MAX_HOLES * 2);

/** One learned event with holes; see the module comment. */
export class ChunkShape {
  /** The model `message_start` names (the event's `model`, when a non-empty string). */
  readonly model: string | undefined;
  /** {@link ShapeKind.Finish}: the raw finish reason and the choice's stop fields the decoder reads. */
  readonly finish: string;
  readonly stopFields: { stop_reason?: unknown; matched_stop?: unknown };

  /** The length of the pieces together: no event shorter matches. */
  private readonly fixed: number;

  constructor(
    readonly kind: ShapeKind,
    /** The text between the holes: `pieces[0]`, hole 0, `pieces[1]`, …, `pieces[holes.length]`. */
    private readonly pieces: string[],
    private readonly holes: number[],
    chunk: Record<string, any>,
    choice: Record<string, any> | undefined,
  ) {
    this.fixed = pieces.reduce((n, p) => n + p.length, 0);
    this.model = typeof chunk.model === "string" && chunk.model ? chunk.model : undefined;
    this.finish = kind === ShapeKind.Finish ? (choice!.finish_reason as string) : "";
    this.stopFields = choice ? { stop_reason: choice.stop_reason, matched_stop: choice.matched_stop } : {};
  }

  /** Whether `text[start, end)` is this shape with valid hole values; their ranges are then in `ranges`. */
  matchAt(text: string, start: number, end: number): boolean {
    const pieces = this.pieces;
    const holes = this.holes;
    // The last piece first: where it must be is known, and it tells most shapes apart without a scan.
    const last = pieces[holes.length]!;
    if (end - start < this.fixed || !text.startsWith(last, end - last.length)) return false;
    let pos = start;
    for (let h = 0; ; h++) {
      const piece = pieces[h]!;
      if (pos + piece.length > end || !text.startsWith(piece, pos)) return false;
      pos += piece.length;
      if (h === holes.length) return pos === end;
      const open = pos;
      const kind = holes[h]!;
      if (kind === HOLE_CREATED) {
        // A plain integer, as every provider writes `created` (anything else takes the full path).
        let c = text.charCodeAt(pos);
        if (c < 48 || c > 57) return false;
        pos++;
        if (c !== 48) while (pos < end && (c = text.charCodeAt(pos)) >= 48 && c <= 57) pos++;
      } else if (kind === HOLE_USAGE) {
        if (text.charCodeAt(pos) !== 123 /* { */) return false;
        const close = objectEnd(text, pos, end);
        if (close < 0) return false;
        pos = close + 1;
      } else {
        if (text.charCodeAt(pos) !== 34 /* " */) return false;
        const close = literalEnd(text, pos);
        if (close < 0 || close >= end) return false;
        pos = close + 1;
      }
      ranges[2 * h] = open;
      ranges[2 * h + 1] = pos;
    }
  }

  /**
   * The matched event's `id`: the hole's value (undefined when it is not one valid string literal); a
   * shape without the hole was learned from a chunk without a string id (learnShape needs the hole for one).
   */
  idOf(text: string): string | undefined {
    const h = this.holes.indexOf(HOLE_ID);
    if (h < 0) return undefined;
    return stringLiteral(text, ranges[2 * h]!, ranges[2 * h + 1]! - 1);
  }

  /**
   * The matched event's content text (undefined when the hole is not one valid string literal), and
   * in {@link plain} whether it is the text between the quotes as `JSON.stringify` writes it.
   */
  contentOf(text: string): string | undefined {
    const h = this.holes.indexOf(HOLE_CONTENT);
    const open = ranges[2 * h]!;
    return literalText(text, open, ranges[2 * h + 1]! - 1, this);
  }

  /** {@link contentOf}'s plainness (formats/json-text.ts isPlainJsonText of the text). */
  plain = false;

  /** The matched event's usage object (undefined when the hole's text does not parse as one). */
  usageOf(text: string): Record<string, unknown> | undefined {
    const h = this.holes.indexOf(HOLE_USAGE);
    try {
      const v: unknown = JSON.parse(text.slice(ranges[2 * h]!, ranges[2 * h + 1]!));
      return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Whether the matched `id` and `obfuscation` holes hold valid string literals (the content's is read by {@link contentOf}). */
  validStrings(text: string): boolean {
    const holes = this.holes;
    for (let h = 0; h < holes.length; h++) {
      const kind = holes[h];
      if ((kind === HOLE_ID || kind === HOLE_OBFUSCATION) && !validLiteral(text, ranges[2 * h]!, ranges[2 * h + 1]! - 1)) return false;
    }
    return true;
  }

  /**
   * A `ShapeKind.Content` shape matched at `text`: the text before the content literal, between
   * it and the obfuscation literal and after it, with the matched event's `id` and `created` in place
   * (the per-stream template of content-template.ts); undefined when a hole follows the obfuscation.
   */
  templateParts(text: string): [head: string, middle: string | undefined, tail: string] | undefined {
    const holes = this.holes;
    const pieces = this.pieces;
    const c = holes.indexOf(HOLE_CONTENT);
    let head = "";
    for (let h = 0; h < c; h++) head += pieces[h]! + text.slice(ranges[2 * h]!, ranges[2 * h + 1]!);
    head += pieces[c]!;
    const rest = holes.length - c - 1;
    if (rest === 0) return [head, undefined, pieces[c + 1]!];
    if (rest === 1 && holes[c + 1] === HOLE_OBFUSCATION) return [head, pieces[c + 1]!, pieces[c + 2]!];
    return undefined;
  }
}

/**
 * The index of the `}` closing the object whose `{` is at `open` in `text`, before `end`; -1 when there
 * is none. Skips string literals; validity is `JSON.parse`'s job.
 */
function objectEnd(text: string, open: number, end: number): number {
  let depth = 0;
  for (let i = open; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const close = literalEnd(text, i);
      if (close < 0) return -1;
      i = close;
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      if (--depth === 0) return c === 125 ? i : -1;
    }
  }
  return -1;
}

/**
 * A copy of `s` that holds no other string: a slice shares the text it was cut from (the whole read of
 * the upstream, which may be megabytes), and a shape lives as long as the process.
 */
function ownCopy(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/** Where a hole's value starts after its key (spaces skipped), or -1. */
function valueAfter(data: string, key: string, from = 0): number {
  const k = data.indexOf(key, from);
  if (k < 0) return -1;
  let v = k + key.length;
  while (data.charCodeAt(v) === 32) v++;
  return v;
}

/**
 * A shape of `data`, an event of `kind` the full path has just decoded (whose parse is `chunk` and chosen
 * choice `choice`), with its `id`, `created`, `obfuscation`, and the content or usage as holes, proven
 * by a probe parse; undefined when a hole cannot be located or proven.
 */
export function learnShape(kind: ShapeKind, data: string, chunk: Record<string, any>, choice: Record<string, any> | undefined): ChunkShape | undefined {
  const found: Array<[kind: number, start: number, end: number]> = [];
  const literal = (hole: number, key: string) => {
    const v = valueAfter(data, key);
    if (v < 0 || data.charCodeAt(v) !== 34) return false;
    const close = literalEnd(data, v);
    if (close < 0) return false;
    found.push([hole, v, close + 1]);
    return true;
  };
  if (typeof chunk.id === "string" && !literal(HOLE_ID, '"id":')) return undefined;
  if (typeof chunk.created === "number") {
    const v = valueAfter(data, '"created":');
    let e = v;
    while (e >= 0 && data.charCodeAt(e) >= 48 && data.charCodeAt(e) <= 57) e++;
    if (v < 0 || e === v) return undefined;
    found.push([HOLE_CREATED, v, e]);
  }
  if (typeof chunk.obfuscation === "string" && !literal(HOLE_OBFUSCATION, '"obfuscation":')) return undefined;
  if (kind === ShapeKind.Content && !literal(HOLE_CONTENT, '"content":')) return undefined;
  if (kind === ShapeKind.Usage) {
    const v = valueAfter(data, '"usage":');
    if (v < 0 || data.charCodeAt(v) !== 123) return undefined;
    const close = objectEnd(data, v, data.length);
    if (close < 0) return undefined;
    found.push([HOLE_USAGE, v, close + 1]);
  }
  found.sort((a, b) => a[1] - b[1]);
  const pieces: string[] = [];
  const holes: number[] = [];
  let probe = "";
  let pos = 0;
  for (const [hole, start, end] of found) {
    if (start < pos) return undefined; // overlapping: one hole inside another
    pieces.push(ownCopy(data.slice(pos, start)));
    holes.push(hole);
    probe += data.slice(pos, start) + MARKS_JSON[hole];
    pos = end;
  }
  pieces.push(ownCopy(data.slice(pos)));
  probe += data.slice(pos);
    const check = tryParseJson(probe);
  if (typeof check !== "object" || check === null) return undefined;
  const c = check as Record<string, any>;
  // Each marker comes back as the value its hole stands for (and the event did not hold the marker itself).
  for (const hole of holes) {
    const mark = MARKS[hole];
    const [got, had] =
      hole === HOLE_ID
        ? [c.id, chunk.id]
        : hole === HOLE_CREATED
          ? [c.created, chunk.created]
          : hole === HOLE_OBFUSCATION
            ? [c.obfuscation, chunk.obfuscation]
            : hole === HOLE_USAGE
              ? [c.usage, chunk.usage]
              : [firstChoice(c)?.delta?.content, choice?.delta?.content];
    if (got !== mark || had === mark) return undefined;
  }
  return new ChunkShape(kind, pieces, holes, chunk, choice);
}

/** Most shapes a book keeps (the oldest learned is replaced). */
const BOOK_SIZE = 12;
/** Shapes of one kind learned before the book asks that they are used: past it, one more only after a match of that kind. */
const FREE_LEARNS = 16;

/**
 * The shapes learned so far, across streams (module-wide: {@link chatShapes}). Learning costs a probe
 * parse; a provider whose opening or closing events differ from stream to stream in more than the holes
 * would pay it on every stream, so past {@link FREE_LEARNS} shapes of a kind, one more is learned only
 * when that kind matched at least as often as it was learned.
 */
export class ShapeBook {
  private readonly shapes: ChunkShape[] = [];
  private next = 0;
  private readonly learned = [0, 0, 0, 0];
  /** Matches per kind ({@link ShapeKind}), for the learning bound (and tests). */
  readonly hits = [0, 0, 0, 0];

  /**
   * The shape of a kind in `kinds` (a bit per {@link ShapeKind}: those the decoder's state can use)
   * that `text[start, end)` matches (its hole ranges then in place for its readers), or undefined.
   */
  match(text: string, start: number, end: number, kinds: number): ChunkShape | undefined {
    const shapes = this.shapes;
    for (let i = 0; i < shapes.length; i++) {
      const s = shapes[i]!;
      if (((1 << s.kind) & kinds) !== 0 && s.matchAt(text, start, end)) return s;
    }
    return undefined;
  }

  /** Counts a match of `kind` that was used. */
  hit(kind: ShapeKind): void {
    this.hits[kind]!++;
  }

  /** Whether a shape of `kind` may be learned now (see the class comment). */
  wants(kind: ShapeKind): boolean {
    return this.learned[kind]! < FREE_LEARNS || this.hits[kind]! >= this.learned[kind]!;
  }

  /** Learns `data` as a shape of `kind` ({@link learnShape}); nothing when it cannot be proven. */
  learn(kind: ShapeKind, data: string, chunk: Record<string, any>, choice: Record<string, any> | undefined): void {
    this.learned[kind]!++;
    const shape = learnShape(kind, data, chunk, choice);
    if (shape === undefined) return;
    if (this.shapes.length < BOOK_SIZE) this.shapes.push(shape);
    else {
      this.shapes[this.next] = shape;
      this.next = (this.next + 1) % BOOK_SIZE;
    }
  }

  /** Forgets every shape and count (tests). */
  clear(): void {
    this.shapes.length = 0;
    this.next = 0;
    this.learned.fill(0);
    this.hits.fill(0);
  }
}

/** The book every Chat decoder of this process reads and adds to. */
export const chatShapes = new ShapeBook();
