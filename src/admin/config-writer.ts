/**
 * The admin API's configuration changes, one at a time per queue on an instance: a create or update of
 * a combo, an alias or a setting (queue `routing`), a login or import and a removal of an account
 * (`accounts`) or a client key's create and its limits and tag (`keys`) checks the state in memory (a
 * name taken, one that differs only in case or reads the same after Unicode NFC, the objects a change
 * would break) and then writes. Run through one {@link ConfigWriter}, each change's check sees every
 * earlier change of its queue written and re-read: two creates of `Fast` and `fast` at once were both
 * answered 201 while each checked memory before the other's write was re-read (session 44's tryout).
 * Instances sharing a PostgreSQL store do not share these queues: there the store's own
 * check-and-insert decides (src/store/postgres/routing-objects.ts, keys.ts).
 *
 * One queue per kind, not one for all: a change that waits (on PostgreSQL a create waits up to 10 s for
 * another instance's lock on its name, then answers 503) holds back only the changes of its own kind,
 * whose checks read what it writes. A client key's revoke, disable, enable and rotate check no name and
 * go through no queue (src/admin/admin-api.ts): a leaked key is revoked at once, whatever else is under
 * way (with a single queue a revoke was answered after 9.7 s behind a combo create waiting on another
 * instance's name lock).
 *
 * Each account also has a queue of its own ({@link accountQueue}): a login or import and a removal run
 * in `accounts` and in their account's queue, an account's disable and enable in its account's queue
 * only. A disable follows the writes of the same account (a login of that id sets it enabled) and
 * nothing else: an operator disabling a misbehaving account is answered at once while a login or import
 * of another account waits on the store (before, disable and enable queued in `accounts` behind it).
 *
 * `POST /config/reload` runs in `keys`, `routing` and `accounts` together ({@link ConfigWriter.run} with
 * several queues): each of their checks reads the file's part of the configuration (a combo is checked
 * composed with the file, a login against the file's account ids, a key's name against the file's keys),
 * so a reload between a check and its write would let through a change the new file refuses. It runs
 * once the changes of those queues handed in before have settled, and the ones handed in after wait for
 * it. An account's disable or enable does not wait for it (it reads only that account's `disabled` in
 * the file, at once before its write). The file watcher's re-read after an edit and SIGHUP's
 * (src/config/watch.ts, src/follow-config-file.ts) run in the same queues ({@link RELOAD_QUEUES}, the
 * instance's one writer): an edit saved while a combo create is between its check and its write is read
 * after the write (before session 46 they ran outside the queues).
 *
 * Only the check and the write run inside: a request's body is read before (a slow client does not
 * hold the others back).
 */

/** The kinds of object whose changes are checked against each other: `routing` = combos, aliases and settings. */
export type ChangeKind = "keys" | "routing" | "accounts";

/** A queue of a {@link ConfigWriter}: a kind's, or one account's ({@link accountQueue}). */
export type ChangeQueue = ChangeKind | `account:${string}`;

/** The queues a re-read of the config file runs in (`POST /config/reload`, a file edit, SIGHUP): every kind's (see the module comment). */
export const RELOAD_QUEUES: readonly ChangeQueue[] = ["keys", "routing", "accounts"];

/** The queue of the account `id`'s own changes (its login or import, removal, disable, enable). */
export const accountQueue = (id: string): ChangeQueue => `account:${id}`;

/** The queues of {@link ChangeKind} and one per account (see the module comment). */
export class ConfigWriter {
  private readonly tails = new Map<ChangeQueue, Promise<unknown>>();

  /**
   * Runs `change` once every change handed in before it to any of `queues` has settled (resolved or
   * rejected), and resolves or rejects as it does; a change handed in after it to any of them waits for
   * it. Changes of other queues do not wait for it. A change must not wait for another change of one of
   * its queues (it would wait for itself).
   */
  run<T>(queues: ChangeQueue | readonly ChangeQueue[], change: () => T | Promise<T>): Promise<T> {
    const names = typeof queues === "string" ? [queues] : [...new Set(queues)];
    const before = names.map((q) => this.tails.get(q)).filter((t) => t !== undefined);
    const result = (before.length === 0 ? Promise.resolve() : before.length === 1 ? before[0]! : Promise.all(before)).then(change);
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    for (const q of names) this.tails.set(q, settled);
    // An account's queue goes once idle (one per account ever changed would stay otherwise).
    void settled.then(() => {
      for (const q of names) if (this.tails.get(q) === settled) this.tails.delete(q);
    });
    return result;
  }
}
