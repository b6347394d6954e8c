/**
 * Redaction mapped back (SPEC S-3): the placeholders the redact stage put into the prompt
 * (`[EMAIL_1]`, `[SECRET_2]`, …; pipeline/redact.ts) are replaced by the original values in the
 * model's reply before it reaches the client: in text and in tool-call arguments, streamed or whole.
 *
 * Streams: a placeholder may arrive split over several text (or tool-argument) deltas. A
 * {@link PlaceholderRestorer} holds back the end of a delta only while it is a proper prefix of a
 * placeholder of this request (`[`, `[EMA`, `[EMAIL_1`), never more, and releases it with the next
 * delta or when the block ends. Inside tool-call arguments (JSON text) the original value is written
 * JSON-escaped once per string literal around it (./json-nesting.ts: a JSON document the model wrote
 * inside a string value, `{"body": "{\"pw\": \"[SECRET_1]\"}"}`, gets it escaped twice), so arguments
 * and the documents inside them stay valid JSON and parse to the original whatever the value holds
 * (quotes, backslashes, newlines of a key block). A placeholder that stood for a JSON number (a PIN
 * under `password`, {@link PlaceholderValue.number}) and is a whole string value of the arguments
 * (`"passcode": "[SECRET_1]"`) is written as that number, unquoted, as the client sent it (a tool
 * with an integer schema may reject a string).
 *
 * Reasoning (thinking) text is left as the model wrote it: it may be signed, and a signature covers the
 * exact text the provider produced.
 *
 * Counts of restored placeholders by kind go to the route trace (`restored`); values never do. A
 * restored `secret` value is noted in the client key's {@link RestoredSecrets}, so that the next turn,
 * which sends the reply back, has it redacted again even where its context is gone.
 */
import type { HubEvent, HubResponse } from "../formats/hub.ts";
import { JsonNesting } from "./json-nesting.ts";
import type { RestoredSecrets } from "./ports.ts";

/** One placeholder of a request: the redaction kind (`email`, `secret`, …) and the original text. */
export interface PlaceholderValue {
  kind: string;
  value: string;
  /** The value was a JSON number (a PIN under `password`): restored unquoted where the model wrote its placeholder as a whole string value of tool-call arguments. */
  number?: boolean;
}

/** The placeholders of one request (placeholder text, e.g. `[EMAIL_1]` → original), and the restore counts. */
export interface Restoration {
  placeholders: ReadonlyMap<string, PlaceholderValue>;
  /** Placeholders replaced in the reply so far, by kind (mutated as the reply streams). */
  counts: Record<string, number>;
  /** Where a restored `secret` value is noted, for later requests to redact (absent: not noted). */
  memory?: RestoredSecrets;
}

/** Any placeholder shape the redact stage produces. */
const PLACEHOLDER = /\[(?:SECRET|EMAIL|CARD|IPV6|IPV4|PHONE)_\d+\]/g;
/** A JSON number as a whole text. */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * Restores placeholders in one text that arrives in pieces (one content block's deltas). `json`: the
 * text is JSON (tool-call arguments), so values are written JSON-escaped.
 */
export class PlaceholderRestorer {
  private held = "";
  private readonly longest: number;
  /** JSON text: where the text read so far stands (escaping per nesting level, a string value's start). */
  private readonly nesting: JsonNesting | undefined;
  /** JSON text: the placeholders that stood for a JSON number (restored unquoted as a whole string value). */
  private readonly numbers: string[] = [];

  constructor(
    private readonly r: Restoration,
    json: boolean,
  ) {
    let n = 0;
    for (const [k, v] of r.placeholders) {
      n = Math.max(n, k.length);
      if (json && v.number && NUMBER.test(v.value)) this.numbers.push(k);
    }
    this.longest = n;
    if (json) this.nesting = new JsonNesting();
  }

  private count(hit: PlaceholderValue): void {
    this.r.counts[hit.kind] = (this.r.counts[hit.kind] ?? 0) + 1;
    if (hit.kind === "secret") this.r.memory?.remember(hit.value);
  }

  /**
   * {@link push} for JSON text, a character at a time: a value is JSON-escaped once per string literal
   * enclosing it (a document inside a string value: twice), and a number's placeholder that is a whole
   * string value of the outer document (`"pin": "[SECRET_1]"`) is written as that number, unquoted. Held
   * back: a possible placeholder's start, and a `"` that may open such a number's string.
   */
  private pushJson(buf: string, nest: JsonNesting): string {
    let out = "";
    let i = 0;
    scan: while (i < buf.length) {
      const c = buf.charCodeAt(i);
      if (c === 0x22 /* " */ && this.numbers.length > 0 && nest.valueStringNext()) {
        let partial = false;
        for (const k of this.numbers) {
          const whole = `"${k}"`;
          if (buf.startsWith(whole, i)) {
            const hit = this.r.placeholders.get(k)!;
            out += hit.value;
            this.count(hit);
            nest.feed('"0"');
            i += whole.length;
            continue scan;
          }
          if (buf.length - i < whole.length && whole.startsWith(buf.slice(i))) partial = true;
        }
        if (partial) break;
      } else if (c === 0x5b /* [ */) {
        let partial = false;
        for (const [k, hit] of this.r.placeholders) {
          if (buf.startsWith(k, i)) {
            let v = hit.value;
            for (let d = Math.max(1, nest.depth()); d > 0; d--) v = JSON.stringify(v).slice(1, -1);
            out += v;
            this.count(hit);
            // the value is string content wherever it stands: read as one plain character
            nest.feed("0");
            i += k.length;
            continue scan;
          }
          if (buf.length - i < k.length && k.startsWith(buf.slice(i))) partial = true;
        }
        if (partial) break;
      }
      nest.feed(buf[i]!);
      out += buf[i];
      i++;
    }
    this.held = buf.slice(i);
    return out;
  }

  /** The next piece; returns what can be released now (possibly ""). */
  push(piece: string): string {
    const buf = this.held + piece;
    this.held = "";
    if (this.nesting) return this.pushJson(buf, this.nesting);
    let out = "";
    let last = 0;
    PLACEHOLDER.lastIndex = 0;
    for (let m = PLACEHOLDER.exec(buf); m; m = PLACEHOLDER.exec(buf)) {
      const hit = this.r.placeholders.get(m[0]);
      if (!hit) continue;
      out += buf.slice(last, m.index) + hit.value;
      last = m.index + m[0].length;
      this.count(hit);
    }
    const tail = buf.slice(last);
    const cut = this.heldFrom(tail);
    this.held = tail.slice(cut);
    return out + tail.slice(0, cut);
  }

  /** The end of the text: whatever is held back is released as it is. */
  flush(): string {
    const h = this.held;
    this.held = "";
    return h;
  }

  /** The start of the longest suffix of `tail` that is a proper prefix of a placeholder (tail.length when none). */
  private heldFrom(tail: string): number {
    for (let i = Math.max(0, tail.length - this.longest + 1); i < tail.length; i++) {
      if (tail.charCodeAt(i) !== 0x5b /* [ */) continue;
      const suffix = tail.slice(i);
      for (const k of this.r.placeholders.keys()) if (k.length > suffix.length && k.startsWith(suffix)) return i;
    }
    return tail.length;
  }
}

/** `text` with every placeholder of `r` restored (a whole text; `json` as for {@link PlaceholderRestorer}). */
export function restoreText(r: Restoration, text: string, json = false): string {
  const p = new PlaceholderRestorer(r, json);
  return p.push(text) + p.flush();
}

/**
 * Restores placeholders in a canonical hub event stream (formats/normalize.ts: one block open at a
 * time) on its way to `emit`: text and tool-argument deltas pass through a {@link PlaceholderRestorer}
 * per block; what a block holds back is released as one more delta before the block's next non-delta
 * event (its `block_stop`, or an `error` that cuts it off), or at {@link end}.
 */
export class EventRestorer {
  private open: { index: number; kind: "text" | "tool_args"; restorer: PlaceholderRestorer } | undefined;

  constructor(
    private readonly r: Restoration,
    private readonly emit: (ev: HubEvent) => void,
  ) {}

  /** One event in; zero or more out. */
  event(ev: HubEvent): void {
    if (ev.type === "block_delta" && this.open?.index === ev.index && ev.delta.type === this.open.kind) {
      const text = this.open.restorer.push(ev.delta.type === "text" ? ev.delta.text : ev.delta.type === "tool_args" ? ev.delta.json : "");
      if (text.length > 0) this.emit({ type: "block_delta", index: ev.index, delta: this.open.kind === "text" ? { type: "text", text } : { type: "tool_args", json: text } });
      return;
    }
    if (ev.type !== "block_delta") this.release();
    if (ev.type === "block_start" && (ev.block.type === "text" || ev.block.type === "tool_call")) {
      const kind = ev.block.type === "text" ? "text" : "tool_args";
      this.open = { index: ev.index, kind, restorer: new PlaceholderRestorer(this.r, kind === "tool_args") };
    }
    this.emit(ev);
  }

  /** The end of the stream: releases what an unfinished block holds back. */
  end(): void {
    this.release();
  }

  private release(): void {
    const o = this.open;
    if (!o) return;
    this.open = undefined;
    const text = o.restorer.flush();
    if (text.length > 0) this.emit({ type: "block_delta", index: o.index, delta: o.kind === "text" ? { type: "text", text } : { type: "tool_args", json: text } });
  }
}

/** Restores placeholders in a whole reply's text and tool-call arguments, in place; returns whether anything changed. */
export function restoreResponse(r: Restoration, resp: HubResponse): boolean {
  let changed = false;
  for (const p of resp.content) {
    if (p.type === "text") {
      const t = restoreText(r, p.text);
      if (t !== p.text) (p.text = t), (changed = true);
    } else if (p.type === "tool_call") {
      const a = restoreText(r, p.arguments, true);
      if (a !== p.arguments) (p.arguments = a), (changed = true);
    }
  }
  return changed;
}
