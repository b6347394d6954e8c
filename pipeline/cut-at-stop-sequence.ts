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

/** Where the earliest stop sequence begins in `text`, and which one; undefined when none occurs. */
function firstStop(text: string, stops: readonly string[]): { at: number; stop: string } | undefined {
  let found: { at: number; stop: string } | undefined;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0 && (found === undefined || at < found.at)) found = { at, stop };
  }
  return found;
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
 * `finish` with reason `stop_sequence`, then drops everything after; {@link cut} says the reply is
 * complete, so the caller reads no more of the upstream.
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
  ) {}

  /** One normalized event. */
  event(ev: HubEvent): void {
    if (this.cut) return;
    if (ev.type === "block_delta" && ev.delta.type === "text") return this.onText(ev.index, ev.delta.text, false);
    this.release();
    this.sink(ev);
  }

  /** One text delta (codec.ts TextDeltaSink). */
  onText(index: number, text: string, plain: boolean): void {
    if (this.cut) return;
    if (this.heldIndex !== index) this.release();
    const fresh = this.held.length === 0;
    const all = this.held + text;
    this.held = "";
    const hit = firstStop(all, this.stops);
    if (hit) {
      if (hit.at > 0) this.text(index, all.slice(0, hit.at), false);
      this.cut = true;
      this.sink({ type: "block_stop", index });
      this.sink({ type: "finish", reason: "stop_sequence", stopSequence: hit.stop });
      return;
    }
    const keep = heldBack(all, this.stops);
    if (keep < all.length) this.text(index, keep > 0 ? all.slice(0, all.length - keep) : all, plain && fresh && keep === 0);
    if (keep > 0) {
      this.held = all.slice(all.length - keep);
      this.heldIndex = index;
    } else this.heldIndex = -1;
  }

  /** The held-back text goes on: what followed showed it is no stop sequence. */
  private release(): void {
    if (this.held.length > 0) this.text(this.heldIndex, this.held, false);
    this.held = "";
    this.heldIndex = -1;
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
