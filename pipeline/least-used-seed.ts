/**
 * least-used's lifetime counts read from the store (SPEC 5.1: fewest lifetime requests first), kept for
 * the provider/model pairs of least-used targets only: each pair is asked for once per process, at
 * start for the configured least-used combos' targets, else when a least-used combo first orders it
 * (after a reload). So the counts held grow with the configuration, not with the model names clients
 * had served (an OpenAI-compatible provider serves whatever name it is sent). No I/O of its own: the
 * read is `OrderDeps.loadSeed` (pipeline/order.ts).
 */
import type { Target } from "./resolve.ts";

/** A target's served `provider/model`: the key of its seed (the store's usage grouping by model). */
export const seedPair = (t: Target): string => `${t.provider.id}/${t.model}`;

const noop = (): void => {};

/** The seeded counts, the pairs asked for, and the reads under way. */
export class LeastUsedSeed {
  private readonly byModel = new Map<string, number>();
  /** The pairs asked for (each once per process). */
  private readonly asked = new Set<string>();
  /** The reads asked and not yet settled, as one promise ({@link pending}). */
  private waiting: Promise<void> | undefined;

  /** Sets the counts of the pairs given (lifetime requests per served `provider/model`); the others' are kept. */
  set(byModel: Map<string, number>): void {
    for (const [pair, n] of byModel) this.byModel.set(pair, n);
  }

  /** The seeded count of a target's provider/model (0 when none was read). */
  count(t: Target): number {
    // no key string per candidate while nothing is seeded (a new store, or before the seed arrives)
    return this.byModel.size === 0 ? 0 : (this.byModel.get(seedPair(t)) ?? 0);
  }

  /**
   * Asks `load` for the pairs of `targets` not asked for yet; `load`'s promise (it must not reject) joins
   * the reads {@link pending} waits for.
   */
  ask(targets: readonly Target[], load: ((pairs: ReadonlySet<string>) => Promise<void> | void) | undefined): void {
    let missing: Set<string> | undefined;
    for (const t of targets) {
      const pair = seedPair(t);
      if (this.asked.has(pair)) continue;
      this.asked.add(pair);
      (missing ??= new Set()).add(pair);
    }
    if (missing === undefined) return;
    const read = load?.(missing);
    if (!read) return;
    const settled = () => {
      if (this.waiting === all) this.waiting = undefined;
    };
    const earlier = this.waiting;
    const all: Promise<void> = (earlier ? Promise.all([earlier, read.then(noop, noop)]) : read).then(settled, settled);
    this.waiting = all;
  }

  /** A promise that settles when every read asked so far has; undefined when none is under way. */
  pending(): Promise<void> | undefined {
    return this.waiting;
  }
}
