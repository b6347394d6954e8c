/**
 * The statements one bounded change sends, so that they can be stopped when its caller stops waiting
 * (PgContext.change). Bun's `Query.cancel()` (Bun 1.4): a query not sent yet never runs and rejects
 * with `ERR_POSTGRES_QUERY_CANCELLED`; a running one gets a PostgreSQL cancel request, on a second
 * connection, and rejects with the server's error (`errno` "57014": the statement, and a transaction
 * it runs in, rolled back) or resolves if it ended first; a query that resolved already is left alone.
 * Bun does not send the server a cancel for a query pipelined with another one on its connection (it
 * rejects at once, the server may still run it): PgContext.change runs its statements on a reserved
 * connection, one after the other, so that never happens to them.
 */
import type { SQL } from "bun";

/** What {@link trackStatements} returns: the client to hand to the change, and the stop for its statements. */
export interface TrackedStatements {
  /** `sql` itself for every use; each query made through it (or a transaction or savepoint it opens) is remembered. */
  readonly sql: SQL;
  /**
   * Cancels every remembered query (running: a cancel request to the server; not sent: never sent), and
   * every query made through the client from now on as it is made (a transaction's callback that goes on
   * after its statement answered). Never throws.
   */
  cancel(): void;
}

/** A query made with a tagged template (`sql\`…\``), `unsafe` or `file`; a helper (`sql(values)`) is not one. */
interface Cancellable {
  cancel(): unknown;
}

function isTemplate(args: unknown[]): boolean {
  return Array.isArray(args[0]) && Object.hasOwn(args[0], "raw");
}

/**
 * Wraps `sql` (the pool, a reserved connection or a transaction's client) so that the queries made
 * through it, and through the client of every transaction (`begin`, `transaction`) and savepoint it
 * opens, can be cancelled at once. Nothing else changes: calls and properties go to `sql`.
 */
export function trackStatements(sql: SQL): TrackedStatements {
  const made: Cancellable[] = [];
  let cancelled = false;
  const stop = (q: Cancellable): void => {
    try {
      q.cancel();
    } catch {
      // settled or closed: nothing to stop
    }
  };
  const remember = (q: unknown): unknown => {
    const c = q as Partial<Cancellable> | null | undefined;
    if (c && typeof c.cancel === "function") {
      made.push(c as Cancellable);
      if (cancelled) stop(c as Cancellable);
    }
    return q;
  };
  const wrap = (client: SQL): SQL =>
    new Proxy(client, {
      apply(target, _this, args: unknown[]) {
        const out = Reflect.apply(target as unknown as (...a: unknown[]) => unknown, target, args);
        return isTemplate(args) ? remember(out) : out;
      },
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== "function") return value;
        const fn = value as (...a: unknown[]) => unknown;
        if (prop === "unsafe" || prop === "file") return (...a: unknown[]) => remember(fn.apply(target, a));
        if (prop === "begin" || prop === "transaction" || prop === "savepoint") {
          // the callback (the last argument) gets its transaction's client wrapped too
          return (...a: unknown[]) => {
            const last = a.length - 1;
            const cb = a[last];
            if (typeof cb === "function") a[last] = (tx: SQL) => (cb as (tx: SQL) => unknown)(wrap(tx));
            return fn.apply(target, a);
          };
        }
        return fn.bind(target);
      },
    });
  return {
    sql: wrap(sql),
    cancel() {
      cancelled = true;
      for (const q of made) stop(q);
    },
  };
}
