/**
 * The admin API's configuration changes, one at a time per kind of object on an instance: a create or
 * update of a combo, an alias or a setting (kind `routing`), of an account (`accounts`: a login or import,
 * a removal, disable, enable) or a client key's create and its limits and tag (`keys`) checks the state
 * in memory (a name taken, one that differs only in case or reads the same after Unicode NFC, the
 * objects a change would break) and then writes. Run through one {@link ConfigWriter}, each change's
 * check sees every earlier change of its kind written and re-read: two creates of `Fast` and `fast` at
 * once were both answered 201 while each checked memory before the other's write was re-read (session
 * 44's tryout). Instances sharing a PostgreSQL store do not share these queues: there the store's own
 * check-and-insert decides (src/store/postgres/routing-objects.ts, keys.ts).
 *
 * One queue per kind, not one for all: a change that waits (on PostgreSQL a create waits up to 10 s for
 * another instance's lock on its name, then answers 503) holds back only the changes of its own kind,
 * whose checks read what it writes. A client key's revoke, disable, enable and rotate check no name and
 * go through no queue (src/admin/admin-api.ts): a leaked key is revoked at once, whatever else is under
 * way (with a single queue a revoke was answered after 9.7 s behind a combo create waiting on another
 * instance's name lock).
 *
 * Only the check and the write run inside: a request's body is read before (a slow client does not
 * hold the others back).
 */

/** The kinds of object whose changes are checked against each other: `routing` = combos, aliases and settings. */
export type ChangeKind = "keys" | "routing" | "accounts";

/** One queue of changes per {@link ChangeKind} (see the module comment). */
export class ConfigWriter {
  private readonly tails = new Map<ChangeKind, Promise<unknown>>();

  /**
   * Runs `change` once every change of the same `kind` handed in before it has settled (resolved or
   * rejected), and resolves or rejects as it does. Changes of other kinds do not wait for it. A change
   * must not wait for another change of the same kind (it would wait for itself).
   */
  run<T>(kind: ChangeKind, change: () => T | Promise<T>): Promise<T> {
    const result = (this.tails.get(kind) ?? Promise.resolve()).then(change);
    this.tails.set(
      kind,
      result.then(
        () => undefined,
        () => undefined,
      ),
    );
    return result;
  }
}
