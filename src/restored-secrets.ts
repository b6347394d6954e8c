/**
 * The in-memory {@link RestoredSecrets} of one gateway instance (SPEC S-3): secret values restored into
 * replies, looked for by redaction in later requests. Bounded: at most {@link MAX_VALUES} values, each
 * kept {@link KEEP_MS} after it was last restored or last found in a request (redaction remembers each
 * value it replaces again; the oldest go first past the count); values shorter
 * than {@link MIN_LENGTH} (too likely to occur by chance in ordinary text) or longer than
 * {@link MAX_LENGTH} (a key block, which redaction recognises by its shape anyway) are not kept. Never
 * written anywhere: a restart forgets them, and each instance of a shared setup has its own.
 */
import type { Clock, RestoredSecrets } from "../pipeline/ports.ts";

/** Values kept at most. */
export const MAX_VALUES = 256;
/** How long a value is kept after it was last restored or found in a request (ms): one hour. */
export const KEEP_MS = 3_600_000;
/** Shortest value kept (characters). */
export const MIN_LENGTH = 8;
/** Longest value kept (characters). */
export const MAX_LENGTH = 512;

/** See the module doc. */
export class RestoredSecretMemory implements RestoredSecrets {
  /** value → when it was last restored or found (ms); insertion order is oldest first (a value remembered again moves last). */
  private readonly at = new Map<string, number>();
  private list: readonly string[] = Object.freeze([]);
  private changed = false;

  constructor(private readonly clock: Clock) {}

  remember(value: string): void {
    if (value.length < MIN_LENGTH || value.length > MAX_LENGTH) return;
    if (!this.at.delete(value)) this.changed = true;
    this.at.set(value, this.clock.now());
    if (this.at.size > MAX_VALUES) this.at.delete(this.at.keys().next().value!);
  }

  values(): readonly string[] {
    const cutoff = this.clock.now() - KEEP_MS;
    for (const [v, t] of this.at) {
      if (t >= cutoff) break;
      this.at.delete(v);
      this.changed = true;
    }
    if (this.changed) {
      this.list = Object.freeze([...this.at.keys()]);
      this.changed = false;
    }
    return this.list;
  }
}
