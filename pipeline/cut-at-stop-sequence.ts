/**
 * Stop sequences emulated by the gateway for an upstream format without a stop field (OpenAI Responses,
 * REFERENCE §5.11: "emulate in the gateway by scanning text and cutting, or reject with a clear 400 —
 * never silently forward"): the reply's text is scanned for each of the request's stop sequences, cut
 * where the first one begins, and ended with the hub stop reason `stop_sequence` naming it (a Messages
 * client's `stop_reason: "stop_sequence"` with `stop_sequence`, a Chat client's `stop`, a Gemini
 * client's `STOP`: the client encoders' mappings). Only text blocks are scanned (not reasoning nor
 * tool arguments), each on its own. Used only for a request that has stop sequences and goes to such an
 * upstream (pipeline/commit.ts); every other reply's events never pass through here.
 */
import type { HubEvent, HubPart, HubResponse } from "../formats/hub.ts";
import { gatheredChars } from "./whole-reply-bound.ts";

/** Where the earliest stop sequence begins in `text`, and which one; undefined when none occurs. */
function firstStop(text: string, stops: readonly string[]): { at: number; stop: string } | undefined {
  let found: { at: number; stop: string } | undefined;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0 && (found === undefined || at < found.at)) found = { at, stop };
  }
  return found;
}

/**
 * Where in `text` the earliest stop sequence that may still complete with more text begins: the first
 * `q` (at most `before`) where the rest of `text` is a proper beginning of a stop sequence that would
 * win over `hit` (it begins before `hit`, or at the same place and is listed before it, as
 * {@link firstStop} decides on the whole text); undefined when none may. Looks back no further than the
 * longest stop sequence.
 */
function stillOpen(text: string, stops: readonly string[], hit: { at: number; stop: string }): number | undefined {
  const hitRank = stops.indexOf(hit.stop);
  let longest = 0;
  for (const s of stops) longest = Math.max(longest, s.length);
  for (let q = Math.max(0, text.length - longest + 1); q <= hit.at; q++) {
    const rest = text.length - q;
    for (let k = 0; k < stops.length; k++) {
      const s = stops[k]!;
      if (s.length <= rest || (q === hit.at && k >= hitRank)) continue;
      if (text.startsWith(s.slice(0, rest), q)) return q;
    }
  }
  return undefined;
}

/** The length of the longest end of `text` that is the beginning of a stop sequence (what may still become one). */
function heldBack(text: string, stops: readonly string[]): number {
  let longest = 0;
  for (const stop of stops) {
    for (let n = Math.min(stop.length - 1, text.length); n > longest; n--) {
      if (text.endsWith(stop.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

/**
 * The streaming cutter: takes the normalized events of a reply (and its text deltas without event
 * objects) and hands them on to `sink` / `text`, but holds back the end of a text delta that may be the
 * beginning of a stop sequence (only the longest such end: released as soon as it cannot match, or when
 * another event comes). At a match it hands on the text before it, the block's `block_stop` and a
 * `finish` with reason `stop_sequence`, then drops everything after. A match is settled only when no
 * stop sequence that would win over it on the whole text (one beginning earlier, as "abc" over "b" in
 * "xabc") may still complete: until then the text from where that one began is held, so the cut is the
 * whole reply's ({@link cutReplyAtStop}) however the deltas split the text. {@link cut} says the reply is
 * complete, so the caller reads no more of the upstream.
 *
 * What the upstream generated and the client does not get still costs (its call is cancelled, or it
 * finished in the read that brought the stop): the provider's `usage` events read after the cut still
 * go to `sink` (a stream whose end came in that read keeps the provider's figures, as a whole reply
 * does), and the characters dropped (the stop sequence and what followed it: text, reasoning, tool
 * arguments, as {@link gatheredChars} counts them) go to `dropped`, for the estimate of a reply whose
 * usage never comes (pipeline/estimate-reply-usage.ts).
 */
export class StopSequenceCutter {
  /** The reply was cut at a stop sequence: nothing more is handed on. */
  cut = false;
  private held = "";
  private heldIndex = -1;

  constructor(
    private readonly stops: readonly string[],
    private readonly sink: (ev: HubEvent) => void,
    private readonly text: (index: number, text: string, plain: boolean) => void,
    /** Characters of content not handed on, past the cut (see the class comment). */
    private readonly dropped?: (chars: number) => void,
  ) {}

  /** One normalized event. */
  event(ev: HubEvent): void {
    if (this.cut) return this.afterCut(ev);
    if (ev.type === "block_delta" && ev.delta.type === "text") return this.onText(ev.index, ev.delta.text, false);
    this.release();
    if (this.cut) this.afterCut(ev);
    else this.sink(ev);
  }

  /** An event after the cut: the provider's usage handed on, content counted as {@link dropped}, the rest dropped. */
  private afterCut(ev: HubEvent): void {
    if (ev.type === "usage") this.sink(ev);
    else if ((ev.type === "block_delta" || ev.type === "block_start") && this.dropped !== undefined) this.dropped(gatheredChars(ev));
  }

  /** One text delta (codec.ts TextDeltaSink). */
  onText(index: number, text: string, plain: boolean): void {
    if (this.cut) return this.dropped?.(text.length);
    if (this.heldIndex !== index) this.release();
    if (this.cut) return this.dropped?.(text.length);
    const fresh = this.held.length === 0;
    const all = this.held + text;
    this.held = "";
    const hit = firstStop(all, this.stops);
    if (hit) {
      // A longer stop sequence that began before this match (or a stop listed before it, at the same
      // place) may still complete: hold from where it began until the next text decides.
      const open = stillOpen(all, this.stops, hit);
      if (open === undefined) return this.cutAt(index, all, hit);
      if (open > 0) this.text(index, all.slice(0, open), false);
      this.held = all.slice(open);
      this.heldIndex = index;
      return;
    }
    const keep = heldBack(all, this.stops);
    if (keep < all.length) this.text(index, keep > 0 ? all.slice(0, all.length - keep) : all, plain && fresh && keep === 0);
    if (keep > 0) {
      this.held = all.slice(all.length - keep);
      this.heldIndex = index;
    } else this.heldIndex = -1;
  }

  /** Hands on the text before `hit`, then the block's end and the `stop_sequence` finish; nothing more after. */
  private cutAt(index: number, all: string, hit: { at: number; stop: string }): void {
    if (hit.at > 0) this.text(index, all.slice(0, hit.at), false);
    this.cut = true;
    this.dropped?.(all.length - hit.at);
    this.sink({ type: "block_stop", index });
    this.sink({ type: "finish", reason: "stop_sequence", stopSequence: hit.stop });
  }

  /**
   * The block's text ended (another event or block came): the held-back text goes on, or, when it holds
   * a match that was waiting on a longer stop sequence, the reply is cut there ({@link cut} after).
   */
  private release(): void {
    const held = this.held;
    const index = this.heldIndex;
    this.held = "";
    this.heldIndex = -1;
    if (held.length === 0) return;
    const hit = firstStop(held, this.stops);
    if (hit) this.cutAt(index, held, hit);
    else this.text(index, held, false);
  }
}

/**
 * A whole reply cut at its first stop sequence (see the module's comment): the text part holding it is
 * cut where it begins, every part after it dropped, and the stop reason made `stop_sequence` naming it.
 * Returns whether it was cut (`resp` is changed in place).
 */
export function cutReplyAtStop(resp: HubResponse, stops: readonly string[]): boolean {
  for (let i = 0; i < resp.content.length; i++) {
    const part: HubPart = resp.content[i]!;
    if (part.type !== "text") continue;
    const hit = firstStop(part.text, stops);
    if (!hit) continue;
    resp.content = [...resp.content.slice(0, i), ...(hit.at > 0 ? [{ ...part, text: part.text.slice(0, hit.at) }] : [])];
    resp.stopReason = "stop_sequence";
    resp.stopSequence = hit.stop;
    return true;
  }
  return false;
}
