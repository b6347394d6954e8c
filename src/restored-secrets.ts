/**
 * The in-memory {@link RestoredSecretMemories} of one gateway instance (SPEC S-3): secret values
 * restored into replies, looked for by redaction in later requests, one memory per client key (a value
 * restored for key A is never looked for in key B's requests, so B cannot probe guesses of A's
 * values; requests without a client key share one memory). Bounded over all keys together: at most
 * {@link MAX_VALUES} values, each kept {@link KEEP_MS} after it was last restored or last found in a
 * request (redaction remembers each value it replaces again; the oldest go first past the count);
 * and at most {@link MAX_PER_KEY} of them for one key (its oldest go first), so one busy key cannot push
 * another key's values out; and at most {@link MAX_CHARS} characters over all keys and
 * {@link MAX_KEY_CHARS} for one key, the oldest going first the same way. Values shorter than
 * {@link MIN_LENGTH} (too likely to occur by chance in ordinary text) or longer than {@link MAX_LENGTH}
 * (the longest value redaction takes as one secret under a secret-named member, pipeline/redact.ts) are
 * not kept. Never written anywhere: a restart forgets them, and each instance of a shared setup has its own.
 */
import type { Clock, RestoredSecretMemories, RestoredSecrets } from "../pipeline/ports.ts";

/** Values kept at most, over all client keys. */
export const MAX_VALUES = 256;
/** Values kept at most for one client key (within {@link MAX_VALUES}). */
export const MAX_PER_KEY = 64;
/** How long a value is kept after it was last restored or found in a request (ms): one hour. */
export const KEEP_MS = 3_600_000;
/** Shortest value kept (characters). */
export const MIN_LENGTH = 8;
/**
 * Longest value kept (characters): as long as redaction's whole value under a secret-named member (a
 * long Cookie header); at 512, such a value restored into a reply was not kept, and went upstream in
 * clear when the next turn sent the reply back.
 */
export const MAX_LENGTH = 65_536;
/** Characters kept at most, over all client keys (the values' lengths summed): 1 Mi (a few MB of memory). */
export const MAX_CHARS = 1_048_576;
/** Characters kept at most for one client key (within {@link MAX_CHARS}). */
export const MAX_KEY_CHARS = 262_144;

/** One remembered value of one key's memory. */
interface Entry {
  memory: KeyMemory;
  value: string;
  /** When it was last restored or found (ms). */
  at: number;
}

/** See the module doc. */
export class RestoredSecretMemory implements RestoredSecretMemories {
  /** Every entry of every key, oldest first (an entry remembered again moves last). */
  private readonly order = new Set<Entry>();
  /** Client key id (undefined: no key) → its memory, while it holds a value. */
  private readonly byKey = new Map<string | undefined, KeyMemory>();
  /** The lengths of every entry's value, summed. */
  private chars = 0;

  constructor(private readonly clock: Clock) {}

  forKey(keyId: string | undefined): RestoredSecrets {
    return this.byKey.get(keyId) ?? new KeyMemory(this, keyId);
  }

  /** @internal {@link KeyMemory.remember}: `memory` is registered by its first value (or another memory of its key, registered since it was handed out, takes the value). */
  remember(memory: KeyMemory, value: string): void {
    if (value.length < MIN_LENGTH || value.length > MAX_LENGTH) return;
    let live = this.byKey.get(memory.keyId);
    if (!live) this.byKey.set(memory.keyId, (live = memory));
    let e = live.entries.get(value);
    if (e) {
      // moves last in both orders (the key's entries are oldest first too)
      this.order.delete(e);
      live.entries.delete(value);
    } else {
      e = { memory: live, value, at: 0 };
      live.changed = true;
      live.chars += value.length;
      this.chars += value.length;
    }
    live.entries.set(value, e);
    e.at = this.clock.now();
    this.order.add(e);
    while (live.entries.size > MAX_PER_KEY || live.chars > MAX_KEY_CHARS) this.drop(live.entries.values().next().value!);
    while (this.order.size > MAX_VALUES || this.chars > MAX_CHARS) this.drop(this.order.values().next().value!);
  }

  /** @internal Drops the entries older than {@link KEEP_MS}. */
  expire(): void {
    const cutoff = this.clock.now() - KEEP_MS;
    for (const e of this.order) {
      if (e.at >= cutoff) break;
      this.drop(e);
    }
  }

  private drop(e: Entry): void {
    this.order.delete(e);
    const m = e.memory;
    m.entries.delete(e.value);
    m.changed = true;
    m.chars -= e.value.length;
    this.chars -= e.value.length;
    if (m.entries.size === 0 && this.byKey.get(m.keyId) === m) this.byKey.delete(m.keyId);
  }
}

/** The memory of one client key (see the module doc). */
class KeyMemory implements RestoredSecrets {
  /** value → its entry, oldest first (an entry remembered again moves last). */
  readonly entries = new Map<string, Entry>();
  changed = false;
  /** The lengths of its entries' values, summed. */
  chars = 0;
  private list: readonly string[] = Object.freeze([]);

  constructor(
    private readonly all: RestoredSecretMemory,
    readonly keyId: string | undefined,
  ) {}

  remember(value: string): void {
    this.all.remember(this, value);
  }

  values(): readonly string[] {
    this.all.expire();
    if (this.changed) {
      this.list = Object.freeze([...this.entries.keys()]);
      this.changed = false;
    }
    return this.list;
  }
}
