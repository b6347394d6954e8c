/**
 * Two switchyard instances sharing one fresh PostgreSQL database (SPEC D-2), with a fake upstream and a
 * webhook receiver for their alerts: what the multi-instance alert and budget tests all start from. And,
 * for the tests of what the instances share through the database (test/limits/shared-*), two stores
 * opened on one such database ({@link twoStoresOnPostgres}).
 */
import { afterAll, beforeAll } from "bun:test";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import type { Store } from "../../src/store/types.ts";
import { startFakeUpstream, type FakeUpstream } from "./fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "./instance.ts";
import { startPostgres, type TestPostgres } from "./postgres.ts";
import { webhookReceiver, type WebhookReceiver, type WebhookReceiverOptions } from "./webhook-receiver.ts";

/** What {@link startTwoInstancesOnPostgres} started; `stop()` stops all of it (instances first). */
export interface TwoInstancesOnPostgres {
  pg: TestPostgres;
  /** The database both instances use (`--database`). */
  dbUrl: string;
  upstream: FakeUpstream;
  hook: WebhookReceiver;
  a: Instance;
  b: Instance;
  stop(): Promise<void>;
}

/** How to start them. */
export interface TwoInstancesOptions {
  /** The database's name (one per test file). */
  database: string;
  /** The config both instances get, made once the upstream and the receiver listen. */
  yaml: (upstreamUrl: string, hookUrl: string) => string;
  /** Environment of both instances (the secrets `env:` names in the config). */
  env?: Record<string, string>;
  /** How the receiver answers (default 204 to everything). */
  hook?: WebhookReceiverOptions<any>;
  /** Set on the upstream before the instances start (else the test sets `upstream.handle` itself). */
  handle?: Parameters<FakeUpstream["handle"]>[0];
}

/**
 * Starts PostgreSQL, a database, the fake upstream, the receiver and two instances at once on that
 * database (90 s each to listen). When a start fails, what did start is stopped before the error is
 * thrown, so a failed `beforeAll` leaves no process behind.
 */
export async function startTwoInstancesOnPostgres(opts: TwoInstancesOptions): Promise<TwoInstancesOnPostgres> {
  const started: Partial<TwoInstancesOnPostgres> = {};
  const stop = async () => {
    await Promise.all([stopInstance(started.a), stopInstance(started.b)]);
    await started.upstream?.stop();
    started.hook?.stop();
    await started.pg?.destroy();
  };
  try {
    started.pg = await startPostgres();
    started.dbUrl = await started.pg.createDatabase(opts.database);
    started.hook = webhookReceiver(opts.hook);
    started.upstream = await startFakeUpstream();
    if (opts.handle) started.upstream.handle(opts.handle);
    const yaml = opts.yaml(started.upstream.url, started.hook.url);
    const start = () => startInstance({ yaml, env: opts.env, args: ["--database", started.dbUrl!], timeoutMs: 90_000 });
    const [a, b] = await Promise.allSettled([start(), start()]);
    if (a.status === "fulfilled") started.a = a.value;
    if (b.status === "fulfilled") started.b = b.value;
    if (a.status === "rejected") throw a.reason;
    if (b.status === "rejected") throw b.reason;
  } catch (e) {
    await stop();
    throw e;
  }
  return { ...(started as TwoInstancesOnPostgres), stop };
}

/**
 * Registers a test file's two PostgreSQL stores, two instances' view of one fresh database: in
 * `beforeAll` (120 s: initdb on a loaded machine) a throwaway server is started, database `database`
 * made on it and two stores opened there (`onError` ignored); `opened(a, b, pg)` receives them (and
 * the server, for tests that make more databases). In `afterAll`, `closing()` first (e.g. to close what
 * the test built on the stores), then both stores are closed and the server destroyed.
 */
export function twoStoresOnPostgres(database: string, opened: (a: Store, b: Store, pg: TestPostgres) => void, closing?: () => Promise<void>): void {
  let pg: TestPostgres | undefined;
  let a: Store | undefined;
  let b: Store | undefined;
  beforeAll(async () => {
    pg = await startPostgres();
    const url = await pg.createDatabase(database);
    a = await openPostgresStore({ url, onError: () => {} });
    b = await openPostgresStore({ url, onError: () => {} });
    opened(a, b, pg);
  }, 120_000);
  afterAll(async () => {
    await closing?.();
    await a?.close();
    await b?.close();
    await pg?.destroy();
  });
}
