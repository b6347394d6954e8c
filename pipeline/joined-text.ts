/**
 * The texts a route trace repeats on every request of a route, made once (docs/performance.md item
 * 189): a target's `provider/model` label and a pick decision's `label @ account` subject and reason.
 * Written as template literals, each was a new rope string per request, which the trace's
 * `JSON.stringify` then resolved (a new flat copy) when the request was reported: four ropes per
 * trace on the bench's routes. A {@link JoinedText} hands out the same flat string for the same two
 * parts instead. No I/O; module-wide caches, bounded.
 */
import { flat } from "../formats/json-text.ts";

/** Parts longer than this (together) are joined fresh, never kept: a model name is the client's text. */
const KEEP_PARTS_MAX = 256;

/**
 * `first + separator + second`, one flat string per pair of parts while it is kept. At most `max`
 * pairs are kept: the next new pair past that clears the cache and starts it again (the model names
 * clients send are theirs to choose; a name seen once and never again must not stay). The text is
 * the same with or without the cache: only its identity (and whether it is a rope) differs.
 */
export class JoinedText {
  private readonly byFirst = new Map<string, Map<string, string>>();
  private kept = 0;

  /** @param separator put between the two parts; @param max pairs kept at most (default 1,024) */
  constructor(
    private readonly separator: string,
    private readonly max = 1024,
  ) {}

  /** The joined text of `first` and `second` (see the class). Never throws. */
  of(first: string, second: string): string {
    let inner = this.byFirst.get(first);
    const hit = inner?.get(second);
    if (hit !== undefined) return hit;
    if (first.length + second.length > KEEP_PARTS_MAX) return first + this.separator + second;
    const text = flat(first + this.separator + second);
    if (this.kept >= this.max) {
      this.byFirst.clear();
      this.kept = 0;
      inner = undefined;
    }
    if (!inner) this.byFirst.set(first, (inner = new Map()));
    inner.set(second, text);
    this.kept++;
    return text;
  }

  /** Pairs kept now (for tests). */
  get size(): number {
    return this.kept;
  }
}
