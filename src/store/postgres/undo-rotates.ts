/**
 * Undoing rotates that committed after their caller was told "not done" (PgKeys.rotateKey), correct in
 * any order. A user retries a rotate answered 503: two rotates may then both commit late, the second
 * reading the first's new secret as its "old" one. Putting back "the columns my statement replaced"
 * would then restore the first rotate's secret, which nobody was shown. Instead each undo reads the row
 * and walks back through every undone rotate: while the row's secret is one an undone rotate wrote, its
 * columns before that rotate; a previous secret (grace) that an undone rotate wrote becomes the one that
 * rotate replaced. So whichever undo runs last leaves the state as if no undone rotate of this instance
 * had happened (a retry sent to another instance is not covered: each remembers only its own).
 */

/** A key's secret columns (`client_keys`): hashes are SHA-256 hex; times ms since the epoch. */
export interface SecretColumns {
  hash: string;
  prev_hash: string | null;
  prev_until: number | string | null;
  prefix: string | null;
  rotated_at: number | string | null;
}

/** At most this many undone rotates are remembered (oldest forgotten first); a few per outage is usual. */
const MAX_UNDONE = 1_000;

/** The rotates of this instance undone so far: each one's new secret's hash → the columns it replaced. */
export class UndoneRotates {
  private readonly byNewHash = new Map<string, SecretColumns>();

  /** Records a rotate to undo (before its undo is written, so that every later undo knows it). */
  add(newHash: string, before: SecretColumns): void {
    this.byNewHash.set(newHash, before);
    if (this.byNewHash.size > MAX_UNDONE) this.byNewHash.delete(this.byNewHash.keys().next().value!);
  }

  /**
   * The columns the row should have with every recorded rotate undone, given what it holds now;
   * undefined when nothing changes (the row's secrets were all shown to someone).
   */
  undone(now: SecretColumns): SecretColumns | undefined {
    let s = now;
    let changed = false;
    const seen = new Set<string>();
    for (let before = this.byNewHash.get(s.hash); before && !seen.has(s.hash); before = this.byNewHash.get(s.hash)) {
      seen.add(s.hash);
      s = before;
      changed = true;
    }
    // A rotate shown since (or before the undo) kept an undone rotate's secret as its previous one: the
    // secret that rotate replaced is the one the clients hold.
    let prev = s.prev_hash;
    const seenPrev = new Set<string>();
    while (prev !== null && !seenPrev.has(prev)) {
      const before = this.byNewHash.get(prev);
      if (!before) break;
      seenPrev.add(prev);
      prev = before.hash;
    }
    if (prev !== s.prev_hash) {
      s = { ...s, prev_hash: prev };
      changed = true;
    }
    return changed ? s : undefined;
  }
}
