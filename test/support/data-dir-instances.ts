/**
 * The harness of the data directory tests (test/e2e/data-dir-claim.test.ts, instance-lock.test.ts): a
 * fake upstream for the file's tests, real `switchyard start` processes on data directories the tests
 * name, and after the file every instance still running stopped (together: one at a time, at load, a
 * stop can take seconds each) and every scratch directory removed.
 */
import { afterAll, beforeAll } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "./fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "./instance.ts";

/** A config of one OpenAI account at `fake` (its key from FAKE_KEY). */
const YAML = (fake: string) => `
providers:
  - id: oai
    kind: openai
    base_url: "${fake}/v1"
accounts:
  - { id: oai-1, provider: oai, api_key: "env:FAKE_KEY" }
`;

/** What {@link dataDirInstances} gives a test file. */
export interface DataDirInstances {
  /** A new scratch directory `switchyard-<prefix>-XXXX` under the system's tmpdir, removed after the file. */
  scratch(prefix: string): string;
  /** Starts `switchyard start` on `dataDir` (90 s to listen); rejects with the output when it did not start. */
  start(dataDir: string): Promise<Instance>;
}

/** Registers the file's beforeAll/afterAll; `fakeKey` is the account key the instances send upstream. */
export function dataDirInstances(fakeKey: string): DataDirInstances {
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
  return {
    scratch(prefix) {
      const d = mkdtempSync(join(tmpdir(), `switchyard-${prefix}-`));
      dirs.push(d);
      return d;
    },
    async start(dataDir) {
      const i = await startInstance({ yaml: YAML(fake.url), env: { FAKE_KEY: fakeKey }, dataDir, timeoutMs: 90_000 });
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
