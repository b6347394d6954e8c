/**
 * `switchyard stop` against a real `switchyard start` process (SPEC 2.2, D-3): it finds the instance of
 * the data directory, stops it gracefully and waits until it has exited; nothing running is said (exit
 * 0); a stop that outlasts --timeout says so and leaves the instance stopping (exit 1), or kills it with
 * --force; a pid that is not the holder of the data directory's lock is never signalled.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dataDirInstances } from "../support/data-dir-instances.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { SOURCE_CLI, type Instance } from "../support/instance.ts";
import { accepts } from "../support/port-accepts.ts";

const instances = dataDirInstances("fake-upstream-key-stop", {
  yaml: (fake) => `
providers:
  - id: anth
    kind: anthropic
    base_url: "${fake}"
accounts:
  - { id: anth-1, provider: anth, api_key: "env:FAKE_KEY" }
`,
});

/** `switchyard stop ARGS… --data-dir DIR` from source, run to its end without blocking this process (the fake upstream serves meanwhile). */
async function stop(dataDir: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn([...SOURCE_CLI, "stop", ...args, "--data-dir", dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir }, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out: out.trim(), err: err.trim() };
}

/** Starts a slow stream through `inst` whose body waits after its first piece until the returned `resume` is called. */
async function heldStream(inst: Instance): Promise<{ resume: () => void; rest: () => Promise<string> }> {
  const sse = simpleReply("anthropic-messages", { text: "one two three four", model: "claude-slow" }, true).sse!;
  const first = sse.indexOf("\n\n", sse.indexOf("text_delta")) + 2;
  let resume!: () => void;
  instances.fake.enqueue({ sse, split_at: [first], resume_after_first: new Promise<void>((r) => (resume = r)) });
  const res = await fetch(`${inst.url}/v1/messages`, {
    method: "POST",
    body: JSON.stringify({ model: "anth/claude-slow", max_tokens: 100, stream: true, messages: [{ role: "user", content: "count" }] }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  await reader.read();
  const rest = async () => {
    let got = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return got;
      got += new TextDecoder().decode(value);
    }
  };
  return { resume, rest };
}

describe("switchyard stop", () => {
  test("stops the data directory's instance and waits until it has exited: one line, exit 0; instance.json gone, the port refuses", async () => {
    const inst = await instances.start();
    const { pid, url } = inst.instance();
    const r = await stop(inst.dataDir);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
    expect(r.out).toMatch(new RegExp(`^stopped switchyard \\(pid ${pid}, ${url.replace(/[.]/g, "\\.")}, data directory ${inst.dataDir}\\) in \\d+\\.\\d s \\(exit code 0\\)$`));
    // it has exited by the time stop returns: its exit code is there at once, the graceful stop's 0
    expect(await Promise.race([inst.exited, Bun.sleep(2000).then(() => "still running")])).toBe(0);
    expect(inst.stderr.some((l) => l.includes('"shutting down"') && l.includes('"SIGTERM"'))).toBe(true);
    expect(existsSync(join(inst.dataDir, "instance.json"))).toBe(false);
    expect(await accepts(url)).toBe(false);
    // and again: nothing running now
    const again = await stop(inst.dataDir);
    expect(again).toEqual({ code: 0, out: `no switchyard instance is running with the data directory ${inst.dataDir}; nothing to stop`, err: "" });
  }, 60_000);

  test("nothing running: says so, exit 0; a stale instance.json (a crash) is named, and nothing is signalled", async () => {
    const empty = instances.scratch("stop");
    expect(await stop(empty)).toEqual({ code: 0, out: `no switchyard instance is running with the data directory ${empty}; nothing to stop`, err: "" });
    // instance.json and instance.lock left by a crashed instance whose pid is now this test's own: not signalled
    writeFileSync(join(empty, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:9", pid: process.pid, adminToken: "x", nonce: "0".repeat(32) }));
    writeFileSync(join(empty, "instance.lock"), `${process.pid}\n${"1".repeat(32)}\n`);
    const stale = await stop(empty);
    expect(stale.code).toBe(0);
    expect(stale.out).toBe(`no switchyard instance is running with the data directory ${empty}; nothing to stop (its ${join(empty, "instance.json")} was left by an instance that did not stop cleanly: the next start takes it over)`);
  });

  test("an instance.json naming another pid than the lock's holder: nothing is signalled, exit 1", async () => {
    const inst = await instances.start();
    const file = join(inst.dataDir, "instance.json");
    const real = readFileSync(file, "utf8");
    const { pid } = JSON.parse(real) as { pid: number };
    writeFileSync(file, JSON.stringify({ ...JSON.parse(real), pid: process.pid }));
    const r = await stop(inst.dataDir);
    writeFileSync(file, real);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`not signalling anything: ${join(inst.dataDir, "instance.lock")} is held by pid ${pid} but ${file} names pid ${process.pid} (another start is under way, or the file is not this instance's); run switchyard stop again in a moment`);
    expect(inst.proc.exitCode).toBeNull();
    expect(await accepts(inst.url)).toBe(true);
  }, 60_000);

  test("--timeout runs out while a stream is in flight: says so, exit 1, the instance goes on stopping and the stream finishes", async () => {
    const inst = await instances.start();
    const { pid } = inst.instance();
    const { resume, rest } = await heldStream(inst);
    const r = await stop(inst.dataDir, "--timeout", "1");
    expect(r.code).toBe(1);
    expect(r.err).toStartWith(`switchyard (pid ${pid}, ${inst.url}, data directory ${inst.dataDir}) has not exited 1 s after SIGTERM`);
    expect(r.err).toContain("switchyard stop again waits for it without signalling it again");
    expect(r.err).toContain("--force");
    expect(inst.proc.exitCode).toBeNull(); // not killed
    // following that advice: the second stop only waits (a second SIGTERM would end the grace period and cut the stream)
    const second = stop(inst.dataDir, "--timeout", "30");
    await Bun.sleep(1500);
    expect(inst.proc.exitCode).toBeNull();
    resume();
    expect(await rest()).toContain("message_stop");
    const r2 = await second;
    expect({ code: r2.code, err: r2.err }).toEqual({ code: 0, err: "" });
    const lines = r2.out.split("\n");
    expect(lines[0]).toMatch(/^switchyard \(pid \d+, .*\) is stopping already \(its stop began \d+\.\d s ago\): waiting for it to exit, without signalling it again/);
    expect(lines[1]).toStartWith(`stopped switchyard (pid ${pid}`);
    expect(lines[1]).toEndWith("(exit code 0)");
    expect(await inst.exited).toBe(0);
    expect(inst.stderr.filter((l) => l.includes("second SIGTERM"))).toEqual([]);
  }, 60_000);

  test("a second SIGTERM ends the grace period while stop waits: the instance's exit code 143 is said as a failure, exit 1", async () => {
    const inst = await instances.start();
    const { pid } = inst.instance();
    const { resume, rest } = await heldStream(inst);
    const r = stop(inst.dataDir, "--timeout", "30");
    // the instance has begun its stop (instance.json says so) and is held by the stream: a supervisor's second SIGTERM
    for (let i = 0; i < 100 && !readFileSync(join(inst.dataDir, "instance.json"), "utf8").includes('"stopping"'); i++) await Bun.sleep(50);
    inst.proc.kill("SIGTERM");
    const got = await r;
    resume();
    expect(await rest()).toContain("The gateway is shutting down"); // the stream ended with its in-band error
    expect(await inst.exited).toBe(143);
    expect(got.code).toBe(1);
    expect(got.out).toBe("");
    expect(got.err).toMatch(new RegExp(`^stopped switchyard \\(pid ${pid}, .*\\) in \\d+\\.\\d s, but it failed: exit code 143 \\(a second SIGTERM ended its shutdown grace period early: the requests still open then were ended`));
  }, 60_000);

  test("an instance killed while stop waits leaves no exit status: said, not guessed; an earlier instance's file (removed at start, or of the same pid but another start) is never read as its own", async () => {
    const dir = instances.scratch("stop");
    const file = join(dir, "last-exit.json");
    writeFileSync(file, JSON.stringify({ pid: 1, nonce: "0".repeat(32), exitCode: 1, time: 1, why: "an earlier instance's" }));
    const inst = await instances.start(dir);
    expect(existsSync(file)).toBe(false); // the start removed the previous instance's
    const { pid } = inst.instance();
    // one its pid had in an earlier start (another container's pid 1, say): its nonce is not this start's
    writeFileSync(file, JSON.stringify({ pid, nonce: "0".repeat(32), exitCode: 1, time: 1, why: "an earlier start's" }));
    const { resume } = await heldStream(inst);
    const r = stop(dir, "--timeout", "30");
    for (let i = 0; i < 100 && !readFileSync(join(dir, "instance.json"), "utf8").includes('"stopping"'); i++) await Bun.sleep(50);
    inst.proc.kill("SIGKILL");
    const got = await r;
    resume();
    expect({ code: got.code, err: got.err }).toEqual({ code: 0, err: "" });
    expect(got.out).toMatch(new RegExp(`^stopped switchyard \\(pid ${pid}, .*\\) in \\d+\\.\\d s; its exit code is not known: it left no ${file.replace(/[.]/g, "\\.")} \\(an instance killed or crashed leaves none`));
  }, 60_000);

  test("--force kills the instance when --timeout runs out: exit 1, said", async () => {
    const inst = await instances.start();
    const { pid } = inst.instance();
    const { resume } = await heldStream(inst);
    const r = await stop(inst.dataDir, "--timeout", "1", "--force");
    resume();
    expect(r.code).toBe(1);
    expect(r.err).toStartWith(`switchyard (pid ${pid}, ${inst.url}, data directory ${inst.dataDir}) had not exited 1 s after SIGTERM: killed it (SIGKILL)`);
    await inst.exited;
    expect(inst.proc.signalCode).toBe("SIGKILL");
  }, 60_000);

  test("an instance.json (or a lock file without a nonce) of an earlier version naming a live process, no lock held: not signalled, exit 1, as a start refuses it", async () => {
    const dir = instances.scratch("stop");
    const other = Bun.spawn(["sleep", "60"]);
    try {
      writeFileSync(join(dir, "instance.json"), JSON.stringify({ url: "http://127.0.0.1:9", pid: other.pid, adminToken: "x" }));
      const r = await stop(dir);
      expect(r.code).toBe(1);
      expect(r.err).toStartWith(`an instance of an earlier switchyard version (pid ${other.pid}, http://127.0.0.1:9) may be running with the data directory ${dir}: its ${join(dir, "instance.json")} names that live process`);
      expect(r.err).toContain(`remove ${join(dir, "instance.json")}`);
      // the version that locked by pid alone: its lock file holds the pid and no nonce, and no flock
      writeFileSync(join(dir, "instance.lock"), `${other.pid}\n`);
      const r2 = await stop(dir);
      expect(r2.code).toBe(1);
      expect(r2.err).toContain(`its lock file ${join(dir, "instance.lock")} names that live process`);
      expect(other.exitCode).toBeNull(); // not signalled
    } finally {
      other.kill();
    }
  });

  const unshare = spawnSync("unshare", ["-Urpf", "--mount-proc", "true"]).status === 0;
  if (!unshare) console.warn("stop-command.test.ts: unshare -Urpf --mount-proc is not available here (no user namespaces): the PID-namespace test is skipped");
  test.skipIf(!unshare)("run in another PID namespace, where /proc/locks does not list the instance's lock: refuses (exit 1), signals nothing, the instance runs on", async () => {
    const inst = await instances.start();
    const p = Bun.spawn(["unshare", "-Urpf", "--mount-proc", ...SOURCE_CLI, "stop", "--data-dir", inst.dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: inst.dataDir }, stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
    expect({ code, out: out.trim(), err: err.trim() }).toEqual({
      code: 1,
      out: "",
      err: `not signalling anything: ${join(inst.dataDir, "instance.lock")} is held by a process this one cannot see (an instance in another container or PID namespace); stop it there (its supervisor, or switchyard stop run in that container)`,
    });
    await Bun.sleep(300);
    expect(inst.proc.exitCode).toBeNull();
    expect(await accepts(inst.url)).toBe(true);
  }, 60_000);
});
