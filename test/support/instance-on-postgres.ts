/**
 * A describe block's switchyard on PostgreSQL (the "on PostgreSQL" half of a test written for both
 * stores): a throwaway PostgreSQL server, a fake upstream and one instance started on a fresh database
 * there.
 */
import { afterAll, beforeAll } from "bun:test";
import { startFakeUpstream, type FakeUpstream } from "./fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "./instance.ts";
import { startPostgres, type TestPostgres } from "./postgres.ts";

/** What {@link instanceOnPostgres} starts. */
export interface InstanceOnPostgresOptions {
  /** The database's name on the throwaway server. */
  database: string;
  /** The instance's config YAML, given the fake upstream's URL (no `/v1`). */
  yaml: (upstreamUrl: string) => string;
  /** The instance's environment (added to startInstance's minimal one). */
  env: Record<string, string>;
  /** Sets the upstream's replies before the instance starts (none: the fake's default). */
  answer?: (upstream: FakeUpstream) => void;
}

/**
 * Call inside a describe block: its beforeAll (up to 180 s) starts PostgreSQL, creates the database,
 * starts the fake upstream and then the instance (`--database`, 90 s to listen); its afterAll (up to
 * 60 s) stops the instance, the upstream and the server. Read `.instance` and `.upstream` in the tests
 * (undefined before the beforeAll ran).
 */
export function instanceOnPostgres(opts: InstanceOnPostgresOptions): { readonly instance: Instance; readonly upstream: FakeUpstream } {
  let pg: TestPostgres | undefined;
  let upstream: FakeUpstream | undefined;
  let instance: Instance | undefined;
  beforeAll(async () => {
    pg = await startPostgres();
    const dbUrl = await pg.createDatabase(opts.database);
    upstream = await startFakeUpstream();
    opts.answer?.(upstream);
    instance = await startInstance({ yaml: opts.yaml(upstream.url), env: opts.env, args: ["--database", dbUrl], timeoutMs: 90_000 });
  }, 180_000);
  afterAll(async () => {
    await stopInstance(instance);
    await upstream?.stop();
    await pg?.destroy();
  }, 60_000);
  return {
    get instance() {
      return instance!;
    },
    get upstream() {
      return upstream!;
    },
  };
}
