/**
 * The admin API's configuration changes, one at a time on an instance: a create or update of a combo,
 * an alias, a setting, an account (a login or import, disable, enable) or a client key (create, limits
 * and tag, rotate, disable, enable, revoke) checks the state in memory (a name taken, one that differs
 * only in case or reads the same after Unicode NFC, the objects a change would break) and then writes.
 * Run through one {@link ConfigWriter}, each change's check sees every earlier change written and
 * re-read: two creates of `Fast` and `fast` at once were both answered 201 while each checked memory
 * before the other's write was re-read (session 44's tryout). Instances sharing a PostgreSQL store do
 * not share this queue: there the store's own check-and-insert decides (src/store/postgres/routing-objects.ts).
 *
 * Only the check and the write run inside: a request's body is read before (a slow client does not
 * hold the others back).
 */
export class ConfigWriter {
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * Runs `change` once every change handed in before it has settled (resolved or rejected), and
   * resolves or rejects as it does. A change must not wait for another change of the same writer
   * (it would wait for itself).
   */
  run<T>(change: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(change);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
