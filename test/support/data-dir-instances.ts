/**
 * The harness of the e2e tests that run real `switchyard start` processes (test/e2e/data-dir-claim,
 * instance-lock, stop-command, lifecycle and reload .test.ts): a fake upstream for the file's tests,
 * instances on data directories the tests name or on scratch ones, with the file's config, and after the
 * file every instance still running stopped (together: one at a time, at load, a stop can take seconds
 * each) and every scratch directory removed.
 */
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "./fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "./instance.ts";

/** The default config: one OpenAI account at the fake upstream `fake` (its key from FAKE_KEY). */
const OPENAI_YAML = (fake: string) => `
providers:
  - id: oai
    kind: openai
    base_url: "${fake}/v1"
accounts:
  - { id: oai-1, provider: oai, api_key: "env:FAKE_KEY" }
`;

/** How a file's instances are configured (see {@link dataDirInstances}). */
export interface DataDirOptions {
  /**
   * The config file of every instance, given the fake upstream's URL (http://127.0.0.1:PORT, no path);
   * its account keys should read `env:FAKE_KEY`. Default: one OpenAI account `oai-1` of provider `oai`.
   */
  yaml?: (fakeUrl: string) => string;
}

/** What one {@link DataDirInstances.start} gives that instance beside the file's config. */
export interface StartMore {
  /** Environment variables beside FAKE_KEY (PATH and HOME, the data directory, are always set). */
  env?: Record<string, string>;
  /** The whole config file instead of the file's (e.g. the file's with keys added). */
  yaml?: string;
}

/** What {@link dataDirInstances} gives a test file. */
export interface DataDirInstances {
  /** The fake upstream the instances call (its url, enqueue, requests); there once the file's beforeAll has run. */
  readonly fake: FakeUpstream;
  /** A new scratch directory `switchyard-<prefix>-XXXX` under the system's tmpdir, removed after the file. */
  scratch(prefix: string): string;
  /**
   * Starts `switchyard start` on `dataDir` (default: a new scratch directory `switchyard-proc-XXXX`) with
   * the file's config, or `more.yaml`; 90 s to listen; rejects with the output when it did not start.
   */
  start(dataDir?: string, more?: StartMore): Promise<Instance>;
}

/**
 * Registers the file's beforeAll/afterAll; `fakeKey` is the account key the instances send upstream
 * (their FAKE_KEY), `opts.yaml` their config.
 */
export function dataDirInstances(fakeKey: string, opts: DataDirOptions = {}): DataDirInstances {
  const yamlOf = opts.yaml ?? OPENAI_YAML;
  let fake: FakeUpstream;
  const started: Instance[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    fake = await startFakeUpstream();
  });
  afterAll(async () => {
    await Promise.all(started.map((i) => stopInstance(i)));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await fake?.stop();
  }, 30_000);
  const scratch = (prefix: string): string => {
    const d = mkdtempSync(join(tmpdir(), `switchyard-${prefix}-`));
    dirs.push(d);
    return d;
  };
  return {
    get fake() {
      return fake;
    },
    scratch,
    async start(dataDir = scratch("proc"), more = {}) {
      const i = await startInstance({ yaml: more.yaml ?? yamlOf(fake.url), env: { FAKE_KEY: fakeKey, ...more.env }, dataDir, timeoutMs: 90_000 });
      started.push(i);
      return i;
    },
  };
}

/** The lock's first line: the pid of the instance that wrote it (a boot id on Linux and a nonce follow). */
export const lockPid = (dataDir: string): number => Number(readFileSync(join(dataDir, "instance.lock"), "utf8").split("\n")[0]);

/** A pid no process has any more (a child that has already exited): another container's pid as this host sees it. */
export async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}
